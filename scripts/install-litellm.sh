#!/usr/bin/env bash
# Install the real LiteLLM proxy the gateway tests put in front of a real llama-server seat
# (installed by the test scripts from PyPI, pinned, not mocked).
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

# The cached-venv steps (the INSTALL_OK mark, the Python check, a fresh venv) are shared.
# shellcheck source=lib/venv.sh
. "$(dirname "$0")/lib/venv.sh"
venv_cached "$VENV" "$EXE" && exit 0
venv_python 9 "litellm $LITELLM_VERSION"
venv_create "$VENV"
log "installing litellm[proxy]==$LITELLM_VERSION from PyPI (a few minutes)"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "litellm[proxy]==${LITELLM_VERSION}" >&2
[ -x "$EXE" ] || { log "error: $EXE missing after install"; exit 1; }
venv_mark_ok "$VENV"
log "installed litellm $LITELLM_VERSION"
echo "$EXE"
