#!/usr/bin/env bash
# Debian packages the tests use, installed only when missing (CI runs as root on a fresh
# machine): chromium for the HTML report's browser test; nginx (the TLS-terminating proxy of the
# HTTPS tests) and prometheus (the real scraper of `seat monitor --prometheus`), both Debian's.
set -euo pipefail
"$(dirname "$0")/install-litellm.sh" >/dev/null  # the real LiteLLM proxy of the gateway tests (cached)
"$(dirname "$0")/make-test-lora.sh" >/dev/null  # the real LoRA adapter of the adapter and damage tests (cached)
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server) # the remote-host tests' sshd (scripts/start-test-hosts.sh)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light) # HTTPS tests (crates/bakeoff/tests/it/tls.rs)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus) # seat_monitor_export tests
if [ ${#missing[@]} -eq 0 ]; then
  echo "[test-deps] chromium, sshd, nginx and prometheus present: nothing to install" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "[test-deps] missing ${missing[*]}: install them (apt-get install ${missing[*]})" >&2
  exit 2
fi
echo "[test-deps] installing ${missing[*]}" >&2
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian's packages start their services where an init system runs; the tests start their own
# instances on free ports, so a packaged one is stopped (best effort: there may be no init).
for svc in nginx prometheus; do
  if [[ " ${missing[*]} " == *" $svc"* ]] && command -v service >/dev/null 2>&1; then
    service "$svc" stop >/dev/null 2>&1 || true
  fi
done
echo "[test-deps] installed ${missing[*]}" >&2
