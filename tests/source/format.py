#!/usr/bin/env python3
"""The tree's format: every C, C++ and header file under version control (but the vendored
vmlinux/) as clang-format lays it out with the tree's .clang-format files. One line per file
that differs, with the command that fixes it; exit 1 on any."""
import pathlib
import subprocess
import sys

SUFFIXES = ('.c', '.h', '.cpp', '.hpp')


def main(clang_format, root):
    listed = subprocess.run(['git', '-C', str(root), 'ls-files', '-z'], capture_output=True, check=False)
    if listed.returncode != 0:
        # A tree outside git (a release tarball): every source file on disk.
        files = [p.relative_to(root).as_posix() for p in root.rglob('*') if p.suffix in SUFFIXES]
    else:
        files = [f for f in listed.stdout.decode().split('\0') if f.endswith(SUFFIXES)]
    files = sorted(f for f in files if not f.startswith(('vmlinux/', 'build/')) and (root / f).is_file())
    if not files:
        print(f'no C or C++ sources under {root}')
        return 1
    bad = []
    for f in files:
        path = root / f
        formatted = subprocess.run([clang_format, '--style=file', str(path)], capture_output=True, check=True)
        if formatted.stdout != path.read_bytes():
            bad.append(f)
    for f in bad:
        print(f'{f}: not as .clang-format lays it out: run clang-format -i {f}')
    print(f'{len(files)} sources checked, {len(bad)} to format')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], pathlib.Path(sys.argv[2]).resolve()))
