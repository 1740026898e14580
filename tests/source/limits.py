#!/usr/bin/env python3
"""The tree's size limits, checked by the test command: no user-space source over
450 lines, no BPF source over 700, no function over 90 in either, no test source
over 500 lines, no doc in docs/ over 400, README.md at most 250 lines.
A function is counted from its opening brace at column 0 to its closing one (the
project's style puts both there); one line per problem, exit 1 on any."""
import pathlib
import re
import sys

LIMITS = {'user': 450, 'bpf': 700}
FUNCTION_LINES = 90
README_LINES = 250
TEST_LINES = 500
DOC_LINES = 400
NOT_A_FUNCTION = re.compile(r'^(struct|class|union|enum|namespace|extern|typedef)\b|=\s*$|=\s*\{$')


def functions(lines):
    """(name line, length) of every function body that opens and closes at column 0."""
    start = None
    for i, line in enumerate(lines):
        if start is None:
            if line.startswith('{') and i > 0 and not NOT_A_FUNCTION.search(lines[i - 1]):
                start = i
            elif re.match(r'^[A-Za-z_].*\)\s*(const\s*)?(noexcept\s*)?(override\s*)?\{$', line) and \
                    not NOT_A_FUNCTION.search(line):
                start = i
        elif line.startswith('}'):
            head = lines[start - 1] if lines[start].startswith('{') else lines[start]
            yield head.strip(), i - start + 1
            start = None


def main(root):
    problems = []
    for part, limit in LIMITS.items():
        for path in sorted((root / part).rglob('*')):
            if path.suffix not in ('.c', '.h', '.cpp') or not path.is_file():
                continue
            lines = path.read_text(errors='replace').split('\n')
            rel = path.relative_to(root)
            if len(lines) - 1 > limit:
                problems.append(f'{rel}: {len(lines) - 1} lines, over {limit}')
            for head, n in functions(lines):
                if n > FUNCTION_LINES:
                    problems.append(f'{rel}: a function of {n} lines, over {FUNCTION_LINES}: {head[:70]}')
    for path in sorted((root / 'tests').rglob('*')):
        if path.suffix in ('.c', '.h', '.cpp') and path.is_file():
            n = len(path.read_text(errors='replace').split('\n')) - 1
            if n > TEST_LINES:
                problems.append(f'{path.relative_to(root)}: {n} lines, over {TEST_LINES}')
    for path in sorted((root / 'docs').glob('*.md')):
        n = len(path.read_text().split('\n')) - 1
        if n > DOC_LINES:
            problems.append(f'{path.relative_to(root)}: {n} lines, over {DOC_LINES}')
    readme = (root / 'README.md').read_text().split('\n')
    if len(readme) - 1 > README_LINES:
        problems.append(f'README.md: {len(readme) - 1} lines, over {README_LINES}')
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else '.')))
