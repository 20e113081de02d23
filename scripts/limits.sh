#!/bin/sh
# limits.sh measures how tracegap refuses hostile inputs: it builds the
# command, makes each input in a temporary directory (gzip bombs of 10 GB
# in 10 MB, a 100 MB string, a gigabyte of white space, JSON nested 10,000
# deep, ten million events of one name, read whole and under --max-events)
# and prints the exit status, wall time and peak resident memory of
# `tracegap analyze` on each, as measured by /usr/bin/time -v (Debian
# package "time"):
#
#	scripts/limits.sh [DIR]
#
# DIR keeps the inputs (default: a temporary directory, removed at the end).
set -eu
cd "$(dirname "$0")/.."
dir=${1:-}
if [ -z "$dir" ]; then
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"
go build -o "$dir/tracegap" ./cmd/tracegap
go run ./internal/tools/gzbomb -size 10G -o "$dir/zeros.json.gz" >/dev/null
go run ./internal/tools/gzbomb -size 10G -prefix '{"traceEvents":[' -fill ' ' -o "$dir/spaces.json.gz" >/dev/null
go run ./internal/tools/gzbomb -size 10G -o "$dir/zeros.xplane.pb.gz" >/dev/null
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
with open(d + "/string100m.json", "w") as f:
    f.write('[{"ph":"X","name":"' + "a" * 100_000_000 + '","pid":1,"tid":1,"ts":1,"dur":1}]')
with open(d + "/spaces1g.json", "w") as f:
    f.write('{"traceEvents":[')
    for _ in range(1024):
        f.write(" " * (1 << 20))
    f.write("]}")
with open(d + "/deep.json", "w") as f:
    f.write('[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":' + '{"a":' * 10000 + "1" + "}" * 10000 + "}]")
with open(d + "/events10m.json", "w") as f:
    f.write('{"traceEvents":[\n')
    ev = '{"ph":"X","cat":"kernel","name":"same","pid":0,"tid":7,"ts":%d,"dur":1,"args":{"device":0,"stream":7}}'
    for chunk in range(100):
        f.write(",\n".join(ev % (2 * i) for i in range(chunk * 100_000, (chunk + 1) * 100_000)))
        f.write(",\n" if chunk < 99 else "\n]}\n")
PY
printf '%-22s %10s %6s %9s %10s  %s\n' input bytes exit seconds max-rss-MB error
for run in zeros.json.gz spaces.json.gz "zeros.xplane.pb.gz --input-format xplane" \
	string100m.json spaces1g.json deep.json events10m.json "events10m.json --max-events 1000000"; do
	set -- $run
	f=$1
	shift
	/usr/bin/time -v -o "$dir/time.txt" "$dir/tracegap" analyze "$@" "$dir/$f" >/dev/null 2>"$dir/err.txt" && rc=0 || rc=$?
	wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time.txt")
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time.txt")
	printf '%-22s %10s %6s %9s %10s  %s\n' "$f $*" "$(stat -c %s "$dir/$f")" "$rc" "$wall" "$((rss / 1024))" "$(sed "s|$dir/||" "$dir/err.txt" | head -c 160)"
done
