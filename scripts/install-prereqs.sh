#!/usr/bin/env bash
# Installs what the tests need beyond package.json. Idempotent; a fresh machine must pass with only this.
set -euo pipefail
need=()
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need+=(etcd-client)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The Debian etcd-server package starts a system etcd on 127.0.0.1:2379; our tests use their own ports,
# but stop it so nothing else listens where a user would expect svc.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then systemctl stop etcd || true; fi
echo "reference: $(etcd --version 2>/dev/null | head -1); $(etcdctl version 2>/dev/null | head -1)"
