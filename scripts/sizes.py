#!/usr/bin/env python3
"""The house rule on size (docs/architecture.md "Tests", the developers' guide): source files
of at most ~600 lines, functions of at most ~120. This lists what is over.

Method, so a figure can be checked by hand:
- Files: every `*.rs` under `crates/*/src`, all lines counted (code, comments, blanks and
  inline tests alike: what a reader scrolls through).
- Functions: every `fn NAME` item in those files (methods, nested and test functions
  included). Comments, string and char literals are blanked first (so a `{` in a string or a
  comment counts for nothing); from the `fn` keyword the first `{` outside parentheses and
  brackets opens the body (a `;` there instead is a body-less trait item, skipped), and the
  matching `}` closes it. The length is the lines from the `fn` line to that `}`, both
  included (attributes and doc comments above are not counted).

Usage: scripts/sizes.py [--files N] [--fns N] [--crate NAME]...   (defaults 600 and 120)
Exit status 0 always: it measures, it does not judge.
"""

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def blank_literals(text):
    """The text with comments, string and char literals replaced by spaces (newlines kept), so
    that braces and paths are only those of the code."""
    out = []
    i, n = 0, len(text)

    def blank(segment):
        out.append(re.sub(r"[^\n]", " ", segment))

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(text[i:j])
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(text[i:j])
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(text, i)) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            close = '"' + m.group(1)
            j = text.find(close, m.end())
            j = n if j < 0 else j + len(close)
            out.append(text[i : m.end()])
            blank(text[m.end() : j])
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('"')
            blank(text[i + 1 : j])
            out.append('"')
            i = j + 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}', '{') or a lifetime ('a).
            m = re.compile(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'").match(text, i)
            if m:
                out.append("' '" + " " * (m.end() - i - 3))
                i = m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def functions(clean):
    """(name, first line, last line) of each `fn` item with a body in blanked source."""
    line_starts = [0] + [m.end() for m in re.finditer("\n", clean)]

    def line_of(pos):
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    found = []
    for m in FN.finditer(clean):
        depth, j = 0, m.end()
        while j < len(clean):
            ch = clean[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch in "{;":
                break
            j += 1
        if j >= len(clean) or clean[j] == ";":
            continue
        braces, k = 0, j
        while k < len(clean):
            if clean[k] == "{":
                braces += 1
            elif clean[k] == "}":
                braces -= 1
                if braces == 0:
                    break
            k += 1
        found.append((m.group(1), line_of(m.start()), line_of(k)))
    return found


def sources(crates):
    for src in sorted(ROOT.glob("crates/*/src")):
        crate = src.parent.name
        if crates and crate not in crates:
            continue
        for path in sorted(src.rglob("*.rs")):
            yield crate, path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=600, help="file limit in lines")
    parser.add_argument("--fns", type=int, default=120, help="function limit in lines")
    parser.add_argument("--crate", action="append", default=[], help="only this crate")
    args = parser.parse_args()

    long_files, long_fns = [], []
    for _crate, path in sources(set(args.crate)):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT)
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > args.files:
            long_files.append((lines, rel))
        for name, first, last in functions(blank_literals(text)):
            length = last - first + 1
            if length > args.fns:
                long_fns.append((length, f"{rel}:{first}", name))

    print(f"files over {args.files} lines (all lines): {len(long_files)}")
    for lines, rel in sorted(long_files, reverse=True):
        print(f"  {lines:5}  {rel}")
    print(f"functions over {args.fns} lines (fn line to closing brace): {len(long_fns)}")
    for length, where, name in sorted(long_fns, reverse=True):
        print(f"  {length:5}  {name}  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
