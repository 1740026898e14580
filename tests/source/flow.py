#!/usr/bin/env python3
"""The layers' flow, checked by the test command: from each layer's include view
(build/user/view/LAYER, made by user/CMakeLists.txt), a header of every layer it
stands on is found, and a header of every other layer is not. One line per
problem, exit 1 on any.

usage: flow.py CXX SOURCE_DIR BINARY_DIR"""
import pathlib
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
    for p in problems:
        print(p)
    print('%d layers, %d problems' % (len(SEES), len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
