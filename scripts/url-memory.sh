#!/usr/bin/env bash
# Peak memory of `tracegap analyze` on a large object read from an
# S3-compatible store against the same file on disk: reads stream, so the
# object should take no more than 1.2x the file's peak RSS.
#
#   WEED=/path/to/weed scripts/url-memory.sh           # a 1.05 GB Kineto trace
#   WEED=/path/to/weed scripts/url-memory.sh big.json  # another input
#
# The store is SeaweedFS's S3 gateway (`weed server -s3`, which .ci/run
# builds and names in $TRACEGAP_WEED), started here on free local ports
# with its data in a temporary directory, open to any credentials. The
# default input is 55 tiled copies of the ResNet50 workers4 Kineto trace
# (1.05 GB, ../shared/bench/tile-trace; scripts/bench.sh makes the same),
# made once in $BENCH_DIR (default bench-out/). Each command runs under /usr/bin/time; the figure is its
# maximum resident set size. Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."

WEED="${WEED:-${TRACEGAP_WEED:-}}"
if [ -z "$WEED" ] || [ ! -x "$WEED" ]; then
  echo "url-memory.sh: set WEED to a SeaweedFS weed binary (.ci/run builds one)" >&2
  exit 2
fi
BENCH_DIR="${BENCH_DIR:-bench-out}"
mkdir -p "$BENCH_DIR"
input="${1:-$BENCH_DIR/kineto-x55.json}"
if [ ! -s "$input" ]; then
  echo "url-memory.sh: making $input" >&2
  python3 ../shared/bench/tile-trace ../shared/traces/kineto-resnet50-workers4.pt.trace.json.gz "$input.tmp" --copies 55
  mv "$input.tmp" "$input"
fi
go build -o "$BENCH_DIR/tracegap" ./cmd/tracegap

data=$(mktemp -d)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
s3=$(port)
"$WEED" server -dir="$data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
  -master.port="$(port)" -master.port.grpc="$(port)" -master.volumeSizeLimitMB=64 \
  -volume.port="$(port)" -volume.port.grpc="$(port)" -volume.max=100 \
  -filer -filer.port="$(port)" -filer.port.grpc="$(port)" \
  -s3 -s3.port="$s3" -s3.port.grpc="$(port)" -s3.port.iceberg=0 -s3.port.lance=0 \
  >"$data/weed.log" 2>&1 &
weed_pid=$!
trap 'kill -KILL $weed_pid 2>/dev/null; wait $weed_pid 2>/dev/null; rm -rf "$data"' EXIT
endpoint="http://127.0.0.1:$s3"
for _ in $(seq 300); do # a minute at most
  curl -sf -X PUT "$endpoint/bench" >/dev/null 2>&1 && break
  sleep 0.2
done
key="big/$(basename "$input")"
curl -sf -T "$input" "$endpoint/bench/$key" >/dev/null

export AWS_ENDPOINT_URL="$endpoint" AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench
peak() { # peak RSS in MB of tracegap analyze $1
  /usr/bin/time -f %M "$BENCH_DIR/tracegap" analyze "$1" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f", $1/1024}'
}
size=$(stat -c %s "$input")
file_mb=$(peak "$input")
url_mb=$(peak "s3://bench/$key")
echo "| input | size | peak RSS, file | peak RSS, s3:// | ratio |"
echo "|---|---:|---:|---:|---:|"
awk -v n="$(basename "$input")" -v s="$size" -v f="$file_mb" -v u="$url_mb" \
  'BEGIN { printf "| %s | %.2f GB | %d MB | %d MB | %.2fx |\n", n, s/1e9, f, u, u/f }'
