#!/usr/bin/env bash
# Install the `gguf` Python package (llama.cpp's own GGUF reader and writer, from PyPI, pinned)
# that scripts/make-test-lora.py writes the test LoRA adapter with (issue 17: "the gguf Python
# package from PyPI writes the file").
#
# A virtualenv under $BAKEOFF_CACHE/gguf-<version>-numpy-<version>/ (default ~/.cache/bakeoff); a no-op when it
# is already there. Prints, on stdout, nothing but the path of its `python`, so callers can
# `PY=$(scripts/install-gguf.sh)`.
set -euo pipefail

# Pinned to the gguf-py that ships inside llama.cpp b11434 (gguf-py/pyproject.toml: 0.19.0), the
# engine the tests run: its writer and the engine's loader agree on the format.
GGUF_VERSION=0.19.0
# numpy draws the adapter's seeded values: pinned too, so the file is the same on every machine.
NUMPY_VERSION=2.4.6
CACHE="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}"
VENV="$CACHE/gguf-${GGUF_VERSION}-numpy-${NUMPY_VERSION}"
PYEXE="$VENV/bin/python"

log() { printf '[gguf] %s\n' "$*" >&2; }

# OK marks a finished install: a pip run killed halfway leaves a venv that must not count.
if [ -x "$PYEXE" ] && [ -f "$VENV/INSTALL_OK" ]; then
  log "cached at $VENV"
  echo "$PYEXE"
  exit 0
fi

PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null 2>&1 || { log "error: $PY not found: install Python 3.10+ (apt-get install python3 python3-venv)"; exit 2; }
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  log "error: $("$PY" --version 2>&1) is too old for gguf $GGUF_VERSION: use Python 3.10+ (PYTHON=python3.11 $0)"
  exit 2
fi

rm -rf "$VENV"
mkdir -p "$CACHE"
log "creating virtualenv $VENV ($("$PY" --version 2>&1))"
"$PY" -m venv "$VENV" || { log "error: python venv failed: install python3-venv (apt-get install python3-venv)"; exit 2; }
log "installing gguf==$GGUF_VERSION numpy==$NUMPY_VERSION from PyPI"
"$PYEXE" -m pip install -q --disable-pip-version-check "gguf==${GGUF_VERSION}" "numpy==${NUMPY_VERSION}" >&2
"$PYEXE" -c 'import gguf, numpy' || { log "error: gguf did not import after install"; exit 1; }
touch "$VENV/INSTALL_OK"
log "installed gguf $GGUF_VERSION"
echo "$PYEXE"
