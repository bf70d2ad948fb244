#!/usr/bin/env bash
# Builds (once) the reference etcd binaries etcd, etcdutl and etcdctl of one release line from the Go module proxy
# into a cache outside the checkout. Usage: build-reference.sh MINOR [--check]   (MINOR: 3.5, 3.6 or 3.7; --check
# builds nothing and exits 1 when they are missing)
#   folder: ${SVC_TEST_REF<MINOR without dot>_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/ref/v<version>}/{etcd,etcdutl,etcdctl}
# The tests run them side by side with svc (Debian ships only 3.4; 3.5 moved `snapshot status/restore` to etcdutl;
# 3.6 and 3.7 are the releases svc upgrades to and downgrades from). No git needed: scripts/reference-<minor>/go.mod
# requires the three modules (`go install pkg@version` refuses etcd's modules, whose go.mod has replace directives).
# Each line's version is the newest patch on the Go module proxy when it was pinned (harness/reference-cluster.ts
# names the same versions). Idempotent: nothing is built when every binary is there and the stamp (.version) says
# this version. Prints the folder on its last line of stdout; progress goes to stderr.
set -euo pipefail
MINOR="${1:-3.5}"
case "$MINOR" in
  3.5) VERSION=v3.5.21 ;;
  3.6) VERSION=v3.6.16 ;;
  3.7) VERSION=v3.7.3 ;;
  *) echo "build-reference.sh: no reference release line $MINOR (known: 3.5, 3.6, 3.7)" >&2; exit 2 ;;
esac
tag="${MINOR/./}"
here="$(cd "$(dirname "$0")" && pwd)/reference-$tag"
override="SVC_TEST_REF${tag}_DIR"
out="${!override:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/svc/ref/$VERSION}"
NAME=reference-$MINOR
# shellcheck source=lib/go-build.sh
. "$(dirname "$0")/lib/go-build.sh"

fresh() { [ "$(cat "$out/.version" 2>/dev/null)" = "$VERSION" ] && [ -x "$out/etcd" ] && [ -x "$out/etcdutl" ] && [ -x "$out/etcdctl" ]; }
if fresh; then log "etcd, etcdutl, etcdctl $VERSION: cached"; echo "$out"; exit 0; fi
# --check: only say whether they are there (exit 1 when not), printing the folder either way
if [ "${2:-}" = --check ]; then echo "$out"; exit 1; fi

go_prepare "etcd $VERSION"
# main packages: server/v3 (the etcd server), etcdutl/v3, etcdctl/v3 (each module's root)
for b in etcd:go.etcd.io/etcd/server/v3 etcdutl:go.etcd.io/etcd/etcdutl/v3 etcdctl:go.etcd.io/etcd/etcdctl/v3; do
  name="${b%%:*}" pkg="${b#*:}"
  t=$SECONDS; log "building $name $VERSION ($pkg) ..."
  go_build "$name" "$pkg"
  log "built $name in $((SECONDS - t))s"
done
echo "$VERSION" > "$out/.version"
log "binaries ready in $out"
echo "$out"
