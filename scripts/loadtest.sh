#!/usr/bin/env bash
# Bounded load test of `tracegap serve` on loopback: builds tracegap and the
# load generator, starts the service on 127.0.0.1 with a temporary data
# directory, uploads real traces from concurrent clients, verifies that
# nothing was lost or corrupted, and stops the service with SIGTERM.
#
#   scripts/loadtest.sh                      # 200 uploads, 8 clients, ../shared/traces
#   N=400 C=16 scripts/loadtest.sh -unique   # every upload distinct, so each is analysed
#   scripts/loadtest.sh -unique a.json.gz b.xplane.pb
#
# Flags (starting with -) go to the load generator; other arguments are the
# files to upload. SERVE_FLAGS adds flags to `tracegap serve`.
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200}"
C="${C:-8}"
flags=()
files=()
for a in "$@"; do
  case "$a" in
    -*) flags+=("$a") ;;
    *) files+=("$a") ;;
  esac
done
if [ ${#files[@]} -eq 0 ]; then
  files=(../shared/traces/*.gz ../shared/traces/*.pb)
fi

tmp="$(mktemp -d)"
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    wait "$pid" || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/tracegap" ./cmd/tracegap
go build -o "$tmp/loadtest" ./internal/tools/loadtest

# shellcheck disable=SC2086
"$tmp/tracegap" serve --addr 127.0.0.1:0 --data-dir "$tmp/data" ${SERVE_FLAGS:-} 2>"$tmp/serve.log" &
pid=$!
addr=""
for _ in $(seq 100); do
  addr="$(sed -n 's|.*listening on http://\([^ ]*\).*|\1|p' "$tmp/serve.log")"
  [ -n "$addr" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.log"; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { echo "tracegap serve did not start:"; cat "$tmp/serve.log"; exit 1; }
echo "tracegap serve on $addr ($(nproc) cores, ${SERVE_FLAGS:-default flags})"

status=0
"$tmp/loadtest" -addr "$addr" -n "$N" -c "$C" "${flags[@]}" "${files[@]}" || status=$?

kill -TERM "$pid"
wait "$pid" || status=$?
pid=""
grep -v 'POST /api/v1/traces: 422' "$tmp/serve.log" | sed 's/^/  serve: /' | tail -5
exit "$status"
