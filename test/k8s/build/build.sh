#!/usr/bin/env bash
# Builds (once) the test control plane binaries into a per-version cache outside the checkout:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/svc/k8s/$K8S_VERSION/{kube-apiserver,kube-controller-manager,kube-scheduler,kubelet,
#   kubectl,etcd,helm,coredns,local-path-provisioner}
# Idempotent: a binary whose stamp (.<name>.version) matches its pinned version is not rebuilt.
# Prints the cache directory on its last line of stdout (progress goes to stderr).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
export GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0
out="${SVC_K8S_BIN_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/svc/k8s/${K8S_VERSION}}"
mkdir -p "$out"
start=$SECONDS
log() { echo "[k8s-build +$((SECONDS - start))s] $*" >&2; }

fresh() { # name version -> 0 when the cached binary is current
  [ -x "$out/$1" ] && [ "$(cat "$out/.$1.version" 2>/dev/null)" = "$2" ]
}
stamp() { echo "$2" > "$out/.$1.version"; }

k8s_bins=(kube-apiserver kube-controller-manager kubectl kube-scheduler kubelet)
need_k8s=0
for b in "${k8s_bins[@]}"; do fresh "$b" "$K8S_VERSION" || need_k8s=1; done
need_etcd=0; fresh etcd "$ETCD_VERSION" || need_etcd=1
need_helm=0; fresh helm "$HELM_VERSION" || need_helm=1

if [ $need_k8s = 1 ] || [ $need_etcd = 1 ]; then
  "$here/gen-gomod.sh" >&2
fi

if [ $need_k8s = 1 ]; then
  ver="${K8S_VERSION#v}"; major="${ver%%.*}"; rest="${ver#*.}"; minor="${rest%%.*}"
  commit="$(printf '%040d' 0)"
  date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  ld="-s -w"
  # the same variables as Kubernetes' hack/lib/version.sh, for both version packages
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ld="$ld -X $pkg.gitCommit=$commit -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  for b in "${k8s_bins[@]}"; do
    fresh "$b" "$K8S_VERSION" && { log "$b $K8S_VERSION: cached"; continue; }
    t=$SECONDS; log "building $b $K8S_VERSION ..."
    (cd "$here" && go build -p 2 -trimpath -ldflags "$ld" -o "$out/$b.tmp" "k8s.io/kubernetes/cmd/$b")
    mv "$out/$b.tmp" "$out/$b"; stamp "$b" "$K8S_VERSION"
    log "built $b in $((SECONDS - t))s"
  done
else
  log "kube-apiserver, kube-controller-manager, kubectl $K8S_VERSION: cached"
fi

if [ $need_etcd = 1 ]; then
  t=$SECONDS; log "building etcd $ETCD_VERSION ..."
  (cd "$here" && go build -p 2 -trimpath -ldflags "-s -w" -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$out/etcd.tmp" "$out/etcd"; stamp etcd "$ETCD_VERSION"
  log "built etcd in $((SECONDS - t))s"
else
  log "etcd $ETCD_VERSION: cached"
fi

if [ $need_helm = 1 ]; then
  t=$SECONDS; log "building helm $HELM_VERSION (go install) ..."
  gobin="$(mktemp -d)"
  GOBIN="$gobin" go install -p 2 -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  mv "$gobin/helm" "$out/helm"; rmdir "$gobin"; stamp helm "$HELM_VERSION"
  log "built helm in $((SECONDS - t))s"
else
  log "helm $HELM_VERSION: cached"
fi
# CoreDNS with only the plugins the test node needs (coredns/main.go; its go.mod pins COREDNS_VERSION)
if fresh coredns "$COREDNS_VERSION"; then
  log "coredns $COREDNS_VERSION: cached"
else
  grep -q "github.com/coredns/coredns $COREDNS_VERSION" "$here/coredns/go.mod" \
    || { echo "build.sh: coredns/go.mod does not require coredns $COREDNS_VERSION (versions.env)" >&2; exit 1; }
  t=$SECONDS; log "building coredns $COREDNS_VERSION ..."
  (cd "$here/coredns" && go build -p 2 -trimpath -ldflags "-s -w" -o "$out/coredns.tmp" .)
  mv "$out/coredns.tmp" "$out/coredns"; stamp coredns "$COREDNS_VERSION"
  log "built coredns in $((SECONDS - t))s"
fi

# rancher's local-path-provisioner: the test node's dynamic PersistentVolume provisioner
if fresh local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION"; then
  log "local-path-provisioner $LOCAL_PATH_PROVISIONER_VERSION: cached"
else
  t=$SECONDS; log "building local-path-provisioner $LOCAL_PATH_PROVISIONER_VERSION (go install) ..."
  gobin="$(mktemp -d)"
  GOBIN="$gobin" go install -p 2 -trimpath -ldflags "-s -w" "github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION"
  mv "$gobin/local-path-provisioner" "$out/local-path-provisioner"; rmdir "$gobin"; stamp local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION"
  log "built local-path-provisioner in $((SECONDS - t))s"
fi
log "binaries ready in $out"
echo "$out"
