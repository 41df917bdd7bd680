#!/usr/bin/env python3
"""Write a small, real GGUF LoRA adapter for the Gemma 3 270M test model: llama-server loads it
with --lora, and `bakeoff eval adapter` reads it as `adapter-no-op` at scale 0 and `applied` at
scale 1 (docs/suites.md "Adapter check").

Run it with the pinned `gguf` package's interpreter (scripts/install-gguf.sh), or through
scripts/make-test-lora.sh, which does both and caches the result:

    PY=$(scripts/install-gguf.sh)
    "$PY" scripts/make-test-lora.py --base ~/.cache/bakeoff/models/gemma-3-270m-q4_k_m.gguf \
        --out ~/.cache/bakeoff/models/gemma-3-270m-test-lora.gguf

What llama.cpp b11434 requires of an adapter (src/llama-adapter.cpp, llama_adapter_lora_init_impl):
- metadata `general.type = "adapter"`, `adapter.type = "lora"`, `general.architecture` equal to
  the model's (`gemma3`); `adapter.lora.alpha` (f32) sets the scale: alpha * user_scale / rank
  (src/llama-adapter.h get_scale; alpha 0 means the user scale alone);
- tensors named `<model tensor>.lora_a` / `.lora_b`, in pairs, for tensors the model has;
- shapes, in ggml order (ne[0] is the innermost, the input dimension): `a.ne[0] == w.ne[0]`,
  `b.ne[1] == w.ne[1]`, and `a.ne[1] == b.ne[0] == rank` ("lora_a tensor is not transposed"
  otherwise). A numpy array of shape (rows, cols) is written with ne = [cols, rows], so A is
  (rank, in) and B is (out, rank).

The values are drawn from a seeded generator, so the file is the same byte for byte on every
machine, and large enough that at scale 1 the model's first-token distribution moves clearly
(at scale 0 the adapter is loaded but contributes nothing: the no-op the check must catch).
"""
import argparse
import pathlib
import sys

import numpy as np

import gguf

# Attention weights of a few layers: the query, value and output projections.
TARGETS = ("attn_q", "attn_v", "attn_output")
LAYERS = (0, 1, 2, 3)
RANK = 8
SEED = 17


def model_shapes(base: pathlib.Path) -> dict:
    """Tensor name -> ne (ggml order) of the base model, read from its GGUF header."""
    reader = gguf.GGUFReader(str(base))
    arch = reader.fields["general.architecture"].contents()
    if arch != "gemma3":
        sys.exit(f"error: {base} is a {arch!r} model; this adapter is for gemma3 (the Gemma 3 270M test model)")
    return {t.name: [int(d) for d in t.shape] for t in reader.tensors}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", required=True, type=pathlib.Path, help="the base model GGUF (shapes are read from it)")
    p.add_argument("--out", required=True, type=pathlib.Path, help="where to write the adapter GGUF")
    p.add_argument("--strength", type=float, default=0.3,
                   help="size of the low-rank update relative to a unit-norm input (default 0.3: at "
                        "scale 1 the first token's distribution moves clearly, the text stays language)")
    a = p.parse_args()

    shapes = model_shapes(a.base)
    rng = np.random.default_rng(SEED)
    tmp = a.out.with_name(a.out.name + ".partial")
    w = gguf.GGUFWriter(str(tmp), arch="gemma3")
    w.add_type(gguf.GGUFType.ADAPTER)
    w.add_string(gguf.Keys.Adapter.TYPE, "lora")
    # alpha == rank: the effective scale is exactly the scale the server is given.
    w.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(RANK))
    w.add_name("bakeoff test LoRA for Gemma 3 270M")
    for layer in LAYERS:
        for target in TARGETS:
            name = f"blk.{layer}.{target}.weight"
            if name not in shapes:
                sys.exit(f"error: {a.base} has no tensor {name}: not the Gemma 3 270M test model?")
            n_in, n_out = shapes[name][0], shapes[name][1]
            # A maps the input onto `RANK` directions (unit-norm rows); B spreads them over the
            # output with `strength` per direction, so ||B A x|| ~ strength * ||x||.
            lora_a = (rng.standard_normal((RANK, n_in)) / np.sqrt(n_in)).astype(np.float32)
            lora_b = (rng.standard_normal((n_out, RANK)) * a.strength / np.sqrt(RANK)).astype(np.float32)
            w.add_tensor(f"{name}.lora_a", lora_a)
            w.add_tensor(f"{name}.lora_b", lora_b)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    tmp.replace(a.out)
    print(a.out)


if __name__ == "__main__":
    main()
