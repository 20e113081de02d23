#!/bin/sh
# screenshot.sh renders an HTML report with headless Chromium into a PNG, to
# check the page by eye and to refresh the picture in docs/reports.md:
#
#	scripts/screenshot.sh [TRACE [PNG]]
#
# defaults: the data-bound ResNet-50 trace and docs/report-html.png. Needs
# Debian's chromium (apt-get install chromium) and Go.
set -eu
cd "$(dirname "$0")/.."
trace=${1:-../shared/traces/kineto-resnet50-workers0.pt.trace.json.gz}
png=${2:-docs/report-html.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./cmd/tracegap analyze --quiet --format html -o "$tmp/report.html" "$trace" >/dev/null
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$tmp/profile" --hide-scrollbars \
	--screenshot="$png" --window-size=1400,1000 "file://$tmp/report.html"
echo "wrote $png"
