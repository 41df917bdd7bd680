#!/usr/bin/env bash
# Write the test LoRA adapter for the Gemma 3 270M test model (scripts/make-test-lora.py, with
# the pinned gguf package of scripts/install-gguf.sh) once, cached at
#   $BAKEOFF_CACHE/models/gemma-3-270m-test-lora-v1.gguf
# A no-op when it is already there. Needs the test model (scripts/provision.sh model) for its
# tensor shapes. Prints, on stdout, nothing but the adapter's path.
#
# Bump the -vN in the name when make-test-lora.py changes what it writes: the cache is keyed on it.
set -euo pipefail
cd "$(dirname "$0")"
CACHE="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}"
MODEL="$CACHE/models/gemma-3-270m-q4_k_m.gguf"
OUT="$CACHE/models/gemma-3-270m-test-lora-v1.gguf"

log() { printf '[test-lora] %s\n' "$*" >&2; }

if [ -f "$OUT" ]; then
  log "cached at $OUT"
  echo "$OUT"
  exit 0
fi
[ -f "$MODEL" ] || { log "error: the test model is not at $MODEL: run scripts/provision.sh model first"; exit 2; }
PY=$(./install-gguf.sh)
"$PY" make-test-lora.py --base "$MODEL" --out "$OUT" >/dev/null
log "wrote $OUT ($(sha256sum "$OUT" | cut -d' ' -f1))"
echo "$OUT"
