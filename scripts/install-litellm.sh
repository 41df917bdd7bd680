#!/usr/bin/env bash
# Install the real LiteLLM proxy the gateway tests put in front of a real llama-server seat
# (issue 16 §4: "installed by the test scripts from PyPI, pinned, not mocked").
#
# A virtualenv under $BAKEOFF_CACHE/litellm-<version>/ (default ~/.cache/bakeoff); a no-op
# when it is already there. Prints, on stdout, nothing but the path of the `litellm`
# executable, so callers can `LITELLM=$(scripts/install-litellm.sh)`.
set -euo pipefail

# Pinned: the last patch of a settled minor line, not the newest tag — the proxy's /model/info
# and error-body shapes are what the tests read, and newer litellm[proxy] pins a
# litellm-proxy-extras that the package index may not carry yet (1.109.x/1.110.x did not resolve).
LITELLM_VERSION=1.106.12
CACHE="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}"
VENV="$CACHE/litellm-${LITELLM_VERSION}"
EXE="$VENV/bin/litellm"

log() { printf '[litellm] %s\n' "$*" >&2; }

# OK marks a finished install: a pip run killed halfway leaves a venv that must not count.
if [ -x "$EXE" ] && [ -f "$VENV/INSTALL_OK" ]; then
  log "cached at $VENV"
  echo "$EXE"
  exit 0
fi

PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null 2>&1 || { log "error: $PY not found: install Python 3.9+ (apt-get install python3 python3-venv)"; exit 2; }
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)'; then
  log "error: $("$PY" --version 2>&1) is too old for litellm $LITELLM_VERSION: use Python 3.9+ (PYTHON=python3.11 $0)"
  exit 2
fi

rm -rf "$VENV"
mkdir -p "$CACHE"
log "creating virtualenv $VENV ($("$PY" --version 2>&1))"
"$PY" -m venv "$VENV" || { log "error: python venv failed: install python3-venv (apt-get install python3-venv)"; exit 2; }
log "installing litellm[proxy]==$LITELLM_VERSION from PyPI (a few minutes)"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "litellm[proxy]==${LITELLM_VERSION}" >&2
[ -x "$EXE" ] || { log "error: $EXE missing after install"; exit 1; }
touch "$VENV/INSTALL_OK"
log "installed litellm $LITELLM_VERSION"
echo "$EXE"
