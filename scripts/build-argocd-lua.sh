#!/usr/bin/env bash
# Builds (once) lua-health, a tiny Go program that runs an Argo CD health script with gopher-lua (the Lua
# interpreter Argo CD embeds), from the Go module proxy into a cache outside the checkout:
#   ${SVC_TEST_ARGOCD_LUA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/argocd-lua/<gopher-lua version>}/lua-health
# test/integration/operator/argocd-health.test.ts runs docs/argocd/svc.dev_SvcCluster.lua with it.
# Idempotent: nothing is built when the binary is there and the stamp (.version) matches.
# Prints the folder on its last line of stdout; progress goes to stderr.
set -euo pipefail
VERSION=v1.1.1   # github.com/yuin/gopher-lua, as in scripts/argocd-lua/go.mod
here="$(cd "$(dirname "$0")" && pwd)/argocd-lua"
out="${SVC_TEST_ARGOCD_LUA_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/svc/argocd-lua/$VERSION}"
go="$(command -v go || echo /usr/local/go/bin/go)"
stamp="$VERSION $(sha256sum "$here/main.go" "$here/go.mod" | sha256sum | cut -c1-16)"
if [ "$(cat "$out/.version" 2>/dev/null)" = "$stamp" ] && [ -x "$out/lua-health" ]; then echo "[argocd-lua] cached" >&2; echo "$out"; exit 0; fi
[ -x "$go" ] || { echo "[argocd-lua] needs Go (go on PATH or /usr/local/go/bin/go) to build lua-health with gopher-lua $VERSION" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out/.version"
export CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"
echo "[argocd-lua] building lua-health with gopher-lua $VERSION ..." >&2
(cd "$here" && nice -n 19 "$go" build -p 1 -trimpath -ldflags "-s -w" -o "$out/lua-health.tmp" .)
mv "$out/lua-health.tmp" "$out/lua-health"
echo "$stamp" > "$out/.version"
echo "$out"
