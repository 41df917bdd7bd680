#!/usr/bin/env python3
"""The workspace's crate graph from `cargo metadata`, for docs/architecture.md.

Prints the drawing's lines (each bakeoff crate and the bakeoff crates it depends on, normal
dependencies only), the graph's depth (the longest chain of normal dependencies between
workspace crates, counted in edges) and each crate's rebuild fan-out (how many workspace crates
depend on it directly or not, dev-dependencies included: what a change to it rebuilds).

    python3 scripts/crate_graph.py            # run from the repository
"""

import json
import subprocess
import sys
from functools import lru_cache


def metadata():
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--offline"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def graphs(m):
    """(normal, any): crate name -> workspace crates it depends on."""
    members = set(m["workspace_members"])
    name_of = {p["id"]: p["name"] for p in m["packages"] if p["id"] in members}
    normal, every = {}, {}
    for node in m["resolve"]["nodes"]:
        if node["id"] not in members:
            continue
        me = name_of[node["id"]]
        normal[me], every[me] = set(), set()
        for dep in node["deps"]:
            if dep["pkg"] not in members:
                continue
            kinds = {k["kind"] for k in dep["dep_kinds"]}
            every[me].add(name_of[dep["pkg"]])
            if None in kinds or "build" in kinds:
                normal[me].add(name_of[dep["pkg"]])
    return normal, every


def short(name):
    return name.removeprefix("bakeoff-") or name


def main():
    normal, every = graphs(metadata())

    @lru_cache(maxsize=None)
    def depth(c):
        return max((1 + depth(d) for d in normal[c]), default=0)

    def dependents(c):
        seen, todo = set(), [c]
        while todo:
            x = todo.pop()
            for other, deps in every.items():
                if x in deps and other not in seen:
                    seen.add(other)
                    todo.append(other)
        return seen

    order = sorted(normal, key=lambda c: (-depth(c), c))
    width = max(len(c) for c in order)
    print("The drawing (normal dependencies, deepest first):")
    for c in order:
        deps = sorted(normal[c], key=lambda d: (-depth(d), d))
        line = ", ".join(short(d) for d in deps) or "(none)"
        print(f"  {c:<{width}} ({depth(c)}) -> {line}")
    longest = max(order, key=depth)
    chain = [longest]
    while normal[chain[-1]]:
        chain.append(max(normal[chain[-1]], key=depth))
    print(f"\ndepth: {depth(longest)} edges: {' -> '.join(short(c) for c in chain)}")
    print("\nrebuild fan-out (workspace crates that depend on it, dev included):")
    for c in sorted(normal, key=lambda c: (-len(dependents(c)), c)):
        print(f"  {c:<{width}} {len(dependents(c))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
