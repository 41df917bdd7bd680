#!/usr/bin/env bash
# Two more "hosts" on this machine for the remote-host tests: a second dockerd with its
# own socket, data root, exec root, pidfile and bridge, and a real sshd (Debian's openssh-server) on a
# loopback port, reached with a key and a known_hosts made for the test. Everything lives under
# $BAKEOFF_CACHE/test-hosts; nothing is written into ~/.ssh (the test's ssh reads its own config
# file with `ssh -F`, so the operator's keys, config and known_hosts stay untouched).
#
# Idempotent: what already answers is left as it is. Prints KEY=VALUE lines on stdout (and nothing
# else) for the test helpers; scripts/stop-test-hosts.sh stops what this started.
#
#   DOCKER2_HOST   unix:// address of the second engine
#   SSH_CONFIG     an ssh_config with a `Host bakeoff-test-ssh` block (port, key, known_hosts)
#   SSH_HOST       the ssh destination (`root@bakeoff-test-ssh`, or the user running this)
#   TLS_HOST       tcp:// address of the TLS engine (the second dockerd also listens there)
#   TLS_DIR        ca.pem, cert.pem, key.pem for a client of TLS_HOST
set -euo pipefail

CACHE="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}"
DIR="$CACHE/test-hosts"
RUN="${BAKEOFF_TEST_RUN:-/run}"
SOCK="$RUN/bakeoff-test-docker2.sock"
EXEC_ROOT="$RUN/bakeoff-test-docker2"
PIDFILE="$RUN/bakeoff-test-docker2.pid"
SSH_PORT="${BAKEOFF_TEST_SSH_PORT:-2222}"
TLS_PORT="${BAKEOFF_TEST_TLS_PORT:-2376}"
SSH_DIR="$DIR/ssh"
TLS_DIR="$DIR/tls"
# The second engine's bridge and its subnet (a TEST-NET-like private range no default uses).
BRIDGE="${BAKEOFF_TEST_BRIDGE:-bk-docker2}"
BRIDGE_CIDR="${BAKEOFF_TEST_BRIDGE_CIDR:-10.213.77.1/24}"

log() { printf '[test-hosts] %s\n' "$*" >&2; }

mkdir -p "$DIR" "$SSH_DIR" "$TLS_DIR"

# ---- packages: sshd, the ssh client, openssl ------------------------------------------------
missing=()
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    log "missing ${missing[*]}: install them (apt-get install ${missing[*]}) as root"
    exit 2
  fi
  log "installing ${missing[*]}"
  apt-get update -qq >/dev/null
  # policy-rc.d-less containers: the package's own sshd on port 22 must not start.
  RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
command -v docker >/dev/null 2>&1 || { log "the docker CLI is missing: run scripts/ensure-docker.sh"; exit 2; }

# ---- TLS material: a CA, a server certificate for 127.0.0.1, a client certificate ------------
if [ ! -f "$TLS_DIR/key.pem" ]; then
  log "making test TLS certificates in $TLS_DIR"
  (
    cd "$TLS_DIR"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=bakeoff test CA" \
      -keyout ca-key.pem -out ca.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
      -keyout server-key.pem -out server.csr 2>/dev/null
    printf 'subjectAltName = IP:127.0.0.1,DNS:localhost\nextendedKeyUsage = serverAuth\n' > server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 3650 \
      -extfile server.ext -out server-cert.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=bakeoff test client" \
      -keyout key.pem.tmp -out client.csr 2>/dev/null
    printf 'extendedKeyUsage = clientAuth\n' > client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 3650 \
      -extfile client.ext -out cert.pem 2>/dev/null
    chmod 600 ca-key.pem server-key.pem key.pem.tmp
    mv key.pem.tmp key.pem
  )
fi

# ---- the second dockerd ----------------------------------------------------------------------
if docker -H "unix://$SOCK" info >/dev/null 2>&1; then
  log "second dockerd answers at $SOCK: nothing to do"
else
  command -v dockerd >/dev/null 2>&1 || { log "dockerd is missing: run scripts/ensure-docker.sh"; exit 2; }
  # Its own config file: /etc/docker/daemon.json may set data-root, which would conflict with
  # the flag. The storage driver is the main engine's (this machine may need fuse-overlayfs).
  driver="$(docker info --format '{{.Driver}}' 2>/dev/null || true)"
  if [ -n "$driver" ]; then
    printf '{"storage-driver": "%s"}\n' "$driver" > "$DIR/docker2.json"
  else
    echo '{}' > "$DIR/docker2.json"
  fi
  mkdir -p "$DIR/docker2" "$EXEC_ROOT"
  rm -f "$PIDFILE" "$SOCK"
  # Its own bridge, made here: never `--bridge=none`, with which dockerd deletes `docker0` —
  # the main engine's bridge, in the same network namespace — at startup. No iptables either:
  # the main engine's rules stay as they are; published ports go through docker-proxy.
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$BRIDGE_CIDR" dev "$BRIDGE"
    ip link set "$BRIDGE" up
  fi
  log "starting a second dockerd at $SOCK (log: $DIR/docker2.log)"
  setsid nohup dockerd \
    --config-file "$DIR/docker2.json" \
    --host "unix://$SOCK" \
    --host "tcp://127.0.0.1:$TLS_PORT" \
    --tlsverify --tlscacert "$TLS_DIR/ca.pem" \
    --tlscert "$TLS_DIR/server-cert.pem" --tlskey "$TLS_DIR/server-key.pem" \
    --data-root "$DIR/docker2" \
    --exec-root "$EXEC_ROOT" \
    --pidfile "$PIDFILE" \
    --iptables=false --ip-masq=false --bridge="$BRIDGE" \
    >"$DIR/docker2.log" 2>&1 </dev/null &
  ok=
  for _ in $(seq 1 60); do
    docker -H "unix://$SOCK" info >/dev/null 2>&1 && { ok=1; break; }
    sleep 1
  done
  [ -n "$ok" ] || { log "the second dockerd did not answer within 60 s; see $DIR/docker2.log"; exit 1; }
fi

# ---- sshd on loopback, its host key, the test's client key -----------------------------------
[ -f "$SSH_DIR/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C bakeoff-test-host -f "$SSH_DIR/host_ed25519"
[ -f "$SSH_DIR/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C bakeoff-test-client -f "$SSH_DIR/id_ed25519"
cp "$SSH_DIR/id_ed25519.pub" "$SSH_DIR/authorized_keys"
chmod 600 "$SSH_DIR/authorized_keys"
printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$SSH_DIR/host_ed25519.pub")" \
  > "$SSH_DIR/known_hosts"
cat > "$SSH_DIR/sshd_config" <<EOF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $SSH_DIR/host_ed25519
PidFile $SSH_DIR/sshd.pid
AuthorizedKeysFile $SSH_DIR/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
# The cache directory may be group-writable on a CI machine.
StrictModes no
EOF
USER_NAME="$(id -un)"
cat > "$SSH_DIR/ssh_config" <<EOF
Host bakeoff-test-ssh
  HostName 127.0.0.1
  Port $SSH_PORT
  User $USER_NAME
  IdentityFile $SSH_DIR/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $SSH_DIR/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
EOF
chmod 600 "$SSH_DIR/ssh_config" "$SSH_DIR/id_ed25519"

ssh_answers() {
  ssh -F "$SSH_DIR/ssh_config" -o ConnectTimeout=5 bakeoff-test-ssh true >/dev/null 2>&1
}
if ssh_answers; then
  log "test sshd answers on 127.0.0.1:$SSH_PORT: nothing to do"
else
  # Privilege separation directory (Debian's sshd refuses to start without it).
  mkdir -p /run/sshd
  log "starting sshd on 127.0.0.1:$SSH_PORT"
  /usr/sbin/sshd -f "$SSH_DIR/sshd_config" -E "$DIR/sshd.log"
  ok=
  for _ in $(seq 1 30); do
    ssh_answers && { ok=1; break; }
    sleep 1
  done
  [ -n "$ok" ] || { log "sshd did not answer within 30 s; see $DIR/sshd.log"; exit 1; }
fi

echo "DOCKER2_HOST=unix://$SOCK"
echo "SSH_CONFIG=$SSH_DIR/ssh_config"
echo "SSH_HOST=$USER_NAME@bakeoff-test-ssh"
echo "TLS_HOST=tcp://127.0.0.1:$TLS_PORT"
echo "TLS_DIR=$TLS_DIR"
