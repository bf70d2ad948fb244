#!/usr/bin/env bash
# npm run test:k8s: builds the control plane and node binaries and the images (each cached outside the checkout),
# compiles the TypeScript, and runs the Kubernetes tier (test/k8s/**/*.test.ts) on a real kube-apiserver with one
# real node (kubelet + containerd). Needs root (the node makes a bridge, network namespaces and mounts).
# SVC_K8S_DIST=<folder> compiles into another output folder than dist (for work in a shared checkout).
# SVC_K8S_ALLOW_TSC_ERRORS=1 goes on when tsc reports errors (in files of others).
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
say() { echo "[test:k8s +$((SECONDS - start))s] $*"; }

[ "$(id -u)" = 0 ] || { say "the Kubernetes tier runs a real kubelet and containerd: run it as root"; exit 1; }
say "binaries (test/k8s/build/build.sh; the first build takes 15-30 min on 2 cores)"
bin_dir="$(bash test/k8s/build/build.sh | tail -n 1)"
export SVC_K8S_BIN_DIR="$bin_dir"
say "binaries ready in $bin_dir"

say "images (test/k8s/images/build-images.sh; the first build takes several minutes)"
bash test/k8s/images/build-images.sh | tail -n 1
say "images ready"

say "versitygw, the S3-compatible server of the object-store backup tests (scripts/build-versitygw.sh; built once)"
bash scripts/build-versitygw.sh | tail -n 1

out="${SVC_K8S_DIST:-dist}"
say "compiling TypeScript into $out"
if ! npx tsc -p tsconfig.json --outDir "$out"; then
  # SVC_K8S_ALLOW_TSC_ERRORS=1: run on what tsc emitted (others' work in progress in a shared checkout)
  [ "${SVC_K8S_ALLOW_TSC_ERRORS:-0}" = 1 ] || { say "tsc failed"; exit 1; }
  say "tsc reported errors; running on what it emitted (SVC_K8S_ALLOW_TSC_ERRORS=1)"
fi
say "compiled"

say "running mocha on $out/test/k8s"
npx mocha --no-config --reporter spec --timeout 240000 --enable-source-maps --forbid-only --forbid-pending \
  --require "$out/test/k8s/fixture.js" "$out/test/k8s/**/*.test.js"
say "done"
