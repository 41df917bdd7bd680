#!/usr/bin/env bash
# Peers side by side (docs/performance.md): bakeoff and peer load clients (the aiohttp floor,
# GuideLLM, AIPerf) against the built-in loopback target, each client pinned to one core, the same
# closed-loop workload for all; prints JSON (streamed tokens, wall, tokens/s, client CPU seconds,
# CPU s per 1,000 tokens, ratios to bakeoff).
#
#   bench/peers/run.sh                                   # c = 32 and 128, 1,000 requests x 256 tokens
#   bench/peers/run.sh --concurrency 32 --requests 500   # any bench/peers/peers.py option
#   bench/peers/run.sh --repeat 3 --guidellm-one-worker  # median of 3; GuideLLM also with 1 worker
#   bench/peers/run.sh --download-wheels DIR             # fill a wheelhouse for a host without network
#
# Environment:
#   BAKEOFF_BIN=path   bakeoff binary (default target/release/bakeoff, built if missing)
#   TARGET_BIN=path    harness-bench binary that serves the target (default target/release/harness-bench)
#   PEERS_WHEELHOUSE=DIR   install the Python clients from DIR only (pip --no-index --find-links)
#   PEERS_SKIP_GUIDELLM=1  leave GuideLLM out
#   PEERS_SKIP_AIPERF=1    leave AIPerf out
#   PEERS_AIPERF_TOKENIZER=DIR  the tokenizer AIPerf counts tokens with (tokenizer.json and
#                      tokenizer_config.json; default $BAKEOFF_CACHE/models/SmolLM2-135M-Instruct-hf,
#                      which scripts/provision.sh vllm writes)
#   PYTHON=python3     interpreter the client venvs are made from (its torch is reused by GuideLLM)
#   PEERS_WHEELS_PYTHON=3.12   --download-wheels: the Python version the wheels are for
#   BAKEOFF_CACHE      where the venvs live (default ~/.cache/bakeoff)
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
log() { printf '[peers] %s\n' "$*" >&2; }

download_wheels() {
  local dir=$1 py=${PEERS_WHEELS_PYTHON:-3.12}
  local abi="cp${py/./}"
  mkdir -p "$dir"
  local plat=()
  # Ubuntu 24.04 (glibc 2.39) takes every manylinux tag up to 2.39.
  for t in manylinux2014_x86_64 manylinux_2_17_x86_64 manylinux_2_24_x86_64 manylinux_2_27_x86_64 \
    manylinux_2_28_x86_64 manylinux_2_31_x86_64 manylinux_2_34_x86_64 manylinux_2_35_x86_64 manylinux_2_39_x86_64; do
    plat+=(--platform "$t")
  done
  # One pip run per lock: the two pin different versions of a shared package (multidict).
  for lock in "$HERE/requirements-aiohttp.txt" "$HERE/requirements-guidellm.txt" "$HERE/requirements-aiperf.txt"; do
    log "downloading $(basename "$lock") for CPython $py x86_64 into $dir"
    "${PYTHON:-python3}" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --python-version "$py" --implementation cp --abi "$abi" "${plat[@]}" -d "$dir" -r "$lock" >&2
  done
  log "wheelhouse $dir: $(du -sh "$dir" | cut -f1), $(find "$dir" -name '*.whl' | wc -l) wheels, largest $(find "$dir" -name '*.whl' -printf '%s %f\n' | sort -n | tail -1 | awk '{printf "%s (%.1f MB)", $2, $1/1e6}')"
  log "torch is not in it: GuideLLM then uses the torch of \$PYTHON on that host (see bench/peers/install.sh)"
}

if [ "${1:-}" = "--download-wheels" ]; then
  [ -n "${2:-}" ] || { log "usage: $0 --download-wheels DIR"; exit 2; }
  download_wheels "$2"
  exit 0
fi

command -v taskset >/dev/null 2>&1 || { log "error: taskset not found (apt-get install util-linux)"; exit 2; }

build() { # BIN_PATH PACKAGE BIN
  if [ ! -x "$1" ]; then
    log "building $3 (cargo build --release -p $2 --bin $3)"
    (cd "$ROOT" && cargo build --release -p "$2" --bin "$3" >&2)
  fi
}
BAKEOFF_BIN="${BAKEOFF_BIN:-$ROOT/target/release/bakeoff}"
TARGET_BIN="${TARGET_BIN:-$ROOT/target/release/harness-bench}"
build "$BAKEOFF_BIN" bakeoff bakeoff
build "$TARGET_BIN" bakeoff-load harness-bench

ARGS=(--target-bin "$TARGET_BIN" --bakeoff-bin "$BAKEOFF_BIN")
if AIOHTTP_PY="$("$HERE/install.sh" aiohttp)"; then
  ARGS+=(--aiohttp-python "$AIOHTTP_PY")
else
  log "warning: the aiohttp client did not install: running without it"
fi
if [ "${PEERS_SKIP_GUIDELLM:-}" != 1 ]; then
  if GUIDELLM="$("$HERE/install.sh" guidellm)"; then
    ARGS+=(--guidellm "$GUIDELLM")
  else
    log "warning: GuideLLM did not install: running without it"
  fi
fi

if [ "${PEERS_SKIP_AIPERF:-}" != 1 ]; then
  TOKENIZER="${PEERS_AIPERF_TOKENIZER:-${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}/models/SmolLM2-135M-Instruct-hf}"
  if [ ! -f "$TOKENIZER/tokenizer.json" ]; then
    log "warning: no tokenizer.json in $TOKENIZER (scripts/provision.sh vllm writes it, or set PEERS_AIPERF_TOKENIZER=DIR): running without AIPerf"
  elif AIPERF="$("$HERE/install.sh" aiperf)"; then
    ARGS+=(--aiperf "$AIPERF" --aiperf-tokenizer "$TOKENIZER")
  else
    log "warning: AIPerf did not install: running without it"
  fi
fi

# The target on its own core when there is one to spare; the clients on core 0.
if [ "$(nproc)" -ge 2 ]; then
  ARGS+=(--client-core 0 --target-core 1)
else
  log "warning: one core: the target and the client share it"
  ARGS+=(--client-core 0 --target-core 0)
fi

exec python3 "$HERE/peers.py" "${ARGS[@]}" "$@"
