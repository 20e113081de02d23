# lib.sh is what the measuring scripts (bench.sh, bench-nsight.sh,
# bench-job.sh, limits.sh) share; they source it. POSIX sh.

# need_time makes sure /usr/bin/time (Debian's package "time") is there.
need_time() {
	if [ ! -x /usr/bin/time ]; then
		echo "$(basename "$0"): /usr/bin/time missing; installing the Debian package 'time'" >&2
		apt-get install -y time >&2
	fi
}

# timed LOG CMD...: runs CMD under /usr/bin/time -v, its report in LOG;
# returns CMD's status.
timed() {
	_log=$1
	shift
	/usr/bin/time -v -o "$_log" "$@"
}

# wall_s LOG prints the wall time of the report LOG in seconds; rss_kb LOG
# its peak resident set in kB.
wall_s() { awk -F': ' '/Elapsed/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$1"; }
rss_kb() { awk -F': ' '/Maximum resident/ {print $2}' "$1"; }
