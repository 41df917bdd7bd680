#!/usr/bin/env bash
# Provision the real engine and the test models (docs/install.md):
#   scripts/provision.sh [all|engine|model|smollm2|vllm]
# The script itself is crates/bakeoff-local/provision.sh, beside the crate that compiles it into
# the binary (the embedded default runs its `all`): a crate embeds only files inside its own
# directory, so that is its one copy and this path runs it.
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# BAKEOFF_SCRIPTS: where `vllm` finds install-vllm.sh, which stays among the scripts.
BAKEOFF_SCRIPTS="$scripts" exec bash "$scripts/../crates/bakeoff-local/provision.sh" "$@"
