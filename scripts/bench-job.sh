#!/usr/bin/env bash
# Job mode at scale: a generated job of RANKS ranks (default 256,
# internal/tools/genjob: tracetest.ManyRanks, every rank different) analysed
# in two phases, then in one run over the traces, each under /usr/bin/time -v
# (the merge and the one run write the text report).
# Prints wall time and peak RSS of each phase and the summary size per rank,
# against the budget: the merge's peak RSS under 1 GB.
#
#   scripts/bench-job.sh                       # 256 ranks of 1000 steps
#   RANKS=1024 STEPS=200 scripts/bench-job.sh
#
# The job is made once and cached in $BENCH_DIR (default bench-out/).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR="${BENCH_DIR:-bench-out}"
RANKS="${RANKS:-256}"
STEPS="${STEPS:-1000}"
PAR="${PAR:-$(nproc)}"
BUDGET_KB=$((1024 * 1024)) # 1 GB
job="$BENCH_DIR/job-$RANKS-$STEPS"
sums="$job.summaries"
mkdir -p "$BENCH_DIR"

. scripts/lib.sh
need_time
go build -o "$BENCH_DIR/tracegap" ./cmd/tracegap
tg="$BENCH_DIR/tracegap"
if [ ! -d "$job" ]; then
  echo "bench-job.sh: making $job" >&2
  go run ./internal/tools/genjob -ranks "$RANKS" -steps "$STEPS" -o "$job.tmp"
  mv "$job.tmp" "$job"
fi

# measure CMD...: run CMD under /usr/bin/time, print wall s and peak kB.
measure() {
  local log="$BENCH_DIR/time.log"
  timed "$log" "$@" >/dev/null
  echo "$(wall_s "$log") $(rss_kb "$log")"
}

rm -rf "$sums" && mkdir -p "$sums"
# Phase 1, as on one machine with xargs -P: one summarize per rank. The
# peak RSS reported is the largest of one rank's.
start=$(date +%s.%N)
ls "$job"/*.pt.trace.json.gz | xargs -P "$PAR" -I{} sh -c \
  '/usr/bin/time -f %M -o "$2/$(basename "$1" .pt.trace.json.gz).rss" "$0" summarize "$1" -o "$2/$(basename "$1" .pt.trace.json.gz).summary.json.gz"' \
  "$tg" {} "$sums"
p1_wall=$(echo "$(date +%s.%N) - $start" | bc)
p1_rss=$(cat "$sums"/*.rss | sort -n | tail -1)
rm -f "$sums"/*.rss
read -r p2_wall p2_rss < <(measure "$tg" analyze -q --format text -o "$BENCH_DIR/job-report.txt" "$sums")
# The JSON report embeds every rank's whole report (245 MB for 256 ranks of
# 1000 steps), written a rank at a time.
read -r json_wall json_rss < <(measure "$tg" analyze -q --format json -o "$BENCH_DIR/job-report.json" "$sums")
json_mb=$(du -m "$BENCH_DIR/job-report.json" | cut -f1)
read -r one_wall one_rss < <(measure "$tg" analyze -q --job --format text -o "$BENCH_DIR/job-report-traces.txt" "$job")
if ! cmp -s "$BENCH_DIR/job-report.txt" "$BENCH_DIR/job-report-traces.txt"; then
  echo "bench-job.sh: the two-phase report differs from the one-run report" >&2
  exit 1
fi
traces_mb=$(du -sm "$job" | cut -f1)
avg_kb=$(du -sk "$sums" | awk -v n="$RANKS" '{printf "%.0f", $1 / n}')
max_kb=$(ls -l "$sums" | awk 'NR > 1 {if ($5 > m) m = $5} END {printf "%.0f", m / 1024}')
echo
echo "$RANKS ranks of $STEPS steps ($traces_mb MB of gzipped traces), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| phase | wall s | peak RSS MB |"
echo "|---|---|---|"
printf '| summarize, %d at a time (xargs -P) | %.1f | %d (one rank) |\n' "$PAR" "$p1_wall" $((p1_rss / 1024))
printf '| merge of the summaries | %.1f | %d |\n' "$p2_wall" $((p2_rss / 1024))
printf '| merge of the summaries, JSON report (%d MB) | %.1f | %d |\n' "$json_mb" "$json_wall" $((json_rss / 1024))
printf '| one run over the traces (streamed) | %.1f | %d |\n' "$one_wall" $((one_rss / 1024))
echo
echo "summary per rank: $avg_kb KB on average, $max_kb KB at most; the two reports are identical"
for rss in "$p2_rss" "$json_rss"; do
  if [ "$rss" -gt "$BUDGET_KB" ]; then
    echo "bench-job.sh: merge peak RSS $((rss / 1024)) MB over the 1 GB budget" >&2
    exit 1
  fi
done
