#!/usr/bin/env bash
# Build a minimal root filesystem tarball for a Docker seat: the provisioned llama-server, its
# shared libraries (as `ldd` resolves them), the dynamic loader and the test model at
# /models/model.gguf. No registry is needed: `docker import TARBALL TAG` turns it into an image.
#
# Cached by content hash under $BAKEOFF_CACHE/seat-rootfs/<hash>.tar, so CI builds it once per
# machine. Prints the tarball's path, and nothing else, on stdout.
#
#   /opt/llama/bin/llama-server   (RPATH $ORIGIN/../lib)
#   /opt/llama/lib/*.so*
#   /lib/..., /lib64/ld-linux-x86-64.so.2
#   /models/model.gguf
#   /tmp
set -euo pipefail

CACHE="${BAKEOFF_CACHE:-$HOME/.cache/bakeoff}"
ENGINE_DIR="$CACHE/llama.cpp-b11434"
MODEL="$CACHE/models/gemma-3-270m-q4_k_m.gguf"
SERVER="$ENGINE_DIR/bin/llama-server"

log() { printf '[seat-rootfs] %s\n' "$*" >&2; }

[ -x "$SERVER" ] && [ -f "$MODEL" ] || {
  log "llama-server or the model is missing under $CACHE: run scripts/provision.sh first"
  exit 1
}

# The system libraries llama-server loads, outside the engine's own lib/ directory.
sys_libs() {
  ldd "$SERVER" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' \
    | grep -v "^$ENGINE_DIR/" | sort -u
}

# Content hash: every file that goes in (the model by size and mtime: hashing 253 MB on every
# call would cost more than it saves; provision.sh checks its sha256 already).
hash_inputs() {
  {
    # Contents only (not paths), so the hash is the same wherever the cache or script lives.
    sha256sum "$SERVER" "$ENGINE_DIR"/lib/* | cut -d' ' -f1
    for l in $(sys_libs); do sha256sum "$(readlink -f "$l")" | cut -d' ' -f1; done
    stat -c '%s %Y' "$MODEL"
    sha256sum < "${BASH_SOURCE[0]}" | cut -d' ' -f1
  } | sha256sum | cut -c1-16
}

HASH="$(hash_inputs)"
OUT_DIR="$CACHE/seat-rootfs"
TARBALL="$OUT_DIR/$HASH.tar"
if [ -f "$TARBALL" ]; then
  echo "$TARBALL"
  exit 0
fi

mkdir -p "$OUT_DIR"
# Older builds are stale once any input changed.
find "$OUT_DIR" -maxdepth 1 -name '*.tar' -delete
WORK="$(mktemp -d "$OUT_DIR/.build-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
R="$WORK/root"
mkdir -p "$R/opt/llama/bin" "$R/opt/llama/lib" "$R/models" "$R/tmp"
chmod 1777 "$R/tmp"
cp -a "$SERVER" "$R/opt/llama/bin/"
cp -a "$ENGINE_DIR/lib/." "$R/opt/llama/lib/"
for l in $(sys_libs); do
  mkdir -p "$R$(dirname "$l")"
  cp -L "$l" "$R$l"
done
cp "$MODEL" "$R/models/model.gguf"
tar -C "$R" -cf "$WORK/rootfs.tar" .
mv "$WORK/rootfs.tar" "$TARBALL"
log "built $TARBALL"
echo "$TARBALL"
