#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Formats C sources as the project writes them: clang-format with the
# repository's .clang-format, then gettext's markers written `_("…")` and
# `N_("…")` as gettext's own documentation and GLib write them.  GNU style
# puts a space before every parenthesis and clang-format has no setting that
# spares one macro name, so this pass takes the space out again and moves
# the lines that continue such a call one column left with it.
#
#   format-c.py --check FILE...   lists the files that differ, exit 1
#   format-c.py --fix FILE...     rewrites them
#
# Hand-written: clang-format 14 (Debian 12's) cannot be told to spare one
# macro name (WhitespaceSensitiveMacros leaves the call's arguments
# misaligned), and a formatter of its own would be far more code.
import re
import subprocess
import sys

MARKER = re.compile(r'(?<![A-Za-z0-9_])(N?_) \(')


def paren_depth_change(line, start):
    """Returns (opened - closed) for the parentheses of line[start:], ignoring
    those inside string and character literals and comments."""
    depth = 0
    i = start
    n = len(line)
    while i < n:
        c = line[i]
        if c in '"\'':
            q = c
            i += 1
            while i < n and line[i] != q:
                i += 2 if line[i] == '\\' else 1
        elif line.startswith('/*', i):
            end = line.find('*/', i + 2)
            i = n if end < 0 else end + 1
        elif line.startswith('//', i):
            break
        elif c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
        i += 1
    return depth


def tidy(text):
    """Takes the space out of `_ (` and `N_ (`; a call left open at the end
    of its line takes its continuation lines one column left per space
    removed before its parenthesis."""
    lines = text.split('\n')
    out = []
    shifts = []  # [old column of the call's text, removed, depth left]
    for line in lines:
        indent = len(line) - len(line.lstrip(' '))
        for s in shifts:
            if s[2] > 0 and indent >= s[0] and line.strip():
                line = line[s[1]:] if line[:s[1]].strip() == '' else line
                break
        still = []
        for s in shifts:
            s[2] += paren_depth_change(line, 0)
            if s[2] > 0:
                still.append(s)
        shifts = still
        removed = 0
        new = []
        pos = 0
        for m in MARKER.finditer(line):
            new.append(line[pos:m.end(1)])
            removed += 1
            paren = m.end(0) - 1
            depth = paren_depth_change(line, paren)
            if depth > 0:
                shifts.append([paren + 1, removed, depth])
            pos = m.end(1) + 1
        new.append(line[pos:])
        out.append(''.join(new))
    return '\n'.join(out)


def formatted(path):
    raw = subprocess.run(['clang-format', path], check=True,
                         capture_output=True, text=True).stdout
    return tidy(raw)


def main(argv):
    if len(argv) < 2 or argv[1] not in ('--check', '--fix'):
        print('usage: format-c.py --check|--fix FILE...', file=sys.stderr)
        return 2
    bad = []
    for path in argv[2:]:
        with open(path, encoding='utf-8') as f:
            old = f.read()
        new = formatted(path)
        if new != old:
            if argv[1] == '--fix':
                with open(path, 'w', encoding='utf-8') as f:
                    f.write(new)
            else:
                bad.append(path)
    for path in bad:
        print(path)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
