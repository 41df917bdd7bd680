#!/usr/bin/env bash
# Stop what scripts/start-test-hosts.sh started: the second dockerd (its containers go with it)
# and its bridge, and the test sshd. `docker2` or `sshd` as the argument stops only that one
# (the remote-host test stops the second engine mid-test). Waits, bounded, until each is gone.
set -euo pipefail

CACHE="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}"
DIR="$CACHE/test-hosts"
RUN="${BAKEOFF_TEST_RUN:-/run}"
what="${1:-all}"

log() { printf '[test-hosts] %s\n' "$*" >&2; }

# SIGTERM the pid in PIDFILE, then SIGKILL after 30 s; only a pid whose command is NAME.
stop_pidfile() {
  local pidfile="$1" name="$2" pid comm
  [ -f "$pidfile" ] || { log "$name: no pidfile ($pidfile): not running"; return 0; }
  pid="$(cat "$pidfile")"
  comm="$(cat "/proc/$pid/comm" 2>/dev/null || true)"
  if [ "$comm" != "$name" ]; then
    log "$name: pid $pid is not running (or is not $name): nothing to stop"
    rm -f "$pidfile"
    return 0
  fi
  kill -TERM "$pid"
  for _ in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || { log "$name (pid $pid) stopped"; rm -f "$pidfile"; return 0; }
    sleep 1
  done
  log "$name (pid $pid) ignored SIGTERM for 30 s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

case "$what" in
  all | docker2)
    stop_pidfile "$RUN/bakeoff-test-docker2.pid" dockerd
    # Its bridge, made by start-test-hosts.sh (never docker0: that is the main engine's).
    bridge="${BAKEOFF_TEST_BRIDGE:-bk-docker2}"
    if [ "$bridge" != docker0 ] && ip link show "$bridge" >/dev/null 2>&1; then
      ip link del "$bridge" && log "bridge $bridge removed"
    fi
    ;;
esac
case "$what" in
  all | sshd) stop_pidfile "$DIR/ssh/sshd.pid" sshd ;;
esac
