# Sourced by the scripts that build a Go program once from the Go module proxy into a cache outside the checkout
# (build-reference.sh, build-reference-benchmark.sh). The caller sets NAME (its log prefix), here (the folder whose
# go.mod requires the modules) and out (the cache folder); progress goes to stderr.
go="$(command -v go || echo /usr/local/go/bin/go)"
start=$SECONDS
log() { echo "[$NAME +$((SECONDS - start))s] $*" >&2; }

# go_prepare WHAT: refuses without Go (it needs Go to build WHAT), makes $out and removes its stamp, and sets the build
# environment: CGO off (static binaries, no C toolchain needed), -mod=mod (go.sum may gain lines for a newer Go).
go_prepare() {
  [ -x "$go" ] || { echo "[$NAME] needs Go (go on PATH or /usr/local/go/bin/go) to build $1" >&2; exit 1; }
  mkdir -p "$out"
  rm -f "$out/.version"
  export CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"
}

# go_build BIN PKG: builds the main package PKG into $out/BIN (-p 1 and nice: this runs next to the test suite on
# small shared machines).
go_build() {
  (cd "$here" && nice -n 19 "$go" build -p 1 -trimpath -ldflags "-s -w" -o "$out/$1.tmp" "$2")
  mv "$out/$1.tmp" "$out/$1"
}
