# Shared by the scripts that keep a pinned Python tool in a cached virtualenv
# (scripts/install-litellm.sh, scripts/install-gguf.sh, bench/peers/install.sh).
# Source it after defining `log` (messages go to stderr: callers print, on stdout, nothing but
# the path they hand back). `exit` here leaves the calling script, with the codes those scripts
# always used: 2 for an unusable Python, 1 for a failed install.

# A venv counts as installed only with its INSTALL_OK mark: a pip run killed halfway leaves a
# venv that must not count. When STAMP is given, the mark must also hold exactly that text
# (what the venv was built from), so a changed pin or lock rebuilds it.
# Usage: venv_cached VENV EXE [STAMP] && exit 0
venv_cached() {
  local venv=$1 exe=$2 stamp=${3-}
  [ -x "$exe" ] && [ -f "$venv/INSTALL_OK" ] || return 1
  if [ -n "$stamp" ] && [ "$(cat "$venv/INSTALL_OK")" != "$stamp" ]; then
    return 1
  fi
  log "cached at $venv"
  echo "$exe"
  return 0
}

# Pick the interpreter ($PYTHON, default python3) and check it is at least 3.MIN_MINOR.
# Sets VENV_PY. Usage: venv_python MIN_MINOR "what needs it"
venv_python() {
  local min=$1 what=$2
  VENV_PY="${PYTHON:-python3}"
  command -v "$VENV_PY" >/dev/null 2>&1 || { log "error: $VENV_PY not found: install Python 3.$min+ (apt-get install python3 python3-venv)"; exit 2; }
  if ! "$VENV_PY" -c "import sys; sys.exit(0 if sys.version_info >= (3, $min) else 1)"; then
    log "error: $("$VENV_PY" --version 2>&1) is too old for $what: use Python 3.$min+ (PYTHON=python3.11 $0)"
    exit 2
  fi
}

# Remove whatever half-built venv is there and create a fresh one with $VENV_PY.
# Usage: venv_create VENV
venv_create() {
  local venv=$1
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  log "creating virtualenv $venv ($("$VENV_PY" --version 2>&1))"
  "$VENV_PY" -m venv "$venv" || { log "error: python venv failed: install python3-venv (apt-get install python3-venv)"; exit 2; }
}

# Mark the venv installed (with STAMP as its content when given). Usage: venv_mark_ok VENV [STAMP]
venv_mark_ok() {
  if [ -n "${2-}" ]; then
    printf '%s' "$2" >"$1/INSTALL_OK"
  else
    touch "$1/INSTALL_OK"
  fi
}
