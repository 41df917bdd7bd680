#!/usr/bin/env bash
# Install one peer load client of bench/peers/run.sh into a cached virtualenv, pinned.
#
#   bench/peers/install.sh aiohttp    # prints the venv's python   ($BAKEOFF_CACHE/venv-peers-aiohttp)
#   bench/peers/install.sh guidellm   # prints the `guidellm` path ($BAKEOFF_CACHE/venv-guidellm)
#   bench/peers/install.sh aiperf     # prints the `aiperf` path   ($BAKEOFF_CACHE/venv-peers-aiperf)
#
# Everything comes from bench/peers/requirements-*.txt with `--no-deps` (each file lists the whole
# dependency closure), from PyPI, or with PEERS_WHEELHOUSE=DIR from that directory alone
# (`pip --no-index --find-links DIR`, for a host without network; `run.sh --download-wheels DIR`
# fills one). A venv is rebuilt when its lock file, Python or torch source changes.
#
# GuideLLM needs torch (it loads data through torch's DataLoader). When $PYTHON (default python3)
# can already `import torch` (the H200 host's /opt/torch venv), the new venv sees that torch
# through a .pth file, after its own packages; otherwise TORCH_VERSION is installed from PyPI
# (CUDA wheels, about 3 GB) or from the wheelhouse if it holds it.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}"
TORCH_VERSION=2.15.0
WHAT="${1:-}"

log() { printf '[peers] %s\n' "$*" >&2; }
# shellcheck source=../../scripts/lib/venv.sh
. "$HERE/../../scripts/lib/venv.sh"

case "$WHAT" in
  aiohttp) LOCK="$HERE/requirements-aiohttp.txt"; VENV="$CACHE/venv-peers-aiohttp"; EXE="$VENV/bin/python"; MIN=9 ;;
  guidellm) LOCK="$HERE/requirements-guidellm.txt"; VENV="$CACHE/venv-guidellm"; EXE="$VENV/bin/guidellm"; MIN=10 ;;
  aiperf) LOCK="$HERE/requirements-aiperf.txt"; VENV="$CACHE/venv-peers-aiperf"; EXE="$VENV/bin/aiperf"; MIN=11 ;;
  *) log "usage: $0 aiohttp|guidellm|aiperf"; exit 2 ;;
esac

venv_python "$MIN" "$WHAT"
# The torch this interpreter already has (its site-packages directory), if any.
TORCH_SITE=""
if [ "$WHAT" = guidellm ]; then
  TORCH_SITE="$("$VENV_PY" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null || true)"
fi
STAMP="lock=$(sha256sum "$LOCK" | cut -c1-16) python=$("$VENV_PY" -c 'import sys; print(sys.executable, sys.version.split()[0])') torch=${TORCH_SITE:-pypi-$TORCH_VERSION} wheelhouse=${PEERS_WHEELHOUSE:+yes}"
venv_cached "$VENV" "$EXE" "$STAMP" && exit 0

PIP_SRC=()
if [ -n "${PEERS_WHEELHOUSE:-}" ]; then
  [ -d "$PEERS_WHEELHOUSE" ] || { log "error: PEERS_WHEELHOUSE=$PEERS_WHEELHOUSE is not a directory"; exit 2; }
  PIP_SRC=(--no-index --find-links "$PEERS_WHEELHOUSE")
fi
pip_install() { "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${PIP_SRC[@]}" "$@" >&2; }

venv_create "$VENV"
if [ "$WHAT" = guidellm ]; then
  if [ -n "$TORCH_SITE" ]; then
    # Appended to sys.path after the venv's own site-packages: our pins win, torch is found.
    site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    echo "$TORCH_SITE" >"$site/zz_peers_host_torch.pth"
    log "using the torch of $VENV_PY ($TORCH_SITE)"
  else
    log "installing torch==$TORCH_VERSION${PEERS_WHEELHOUSE:+ from $PEERS_WHEELHOUSE} (PyPI's Linux wheels bring CUDA libraries: ~3 GB)"
    pip_install "torch==$TORCH_VERSION" || { log "error: torch did not install (no network and no torch in the wheelhouse? run with a PYTHON that has torch)"; exit 1; }
  fi
fi
log "installing $WHAT from ${PEERS_WHEELHOUSE:-PyPI} ($(grep -cv '^#' "$LOCK") pinned packages)"
# --ignore-installed: the host torch's site-packages (on sys.path through the .pth) may hold some
# of these, even guidellm itself; the venv gets its own pinned copies all the same.
pip_install --no-deps --ignore-installed -r "$LOCK" || { log "error: pip install failed"; exit 1; }
case "$WHAT" in
  aiohttp) "$EXE" -c 'import aiohttp' || { log "error: aiohttp did not import after install"; exit 1; } ;;
  guidellm) "$EXE" --version >&2 || { log "error: guidellm did not run after install"; exit 1; } ;;
  aiperf) "$EXE" --version >&2 || { log "error: aiperf did not run after install"; exit 1; } ;;
esac
venv_mark_ok "$VENV" "$STAMP"
log "installed $WHAT"
echo "$EXE"
