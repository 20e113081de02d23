#!/usr/bin/env bash
# Remakes cmd/tracegap/default.pgo, the CPU profile that `go build` uses for
# profile-guided optimisation of tracegap (Go inlines and lays out the hot
# paths it shows: the XPlane decoder's varint reads, the JSON scanner). It is
# a merge of one-core profiles of `tracegap analyze` on the bench inputs of
# scripts/bench.sh (Kineto JSON plain and gzipped, the tiled TPU XPlane, the
# dense XPlane), so no format is favoured by accident, each run RUNS times
# (default 3: a one-second run gives only a hundred samples). Run it after a
# change to a hot path; an old profile still helps, only less.
#
#   scripts/pgo.sh
#   RUNS=5 scripts/pgo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH_DIR="${BENCH_DIR:-bench-out}"
export BENCH_DIR
MAKE_ONLY=1 scripts/bench.sh
go build -o "$BENCH_DIR/tracegap" ./cmd/tracegap
profiles=()
for name in kineto-x10.json kineto-x10.json.gz xprof-tpu-x495.xplane.pb xplane-8000.xplane.pb; do
  for run in $(seq "${RUNS:-3}"); do
    p="$BENCH_DIR/$name.$run.cpu.pprof"
    GOMAXPROCS=1 "$BENCH_DIR/tracegap" analyze --debug.cpuprofile "$p" "$BENCH_DIR/$name" >/dev/null
    profiles+=("$p")
  done
done
go tool pprof -proto "${profiles[@]}" >cmd/tracegap/default.pgo
echo "pgo.sh: wrote cmd/tracegap/default.pgo ($(stat -c %s cmd/tracegap/default.pgo) bytes)" >&2
