#!/usr/bin/env bash
# The Nsight Systems reader beside the Kineto JSON reader on the same events:
# one generated training loop (internal/tools/genloop) written as an
# Nsight SQLite export and as Kineto JSON, each run through
# `tracegap analyze` on one core under /usr/bin/time. The budget (issue 31):
# an export reads at least as fast per event as Kineto JSON on one core, at
# a peak RSS of at most 56 bytes an event.
#
#   scripts/bench-nsight.sh              # 1000 steps of 400 kernels: 1.2 M events
#   STEPS=3000 RUNS=3 scripts/bench-nsight.sh
#
# Inputs are made once and cached in $BENCH_DIR (default bench-out/, which
# git ignores). CPU seconds (user + system) are the measure: the wall clock
# of the shared machine moves with its load. Prints a Markdown table; the
# fastest of RUNS runs is kept per row.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR="${BENCH_DIR:-bench-out}"
STEPS="${STEPS:-1000}"
RUNS="${RUNS:-3}"
mkdir -p "$BENCH_DIR"
. scripts/lib.sh
need_time

go build -o "$BENCH_DIR/tracegap" ./cmd/tracegap
n="$BENCH_DIR/nsight-$STEPS.sqlite"
j="$BENCH_DIR/nsight-$STEPS.json"
if [ ! -s "$n" ] || [ ! -s "$j" ]; then
  echo "bench-nsight.sh: making $n and $j" >&2
  go run ./internal/tools/genloop -steps "$STEPS" -kernels 400 -devices 1 "$n" "$j"
fi

echo "| input | size MB | events | CPU s | us/event | peak RSS MB | B/event |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for f in "$j" "$n"; do
  log="$BENCH_DIR/time.log"
  : >"$log"
  for _ in $(seq "$RUNS"); do
    GOMAXPROCS=1 /usr/bin/time -v "$BENCH_DIR/tracegap" analyze "$f" >"$BENCH_DIR/report.txt" 2>>"$log"
  done
  # events, from the report's first line: "FILE  (nsight, 51 MB, 1,204,000 events)"
  events=$(head -1 "$BENCH_DIR/report.txt" | sed -n 's/.*, \([0-9,]*\) events)$/\1/p' | tr -d ,)
  awk -v name="$(basename "$f")" -v bytes="$(stat -L -c %s "$f")" -v events="$events" '
    /User time \(seconds\)/ { u = $NF }
    /System time \(seconds\)/ { c = u + $NF; if (best == "" || c < best) best = c }
    /Maximum resident set size/ { if (rss == "" || $NF < rss) rss = $NF }
    END {
      printf "| %s | %.0f | %d | %.2f | %.2f | %.0f | %.0f |\n", name, bytes / 1e6, events, best,
        best * 1e6 / events, rss / 1024, rss * 1024 / events
    }' "$log"
done
