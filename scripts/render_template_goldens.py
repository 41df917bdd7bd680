#!/usr/bin/env python3
"""Render every chat template fixture with Python jinja2 configured as transformers does, and
write the goldens that bakeoff-text's minijinja renderer must match byte for byte.

transformers (src/transformers/utils/chat_template_utils.py, `_compile_jinja_template`):
  ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                extensions=[AssistantTracker, jinja2.ext.loopcontrols])
  env.filters["tojson"] = json.dumps(x, ensure_ascii=False, indent=indent,
                                     separators=separators, sort_keys=sort_keys)
  env.globals["raise_exception"] raises TemplateError(message)
  env.globals["strftime_now"] = datetime.now().strftime(format)
Here strftime_now formats the fixed "now" of conversation.json so goldens are stable.
A template that raises writes "<template raised: MESSAGE>\n" as its golden, which is how
bakeoff renders a refusal.

Usage: pip install jinja2 && python3 scripts/render_template_goldens.py
"""
import datetime
import json
import pathlib

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates/bakeoff-text/tests/fixtures/templates"


class Raised(Exception):
    pass


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                      separators=separators, sort_keys=sort_keys)


def main():
    conv = json.loads((FIXTURES / "conversation.json").read_text())
    now = datetime.datetime.fromisoformat(conv["now"])

    def raise_exception(message):
        raise Raised(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: now.strftime(fmt)
    for path in sorted(FIXTURES.glob("*.jinja")):
        src = path.read_bytes().decode("utf-8")  # bytes as Rust reads them (CRLF kept)
        try:
            out = env.from_string(src).render(
                messages=conv["messages"], tools=conv["tools"],
                add_generation_prompt=conv["add_generation_prompt"],
                bos_token=conv["bos_token"], eos_token=conv["eos_token"])
        except Raised as e:
            out = f"<template raised: {e}>\n"
        golden = path.with_suffix(".golden.txt")
        golden.write_text(out, newline="")
        print(f"{golden.relative_to(ROOT)}: {len(out)} chars")


if __name__ == "__main__":
    main()
