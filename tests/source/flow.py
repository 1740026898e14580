#!/usr/bin/env python3
"""The layers' flow, checked by the test command: from each layer's include view
(build/user/view/LAYER, made by user/CMakeLists.txt), a header of every layer it
stands on is found, and a header of every other layer is not. Within a layer the
files flow too: no cycle among its files, X.h and X.cpp one file, where X stands
on Y when X.h or X.cpp includes "LAYER/Y.h" or declares a class or struct that
Y.h defines. One line per problem, exit 1 on any.

usage: flow.py CXX SOURCE_DIR BINARY_DIR"""
import pathlib
import re
import subprocess
import sys

# What each layer sees: itself and the layers below it in the flow. Only cli sees
# control: loader, cost and report cannot write to a JVM.
SEES = {
    'util': {'util'},
    'model': {'model', 'util'},
    'jvm': {'jvm', 'model', 'util'},
    'control': {'control', 'jvm', 'model', 'util'},
    'loader': {'loader', 'jvm', 'model', 'util'},
    'cost': {'cost', 'loader', 'jvm', 'model', 'util'},
    'report': {'report', 'cost', 'loader', 'jvm', 'model', 'util'},
    'cli': {'cli', 'report', 'cost', 'loader', 'control', 'jvm', 'model', 'util'},
}


def found(cxx, view, header, extra):
    """Whether the preprocessor finds header, and all it includes, from view."""
    source = '#include "%s"\n' % header
    run = subprocess.run([cxx, '-std=c++17', '-E', '-o', '/dev/null', '-I', str(view)] + extra + ['-x', 'c++', '-'],
                         input=source, capture_output=True, text=True)
    return run.returncode == 0, run.stderr.strip().splitlines()[:1]


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
DECLARED = re.compile(r'^[ \t]*(?:struct|class)[ \t]+(\w+)[ \t]*;', re.M)
DEFINED = re.compile(r'^(?:struct|class)[ \t]+(\w+)\b[^;]*$', re.M)


def layer_graph(layer_dir):
    """The files of a layer (X.h and X.cpp as X) and what each stands on: {X: {Y: why}}."""
    files = sorted(list(layer_dir.glob('*.h')) + list(layer_dir.glob('*.cpp')))
    defined = {}
    for f in files:
        if f.suffix == '.h':
            for name in DEFINED.findall(f.read_text()):
                defined.setdefault(name, f.stem)
    graph = {f.stem: {} for f in files}
    for f in files:
        text = f.read_text()
        for inc in INCLUDE.findall(text):
            parts = inc.split('/')
            if len(parts) == 2 and parts[0] == layer_dir.name and parts[1].endswith('.h'):
                to = parts[1][:-2]
                if to != f.stem and to in graph:
                    graph[f.stem].setdefault(to, '%s includes %s' % (f.name, inc))
        for name in DECLARED.findall(text):
            to = defined.get(name)
            if to and to != f.stem:
                graph[f.stem].setdefault(to, '%s declares %s of %s.h' % (f.name, name, to))
    return graph


def cycles(graph):
    """Each set of nodes that stand on each other (strongly connected, more than one), and a
    shortest cycle through its first node."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(part)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    found = []
    for part in out:
        start = min(part)
        # The shortest way back to start within the set (breadth first).
        came = {start: None}
        queue = [start]
        end = None
        while queue and end is None:
            v = queue.pop(0)
            for w in sorted(graph[v]):
                if w == start:
                    end = v
                    break
                if w in part and w not in came:
                    came[w] = v
                    queue.append(w)
        path = [end]
        while came[path[-1]] is not None:
            path.append(came[path[-1]])
        path.reverse()
        found.append((sorted(part), path + [start]))
    return found


def main():
    cxx, src, build = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    extra = ['-I', str(src / 'bpf'), '-I', str(build / 'user' / 'generated'), '-I', str(build / 'bpf')]
    problems = []
    for layer, sees in SEES.items():
        view = build / 'user' / 'view' / layer
        if not view.is_dir():
            problems.append('%s: no include view (build the project first)' % view)
            continue
        for other in SEES:
            header = min(p.name for p in (src / 'user' / other).glob('*.h'))
            ok, why = found(cxx, view, '%s/%s' % (other, header), extra)
            if ok != (other in sees):
                problems.append('%s sees %s/%s: %s, expected %s %s' % (layer, other, header, ok, other in sees,
                                                                        ' '.join(why)))
    for layer in SEES:
        graph = layer_graph(src / 'user' / layer)
        for part, cycle in cycles(graph):
            why = '; '.join(graph[a][b] for a, b in zip(cycle, cycle[1:]))
            problems.append('%s: %s stand on each other, no file before the others: %s (%s)' %
                            (layer, ', '.join(part), ' -> '.join(cycle), why))
    for p in problems:
        print(p)
    print('%d layers, %d problems' % (len(SEES), len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
