#!/bin/sh
# limits.sh measures how tracegap refuses hostile inputs: it builds the
# command, makes each input in a temporary directory (gzip bombs of 10 GB
# in 10 MB, a 100 MB string, a gigabyte of white space, JSON nested 10,000
# deep, ten million events of one name, read whole and under --max-events)
# and prints the exit status, wall time and peak resident memory of
# `tracegap analyze` on each, as measured by /usr/bin/time -v (Debian
# package "time"). Then the inputs of issue 32: a 1 MB .xplane.pb.gz of
# 94.8 million empty events (read whole, and refused under --max-memory),
# names carrying CI log commands, UTF-16 JSON, a directory of a lone FIFO,
# a negative --max-events, 100,000 nested frames around 1,000 gaps, 900,000
# distinct long names; and, against `tracegap serve` (its peak from
# /proc VmHWM, each answer's time from curl), two of those XPlanes at once
# under --max-memory 1GiB, a tar with ../ and absolute entries, four
# .tar.gz of 1.6 MB that expand to 1.6 GB each under --max-temp 512MiB,
# and a multipart upload of 3,000 parts:
#
#	scripts/limits.sh [DIR]
#
# DIR keeps the inputs (default: a temporary directory, removed at the end).
set -eu
cd "$(dirname "$0")/.."
dir=${1:-}
keep=yes
if [ -z "$dir" ]; then
	dir=$(mktemp -d)
	keep=
	trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"
. scripts/lib.sh
need_time
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
	timed "$dir/time.txt" "$dir/tracegap" analyze "$@" "$dir/$f" >/dev/null 2>"$dir/err.txt" && rc=0 || rc=$?
	wall=$(wall_s "$dir/time.txt")
	rss=$(rss_kb "$dir/time.txt")
	printf '%-22s %10s %6s %9s %10s  %s\n' "$f $*" "$(stat -c %s "$dir/$f")" "$rc" "$wall" "$((rss / 1024))" "$(sed "s|$dir/||" "$dir/err.txt" | head -c 160)"
done

# Issue 32's inputs.
python3 - "$dir" <<'PY'
import io, os, random, sys, tarfile, zlib
d = sys.argv[1]
def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)
def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload
def gz(data):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()
# 94.8 M empty XEvents (two bytes each) on one line, after 850 kB of random
# bytes in a field readers skip: 1 MB gzipped, just under the 200x guard.
pad = field(99, random.Random(1).randbytes(850_000))
plane = field(1, field(2, b"/device:GPU:0") + pad + field(3, b"\x22\x00" * 94_800_000))
open(d + "/empty.xplane.pb.gz", "wb").write(gz(plane))
cmds = ["::error::from a name", "x ##vso[task.setvariable variable=owned]1", "##[group]folded"]
evs = ['{"ph":"M","name":"thread_name","pid":1,"tid":%d,"args":{"name":"%s"}}' % (i, c) for i, c in enumerate(cmds)]
evs += ['{"ph":"X","name":"%s","cat":"cpu_op","pid":1,"tid":%d,"ts":%d,"dur":5}' % (c, i, 10 * i) for i, c in enumerate(cmds)]
evs += ['{"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":%d,"dur":3,"args":{"device":0,"stream":7}}' % (40 * i) for i in range(5)]
open(d + "/::error::x.trace.json", "w").write('{"traceEvents":[' + ",".join(evs) + "]}")
open(d + "/utf16.json", "wb").write('{"traceEvents":[]}'.encode("utf-16"))
def tar(members, gzipped):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return gz(buf.getvalue()) if gzipped else buf.getvalue()
ok = b'{"traceEvents":[]}'
open(d + "/slip.tar", "wb").write(tar([("ok/a.trace.json", ok), ("../../../../x.trace.json", ok), ("/abs/x.trace.json", ok)], False))
big = b'{"traceEvents":[' + b" " * 400_000_000
open(d + "/expand.tar.gz", "wb").write(tar([("logs/r%d.trace.json" % i, big) for i in range(4)], True))
# 4 M kernels of the fewest bytes a kernel takes, 100 us apart: a gap each.
with open(d + "/gaps.json", "w") as f:
    f.write("[" + ",".join('{"ph":"X","cat":"kernel","ts":%d,"dur":1}' % (100 * i) for i in range(4_000_000)) + "]")
# 100,000 nested Python frames around 1,000 gaps, and 900,000 distinct
# 200-byte names: the analysis's time, linear in the trace.
with open(d + "/frames.json", "w") as f:
    n, k = 100_000, 1_000
    span = k * 90 + 200
    ev = ['{"ph":"X","cat":"python_function","name":"f%d","ts":%.3f,"dur":%.3f,"pid":1,"tid":1}' % (i % 50, i / 1000, span - i / 500) for i in range(n)]
    for j in range(k):
        t = 200 + 90 * j
        ev.append('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":%d,"dur":2,"pid":1,"tid":1,"args":{"correlation":%d}}' % (t, j + 1))
        ev.append('{"ph":"X","cat":"kernel","name":"k","ts":%d,"dur":40,"pid":0,"tid":7,"args":{"correlation":%d}}' % (t + 5, j + 1))
    f.write('{"traceEvents":[' + ",".join(ev) + "]}")
with open(d + "/names.json", "w") as f:
    f.write('{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":0,"dur":1,"pid":0,"tid":7}')
    for i in range(900_000):
        f.write(',{"ph":"X","name":"%s%d","ts":%d,"dur":1,"pid":1,"tid":1}' % ("a" * 200, i, 2 * i))
    f.write("]}")
with open(d + "/parts.body", "wb") as f:
    for i in range(3000):
        f.write(b'--B\r\nContent-Disposition: form-data; name="file"; filename="p%d.json"\r\n\r\n{}\r\n' % i)
    f.write(b"--B--\r\n")
PY
mkdir -p "$dir/fifo" && rm -f "$dir/fifo/a.trace.json" && mkfifo "$dir/fifo/a.trace.json"
echo
for run in "empty.xplane.pb.gz" "empty.xplane.pb.gz --max-memory 512MiB" "::error::x.trace.json" \
	utf16.json fifo "empty.xplane.pb.gz --max-events -1" gaps.json "gaps.json --max-memory 1GiB" \
	frames.json names.json; do
	set -- $run
	f=$1
	shift
	(cd "$dir" && timed time.txt ./tracegap analyze "$@" "$f" >out.txt 2>err.txt) && rc=0 || rc=$?
	wall=$(wall_s "$dir/time.txt")
	rss=$(rss_kb "$dir/time.txt")
	live=$(cat "$dir/out.txt" "$dir/err.txt" | grep -ciE '^[[:space:]]*::|##(vso)?\[' || true)
	printf '%-22s %10s %6s %9s %10s  %s\n' "$f $*" "$(du -sb "$dir/$f" | cut -f1)" "$rc" "$wall" "$((rss / 1024))" \
		"live CI commands: $live; $(sed "s|$dir/||" "$dir/err.txt" | head -c 140)"
done

# The service: one server, its peak resident memory read from /proc.
port=$((20000 + $$ % 10000))
rm -rf "$dir/data"
"$dir/tracegap" serve --addr "127.0.0.1:$port" --data-dir "$dir/data" --max-memory 1GiB --max-temp 512MiB 2>"$dir/serve.log" &
server=$!
trap 'kill $server 2>/dev/null; [ -n "$keep" ] || rm -rf "$dir"' EXIT
until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do sleep 0.2; done
url="http://127.0.0.1:$port/api/v1/traces"
post() { # name curl-args...: prints the status, seconds and the answer's start
	n=$1
	shift
	curl -s -o "$dir/answer-$n" -w '%{http_code} %{time_total}' "$@"
	printf '  %s\n' "$(head -c 150 "$dir/answer-$n")"
}
echo
echo "serve --max-memory 1GiB --max-temp 512MiB: status seconds answer"
post x1 --data-binary @"$dir/empty.xplane.pb.gz" "$url?name=empty1.xplane.pb.gz" >"$dir/post-x1" &
p1=$!
post x2 --data-binary @"$dir/empty.xplane.pb.gz" "$url?name=empty2.xplane.pb.gz" >"$dir/post-x2" &
p2=$!
wait $p1 $p2
echo "two empty-event XPlanes at once: $(cat "$dir/post-x1"); $(cat "$dir/post-x2")"
echo "slip tar: $(post slip -F file=@"$dir/slip.tar" "$url")"
pids=
for i in 1 2 3 4; do
	post "e$i" -F file=@"$dir/expand.tar.gz" "$url?name=e$i" >"$dir/post-e$i" &
	pids="$pids $!"
done
wait $pids
for i in 1 2 3 4; do echo "expanding tar.gz $i: $(cat "$dir/post-e$i")"; done
echo "3,000 parts: $(post parts -H 'Content-Type: multipart/form-data; boundary=B' --data-binary @"$dir/parts.body" "$url")"
echo "server peak resident memory: $(($(awk '/^VmHWM/ {print $2}' /proc/$server/status) / 1024)) MB"
kill $server
