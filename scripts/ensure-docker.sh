#!/usr/bin/env bash
# The seat tests run real containers on this machine's Docker engine. This kind of machine
# starts dockerd before a session; if it is not answering (a fresh CI run after the session's
# processes were ended, a daemon that died), start it and wait until it answers. On a fresh
# Debian machine without Docker at all, install Debian's docker.io first (as root only; the
# client speaks API 1.41 = Docker 20.10, which Debian 12's docker.io is).
set -euo pipefail
if docker info >/dev/null 2>&1; then
  echo "[docker] dockerd answers (server $(docker info --format '{{.ServerVersion}}' 2>/dev/null || echo '?')): nothing to do" >&2
  exit 0
fi

# docker.io's candidate version per apt, empty when apt does not offer it.
candidate() {
  apt-cache policy docker.io 2>/dev/null | awk '$1 == "Candidate:" && $2 != "(none)" {print $2}'
}

if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "[docker] docker is not answering and dockerd is not installed: install docker.io (apt-get install docker.io) as root" >&2
    exit 2
  fi
  if [ -z "$(candidate)" ]; then
    apt-get update -qq >/dev/null
  fi
  version="$(candidate)"
  if [ -z "$version" ]; then
    echo "[docker] dockerd is not installed and apt offers no docker.io: add a Debian main source, or install Docker yourself" >&2
    exit 2
  fi
  echo "[docker] installing docker.io $version" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io >/dev/null
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
