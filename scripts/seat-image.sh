#!/usr/bin/env bash
# Build a local Docker image for a llama.cpp seat without a registry: the rootfs tarball from
# scripts/seat-rootfs.sh (llama-server, its shared libraries, the test model at
# /models/model.gguf), imported with `docker import`. Usage: scripts/seat-image.sh [TAG]
# (default bakeoff-llama:local). Prints the tag.
set -euo pipefail
TAG="${1:-bakeoff-llama:local}"
TARBALL="$(bash "$(dirname "${BASH_SOURCE[0]}")/seat-rootfs.sh")"
docker import "$TARBALL" "$TAG" >/dev/null
echo "$TAG"
