#!/usr/bin/env python3
"""Import circles between the files of each crate: a file that names another file's module,
which names it back (directly or around a longer ring). Modules inside a crate should import
one way, the driver on top (docs/architecture.md).

Method, so a figure can be checked by hand:
- Nodes: the files under `crates/<crate>/src` as modules (`lib.rs`/`main.rs` the root,
  `a.rs` and `a/mod.rs` are `a`, `a/b.rs` is `a::b`). An inline `mod x { … }` belongs to its
  file's node but is the module `super::` and `self::` are read from.
- Edges: comments and literals blanked (scripts/sizes.py), every path that names a module of
  the same crate: `crate::…`, `super::…` (repeated), `self::…`, and a path that starts with a
  child module's name (`attempt::run(…)` in the module that declares `mod attempt;`), in `use`
  trees (groups expanded) and in code alike. The longest prefix that is a module is the target;
  an edge to the file itself is dropped.
- Left out by default (flags bring them back): test code (`#[cfg(test)]` modules, inline or
  files), and re-exports (`pub use …` / `pub(crate) use …`: a facade that re-exports a child
  does not depend on it; the child's users do).
- Circles: strongly connected components (Tarjan) with more than one member.

Usage: scripts/module_circles.py [--crate NAME]... [--with-tests] [--with-reexports] [--edges]
Exit status 0 always: it measures, it does not judge.
"""

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sizes import blank_literals  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
CFG_TEST = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")")
MOD_DECL = re.compile(r"(?:^|[;{}\]\s])(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*([;{])")
USE = re.compile(r"(?:^|[;{}\]\s])((?:pub(?:\([^)]*\))?\s+)?)use\s+([^;]*);")
PATH = re.compile(r"(?<![A-Za-z0-9_:])((?:" + IDENT + r"\s*::\s*)+)")


def module_of(src, path):
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main") and (parts[-1] == "mod" or len(parts) == 1):
        parts = parts[:-1]
    return tuple(parts)


def expand_use(tree):
    """`a::{b, c::{d, e}}` → [['a','b'], ['a','c','d'], ['a','c','e']] (`self` folded; renames
    are removed by the caller)."""
    tree = re.sub(r"\s+", "", tree)

    def split_top(s):
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch == "{"
            depth -= ch == "}"
            cur += ch
        if cur:
            parts.append(cur)
        return parts

    def walk(s):
        if "{" in s:
            head, _, rest = s.partition("{")
            head = [p for p in head.split("::") if p]
            inner = rest[: rest.rfind("}")]
            out = []
            for part in split_top(inner):
                for tail in walk(part):
                    out.append(head + [x for x in tail if x != "self"])
            return out or [head]
        return [[p for p in s.split("::") if p]]

    return walk(tree)


class Crate:
    def __init__(self, src, with_tests):
        self.src = src
        self.files = {}  # module path -> file
        self.test_modules = set()
        self.inline = {}  # inline module path -> owning file module path
        self.children = {}  # module path -> set of child names
        for path in sorted(src.rglob("*.rs")):
            mod = module_of(src, path)
            if mod == () and path.name not in ("lib.rs", "main.rs"):
                continue
            if mod in self.files:
                continue
            self.files[mod] = path
        self.clean = {m: blank_literals(p.read_text(encoding="utf-8")) for m, p in self.files.items()}
        for mod, text in self.clean.items():
            for m in CFG_TEST.finditer(text):
                self.test_modules.add(mod + (m.group(1),))
            for m in MOD_DECL.finditer(text):
                self.children.setdefault(mod, set()).add(m.group(1))
        if not with_tests:
            for mod in list(self.files):
                if any(mod[: i + 1] in self.test_modules for i in range(len(mod))):
                    del self.files[mod]
                    del self.clean[mod]

    def scopes(self, mod, text):
        """(start, end, module path, is test) of each inline module in a file, innermost last."""
        out = []
        test_starts = {m.start(1) for m in CFG_TEST.finditer(text)}

        def scan(start, end, path, test):
            i = start
            while True:
                m = MOD_DECL.search(text, i, end)
                if not m:
                    return
                if m.group(2) == ";":
                    i = m.end()
                    continue
                depth, k = 0, m.end() - 1
                while k < end:
                    if text[k] == "{":
                        depth += 1
                    elif text[k] == "}":
                        depth -= 1
                        if depth == 0:
                            break
                    k += 1
                inner = path + (m.group(1),)
                is_test = test or m.start(1) in test_starts
                out.append((m.end(), k, inner, is_test))
                self.inline[inner] = mod
                self.children.setdefault(path, set()).add(m.group(1))
                scan(m.end(), k, inner, is_test)
                i = k + 1

        scan(0, len(text), mod, False)
        return out

    def node_of(self, segments):
        for n in range(len(segments), -1, -1):
            prefix = tuple(segments[:n])
            if prefix in self.files:
                return prefix
            if prefix in self.inline:
                return self.inline[prefix]
        return None

    def resolve(self, here, segments):
        """The node a path names, read in module `here`; None when it is outside the crate."""
        if not segments:
            return None
        if segments[0] == "crate":
            return self.node_of(segments[1:])
        if segments[0] in ("super", "self"):
            base = list(here)
            while segments and segments[0] in ("super", "self"):
                if segments[0] == "super":
                    if not base:
                        return None
                    base.pop()
                segments = segments[1:]
            return self.node_of(base + list(segments))
        if segments[0] in self.children.get(here, ()):
            return self.node_of(list(here) + list(segments))
        return None

    def edges(self, with_tests, with_reexports):
        edges = {m: set() for m in self.files}
        for mod, text in self.clean.items():
            scopes = self.scopes(mod, text)

            def scope_at(pos):
                best = (mod, False)
                for start, end, path, test in scopes:
                    if start <= pos < end:
                        best = (path, test)
                return best

            skip = []
            for m in USE.finditer(text):
                here, test = scope_at(m.start(2))
                skip.append((m.start(2), m.end(2)))
                if test and not with_tests:
                    continue
                if m.group(1).strip() and not with_reexports:
                    continue
                for segs in expand_use(re.sub(r"\s+as\s+" + IDENT, "", m.group(2))):
                    target = self.resolve(here, segs)
                    if target is not None and target != mod:
                        edges[mod].add(target)
            for m in PATH.finditer(text):
                if any(s <= m.start() < e for s, e in skip):
                    continue
                here, test = scope_at(m.start())
                if test and not with_tests:
                    continue
                segs = [s for s in re.split(r"\s*::\s*", m.group(1)) if s]
                rest = text[m.end() :]
                nxt = re.match(IDENT, rest)
                if nxt:
                    segs.append(nxt.group(0))
                target = self.resolve(here, segs)
                if target is not None and target != mod:
                    edges[mod].add(target)
        return edges


def tarjan(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def name(mod):
    return "::".join(mod) or "(root)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crate", action="append", default=[], help="only this crate")
    parser.add_argument("--with-tests", action="store_true", help="count test code too")
    parser.add_argument("--with-reexports", action="store_true", help="count `pub use` too")
    parser.add_argument("--edges", action="store_true", help="print each circle's edges")
    args = parser.parse_args()

    total = 0
    for src in sorted(ROOT.glob("crates/*/src")):
        crate = src.parent.name
        if args.crate and crate not in args.crate:
            continue
        c = Crate(src, args.with_tests)
        edges = c.edges(args.with_tests, args.with_reexports)
        circles = sorted((s for s in tarjan(edges) if len(s) > 1), key=len, reverse=True)
        total += len(circles)
        for comp in circles:
            members = set(comp)
            print(f"{crate}: {len(comp)} modules: {', '.join(name(m) for m in comp)}")
            if args.edges:
                for v in comp:
                    inside = sorted(w for w in edges[v] if w in members)
                    print(f"    {name(v)} -> {', '.join(name(w) for w in inside)}")
    print(f"circles (strongly connected components of more than one module): {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
