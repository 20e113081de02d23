#!/usr/bin/env bash
# Build the tracegap wheel for one platform from the Go build alone (no
# network, no Python build tools): a static binary (CGO_ENABLED=0) packed
# with the Python package in python/ by internal/tools/wheel.
#
#   scripts/build-wheel.sh                       # this machine's platform, into dist/
#   GOOS=darwin GOARCH=arm64 scripts/build-wheel.sh
#   OUT=/tmp/wheels scripts/build-wheel.sh
#   BINARY=dist/tracegap-linux-arm64 GOOS=linux GOARCH=arm64 scripts/build-wheel.sh   # pack a built binary
#
# The version comes from one place, internal/cli's version variable (what
# `tracegap --version` prints), or VERSION when set; the binary is built with
# it. The licence is the repository's LICENSE, when there is one: the wheel
# ships it, and its metadata names its SPDX expression, found from the text
# or given as LICENSE_EXPRESSION. Without one the wheel carries no licence
# and this says so. Prints the wheel's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."

GOOS="${GOOS:-$(go env GOOS)}"
GOARCH="${GOARCH:-$(go env GOARCH)}"
OUT="${OUT:-dist}"
VERSION="${VERSION:-$(sed -n 's/^var version = "\(.*\)"$/\1/p' internal/cli/cli.go)}"
if [ -z "$VERSION" ]; then
  echo "build-wheel.sh: no version found in internal/cli/cli.go (expected: var version = \"X.Y.Z\")" >&2
  exit 2
fi

mkdir -p "$OUT"
bin="${BINARY:-}"
if [ -z "$bin" ]; then
  bin="$(mktemp -d)/tracegap"
  trap 'rm -rf "$(dirname "$bin")"' EXIT
  CGO_ENABLED=0 GOOS="$GOOS" GOARCH="$GOARCH" go build -trimpath \
    -ldflags "-s -w -X github.com/tracegap/tracegap/internal/cli.version=$VERSION" \
    -o "$bin" ./cmd/tracegap
fi
licence=()
if [ -f LICENSE ]; then
  licence=(-license-file LICENSE -license "${LICENSE_EXPRESSION:-}")
else
  echo "build-wheel.sh: no LICENSE in the repository: the wheel carries no licence" >&2
fi
# The packer runs here: built for this machine, not for the target.
env -u GOOS -u GOARCH go run ./internal/tools/wheel -binary "$bin" -goos "$GOOS" -goarch "$GOARCH" -version "$VERSION" \
  "${licence[@]}" -o "$OUT"
