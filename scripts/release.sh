#!/usr/bin/env bash
# Build the release artefacts into dist/ (or OUT): static binaries for
# linux and macOS on amd64 and arm64 (tracegap-VERSION-GOOS-GOARCH), a wheel
# for each (scripts/build-wheel.sh), and SHA256SUMS over all of them.
# No network beyond what `go build` needs for the module cache.
#
# A release ships under the repository's LICENSE: without one this stops,
# since artefacts with no licence are not free to use; UNLICENSED=1 builds
# them anyway, for a trial.
#
#   scripts/release.sh
#   VERSION=0.2.0 OUT=/tmp/release scripts/release.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f LICENSE ] && [ "${UNLICENSED:-}" != 1 ]; then
  echo "release.sh: no LICENSE in the repository: expected the licence the release ships under (UNLICENSED=1 builds a trial release without one)" >&2
  exit 2
fi

OUT="${OUT:-dist}"
VERSION="${VERSION:-$(sed -n 's/^var version = "\(.*\)"$/\1/p' internal/cli/cli.go)}"
export OUT VERSION
mkdir -p "$OUT"

files=()
for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  goos="${platform%/*}" goarch="${platform#*/}"
  echo "== $goos/$goarch" >&2
  CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" go build -trimpath \
    -ldflags "-s -w -X github.com/tracegap/tracegap/internal/cli.version=$VERSION" \
    -o "$OUT/tracegap-$VERSION-$goos-$goarch" ./cmd/tracegap
  files+=("tracegap-$VERSION-$goos-$goarch")
  wheel="$(BINARY="$OUT/tracegap-$VERSION-$goos-$goarch" GOOS="$goos" GOARCH="$goarch" scripts/build-wheel.sh | tail -n 1)"
  files+=("$(basename "$wheel")")
done

cd "$OUT"
sha256sum "${files[@]}" > SHA256SUMS
cat SHA256SUMS
