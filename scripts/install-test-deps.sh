#!/usr/bin/env bash
# Debian packages the tests use, installed only when missing (CI runs as root on a fresh
# machine): chromium for the HTML report's browser test.
set -euo pipefail
"$(dirname "$0")/install-litellm.sh" >/dev/null  # the real LiteLLM proxy of the gateway tests (cached)
"$(dirname "$0")/make-test-lora.sh" >/dev/null  # the real LoRA adapter of the adapter and damage tests (cached)
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server) # the remote-host tests' sshd (scripts/start-test-hosts.sh)
if [ ${#missing[@]} -eq 0 ]; then
  echo "[test-deps] chromium present ($(command -v chromium)): nothing to install" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "[test-deps] missing ${missing[*]}: install them (apt-get install ${missing[*]})" >&2
  exit 2
fi
echo "[test-deps] installing ${missing[*]}" >&2
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "[test-deps] installed ${missing[*]}" >&2
