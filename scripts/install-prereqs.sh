#!/usr/bin/env bash
# The reference binaries the integration tests run side by side with svc: etcd and etcdctl 3.4.23, the Debian
# packages etcd-server and etcd-client. Runs before every `npm test` (package.json "pretest") and in .ci/run.
# Idempotent and quick when they are there. Installs them when it can (root with apt-get); otherwise it stops
# at once with one message naming the command to run, and exit status 1, so that `npm test` never turns a
# missing prerequisite into a row of identical test failures.
# The tests look for the binaries where SVC_TEST_ETCD / SVC_TEST_ETCDCTL say (default /usr/bin/...); so does this.
# Then the references 3.5, 3.6 and 3.7 (etcd, etcdutl, etcdctl; Debian has none): built once from the Go module proxy
# by scripts/build-reference.sh into ~/.cache/svc/ref/v<version> (SVC_TEST_REF35_DIR, ..._REF36_, ..._REF37_ override); needs Go.
set -uo pipefail
etcd_bin="${SVC_TEST_ETCD:-/usr/bin/etcd}"
etcdctl_bin="${SVC_TEST_ETCDCTL:-/usr/bin/etcdctl}"
say() { echo "[prerequisites] $*"; }
missing() { [ -x "$etcd_bin" ] && [ -x "$etcdctl_bin" ] && return 1; return 0; }
stop_with() {
  echo "[prerequisites] npm test needs the reference etcd 3.4.23 ($etcd_bin, $etcdctl_bin): $1" >&2
  echo "[prerequisites] Run once, as root:  sudo bash scripts/install-prereqs.sh   (it installs the Debian packages etcd-server etcd-client), then npm test again." >&2
  exit 1
}

if missing; then
  [ -n "${SVC_TEST_ETCD:-}${SVC_TEST_ETCDCTL:-}" ] &&
    stop_with "not found where SVC_TEST_ETCD/SVC_TEST_ETCDCTL point (unset them to use the Debian packages)"
  [ "$(id -u)" = 0 ] || stop_with "not installed, and installing Debian packages needs root"
  command -v apt-get >/dev/null 2>&1 || stop_with "not installed, and this machine has no apt-get"
  say "installing the Debian packages etcd-server etcd-client (reference etcd 3.4.23 for the side-by-side tests) ..."
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp)
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends etcd-server etcd-client; } >"$log" 2>&1; then
    tail -n 5 "$log" >&2; rm -f "$log"
    stop_with "apt-get could not install etcd-server etcd-client (its last lines are above)"
  fi
  rm -f "$log"
  missing && stop_with "the packages installed, but the binaries are not at these paths"
fi

# The Debian etcd-server package may start a system etcd on 127.0.0.1:2379; our tests use their own ports,
# but stop it so nothing else listens where a user would expect svc.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then systemctl stop etcd || true; fi
ver="$("$etcd_bin" --version 2>/dev/null | head -1)"
case "$ver" in
  *3.4.23*) ;;
  *) say "warning: the tests were written against etcd 3.4.23; $etcd_bin says: ${ver:-nothing}" ;;
esac
say "reference: $ver; $("$etcdctl_bin" version 2>/dev/null | head -1)"

# A tool built from the Go module proxy needs Go: without it, one message naming what and how, and exit 1.
need_go() {
  if ! command -v go >/dev/null 2>&1 && ! [ -x /usr/local/go/bin/go ]; then
    echo "[prerequisites] npm test needs $1, built from the Go module proxy: Go is not installed." >&2
    echo "[prerequisites] Install Go 1.23 or newer (https://go.dev/dl/, on PATH or in /usr/local/go), then npm test again." >&2
    exit 1
  fi
}

# The references 3.5, 3.6 and 3.7 (etcd, etcdutl, etcdctl; scripts/build-reference.sh names each line's version and
# folder): silent when cached; built (a minute or two each, once) when go is there; else one message.
for minor in 3.5 3.6 3.7; do
  if ! out=$(bash "$(dirname "$0")/build-reference.sh" "$minor" --check 2>/dev/null); then
    need_go "the reference etcd $minor (etcd, etcdutl, etcdctl)"
    say "building the reference etcd, etcdutl, etcdctl $minor from the Go module proxy (once; cached in $out) ..."
    bash "$(dirname "$0")/build-reference.sh" "$minor" >/dev/null ||
      { echo "[prerequisites] building the reference etcd $minor failed (its output is above); fix that, or set SVC_TEST_REF${minor/./}_DIR to a folder with its etcd, etcdutl, etcdctl and a .version file naming its version, then npm test again." >&2; exit 1; }
  fi
done

# versitygw (Apache-2.0), the real S3-compatible server of the object-storage backup tests (harness/s3-server.ts): built
# once from the Go module proxy by scripts/build-versitygw.sh into ${SVC_TEST_S3_DIR:-~/.cache/svc/versitygw/v1.8.0}.
s3dir="${SVC_TEST_S3_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/svc/versitygw/v1.8.0}"
if [ "$(cat "$s3dir/.version" 2>/dev/null)" != v1.8.0 ] || ! [ -x "$s3dir/versitygw" ]; then
  need_go "versitygw v1.8.0 ($s3dir/versitygw)"
  say "building versitygw v1.8.0 (the S3-compatible server of the backup tests) from the Go module proxy (once; cached in $s3dir) ..."
  SVC_TEST_S3_DIR="$s3dir" bash "$(dirname "$0")/build-versitygw.sh" >/dev/null ||
    { echo "[prerequisites] building versitygw failed (its output is above); fix that, or set SVC_TEST_S3_DIR to a folder with versitygw v1.8.0 and a .version file saying v1.8.0, then npm test again." >&2; exit 1; }
fi
