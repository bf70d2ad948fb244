#!/usr/bin/env bash
# Builds (once) the reference etcd 3.5 binaries etcd, etcdutl and etcdctl from the Go module proxy into a cache
# outside the checkout:  ${SVC_TEST_REF35_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/ref/v3.5.21}/{etcd,etcdutl,etcdctl}
# The tests use them to check that the reference 3.5 reads svc's snapshots and the other way round (Debian ships
# only 3.4, and 3.5 moved `snapshot status/restore` to etcdutl). No git needed: scripts/reference-35/go.mod
# requires the three modules (`go install pkg@version` refuses etcd's modules, whose go.mod has replace directives).
# Idempotent: nothing is built when every binary is there and the stamp (.version) says this version.
# Prints the folder on its last line of stdout; progress goes to stderr.
set -euo pipefail
VERSION=v3.5.21
here="$(cd "$(dirname "$0")" && pwd)/reference-35"
out="${SVC_TEST_REF35_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/svc/ref/$VERSION}"
NAME=reference-3.5
# shellcheck source=lib/go-build.sh
. "$(dirname "$0")/lib/go-build.sh"

fresh() { [ "$(cat "$out/.version" 2>/dev/null)" = "$VERSION" ] && [ -x "$out/etcd" ] && [ -x "$out/etcdutl" ] && [ -x "$out/etcdctl" ]; }
if fresh; then log "etcd, etcdutl, etcdctl $VERSION: cached"; echo "$out"; exit 0; fi

go_prepare "etcd $VERSION"
# main packages of release-3.5: server/v3 (the etcd server), etcdutl/v3, etcdctl/v3 (each module's root)
for b in etcd:go.etcd.io/etcd/server/v3 etcdutl:go.etcd.io/etcd/etcdutl/v3 etcdctl:go.etcd.io/etcd/etcdctl/v3; do
  name="${b%%:*}" pkg="${b#*:}"
  t=$SECONDS; log "building $name $VERSION ($pkg) ..."
  go_build "$name" "$pkg"
  log "built $name in $((SECONDS - t))s"
done
echo "$VERSION" > "$out/.version"
log "binaries ready in $out"
echo "$out"
