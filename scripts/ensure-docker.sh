#!/usr/bin/env bash
# The seat tests run real containers on this machine's Docker engine. This kind of machine
# starts dockerd before a session; if it is not answering (a fresh CI run after the session's
# processes were ended, a daemon that died), start it and wait until it answers.
set -euo pipefail
if docker info >/dev/null 2>&1; then
  exit 0
fi
if ! command -v dockerd >/dev/null 2>&1; then
  echo "[docker] docker is not answering and dockerd is not installed: install docker.io" >&2
  exit 2
fi
echo "[docker] starting dockerd" >&2
rm -f /var/run/docker.pid
setsid nohup dockerd >"${TMPDIR:-/tmp}/bakeoff-dockerd.log" 2>&1 < /dev/null &
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && { echo "[docker] dockerd is up" >&2; exit 0; }
  sleep 1
done
echo "[docker] dockerd did not answer within 60 s; see ${TMPDIR:-/tmp}/bakeoff-dockerd.log" >&2
exit 1
