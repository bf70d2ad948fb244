#!/usr/bin/env bash
# The krew archive of `kubectl svc` and its manifest (plugins/svc.yaml), reproducibly: the same sources and
# package-lock.json give the same bytes, so the sha256 in the manifest names what the release uploads.
#   bash scripts/krew-package.sh [OUT_DIR]     (default dist-krew/; the manifest: $KREW_MANIFEST, default plugins/svc.yaml)
# The archive holds kubectl-svc/: bin/kubectl-svc (the repository's launcher), package.json, the compiled
# dist/server and dist/operator (no tests, maps or declarations), the .proto files of server/wire/proto, and the
# production node_modules (the packages package-lock.json does not mark dev, as installed; their .ts, .map and .md
# files dropped, as the images drop them). Nothing is copied or changed under the repository. Entries sorted by name, owner 0, mtime 0, normalised modes, gzip without a name
# or time. Needs node_modules installed (npm ci) and Node 20.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(mkdir -p "${1:-$ROOT/dist-krew}" && cd "${1:-$ROOT/dist-krew}" && pwd)"
MANIFEST="${KREW_MANIFEST:-$ROOT/plugins/svc.yaml}"
VERSION="v$(node -p "require('$ROOT/package.json').version")"
# where the release publishes the archive (one place: the manifest's uri is this with the version)
URI="https://github.com/svc-dev/svc/releases/download/${VERSION}/kubectl-svc-${VERSION}.tar.gz"
ARCHIVE="$OUT/kubectl-svc-${VERSION}.tar.gz"

[ -d "$ROOT/node_modules" ] || { echo "krew-package: no node_modules in $ROOT; run npm ci first" >&2; exit 1; }
# KREW_BUILD=0: dist/ is built already (the test runs after npm test's build)
[ "${KREW_BUILD:-1}" = 0 ] || (cd "$ROOT" && npx tsc -p tsconfig.json)

# the production packages as package-lock.json names them (what `npm ci --omit=dev` installs), those installed here
LIST="$(mktemp)"
trap 'rm -f "$LIST" "$ARCHIVE.tmp"' EXIT
(
  cd "$ROOT"
  printf '%s\0' bin/kubectl-svc package.json
  find dist/server dist/operator -type f -name '*.js' -print0
  find server/wire/proto -type f -print0
  node -e '
    const lock = require("./package-lock.json");
    for (const [path, p] of Object.entries(lock.packages)) if (path !== "" && !p.dev && require("fs").existsSync(path)) console.log(path);
  ' | tr '\n' '\0' | xargs -0 -I{} find {} \( -type f -o -type l \) ! -name '*.ts' ! -name '*.map' ! -name '*.md' -print0
) | sort -zu > "$LIST"
# nested packages are listed once with their parent's files and once on their own: sort -u keeps one
tar --sort=name --mtime='@0' --owner=0 --group=0 --numeric-owner --mode='u+rwX,go+rX,go-w' --format=gnu \
  --transform 's,^,kubectl-svc/,' -C "$ROOT" --null -T "$LIST" -cf - | gzip -n > "$ARCHIVE.tmp"
mv "$ARCHIVE.tmp" "$ARCHIVE"
SHA="$(sha256sum "$ARCHIVE" | cut -d' ' -f1)"

cat > "$MANIFEST" <<YAML
# krew plugin manifest of \`kubectl svc\` (https://krew.sigs.k8s.io/docs/developer-guide/plugin-manifest/), written by
# scripts/krew-package.sh with the sha256 of the archive it built (the release uploads that archive to the uri).
# The archive is bin/kubectl-svc with dist/ and its production node_modules; Node 20 on PATH.
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: svc
spec:
  version: ${VERSION}
  homepage: https://github.com/svc-dev/svc
  shortDescription: On-call commands for svc-operator's SvcClusters
  description: |
    The on-call view and actions for SvcClusters (svc-operator): status, on-demand backup and restore drill,
    quorum-loss recovery, break-glass suspend/resume, defrag, compact, move-leader, rolling restart, alarm
    list/disarm, and a bug-report archive (kubectl svc report). Every command that changes a cluster takes
    --dry-run. Needs Node.js 20 on PATH.
  platforms:
    - selector:
        matchExpressions:
          - { key: os, operator: In, values: [linux, darwin] }
      uri: ${URI}
      sha256: "${SHA}"
      files:
        - { from: "kubectl-svc/*", to: "." }
      bin: bin/kubectl-svc
YAML
echo "$ARCHIVE sha256 $SHA; manifest $MANIFEST"
