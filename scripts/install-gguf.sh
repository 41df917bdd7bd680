#!/usr/bin/env bash
# Install the `gguf` Python package (llama.cpp's own GGUF reader and writer, from PyPI, pinned)
# that scripts/make-test-lora.py writes the test LoRA adapter with.
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

# The cached-venv steps (the INSTALL_OK mark, the Python check, a fresh venv) are shared.
# shellcheck source=lib/venv.sh
. "$(dirname "$0")/lib/venv.sh"
venv_cached "$VENV" "$PYEXE" && exit 0
venv_python 10 "gguf $GGUF_VERSION"
venv_create "$VENV"
log "installing gguf==$GGUF_VERSION numpy==$NUMPY_VERSION from PyPI"
"$PYEXE" -m pip install -q --disable-pip-version-check "gguf==${GGUF_VERSION}" "numpy==${NUMPY_VERSION}" >&2
"$PYEXE" -c 'import gguf, numpy' || { log "error: gguf did not import after install"; exit 1; }
venv_mark_ok "$VENV"
log "installed gguf $GGUF_VERSION"
echo "$PYEXE"
