#!/usr/bin/env bash
# Builds (once) versitygw, an Apache-2.0 S3-compatible gateway (its posix backend keeps buckets as folders), from the
# Go module proxy into a cache outside the checkout:
#   ${SVC_TEST_S3_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/versitygw/v1.8.0}/versitygw
# The tests run it on loopback as the real S3 server behind spec.backup.destinations[].s3 (harness/s3-server.ts); no
# mock S3 anywhere (and not MinIO, which is AGPL). Idempotent: nothing is built when the binary and its stamp are there.
# Prints the folder on its last line of stdout; progress goes to stderr.
set -euo pipefail
VERSION=v1.8.0
out="${SVC_TEST_S3_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/svc/versitygw/$VERSION}"
go="$(command -v go || echo /usr/local/go/bin/go)"
start=$SECONDS
log() { echo "[versitygw +$((SECONDS - start))s] $*" >&2; }

if [ "$(cat "$out/.version" 2>/dev/null)" = "$VERSION" ] && [ -x "$out/versitygw" ]; then log "versitygw $VERSION: cached"; echo "$out"; exit 0; fi
[ -x "$go" ] || { echo "[versitygw] needs Go (go on PATH or /usr/local/go/bin/go) to build versitygw $VERSION" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out/.version"
# its go.mod has no replace directives, so `go install pkg@version` works; GOBIN is the cache. CGO off: a static
# binary, no C toolchain. -p 1 and nice: this may run next to the test suite on a small machine.
log "building versitygw $VERSION (a few minutes, once) ..."
CGO_ENABLED=0 GOFLAGS="-buildvcs=false" GOBIN="$out" nice -n 19 "$go" install -p 1 -trimpath -ldflags "-s -w" "github.com/versity/versitygw/cmd/versitygw@$VERSION"
echo "$VERSION" > "$out/.version"
log "built in $((SECONDS - start))s: $out/versitygw"
echo "$out"
