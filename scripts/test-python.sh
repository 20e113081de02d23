#!/usr/bin/env bash
# Test the Python package as users get it: build the wheel for this
# platform (scripts/build-wheel.sh), install it from the file into a fresh
# virtual environment with no package index, run the installed binary,
# `python -m tracegap` and the API, then the tests in python/tests (a real
# torch.profiler capture with Debian's python3-torch, the JAX hook against a
# stand-in jax.profiler).
#
# The venv sees the system's site-packages, so Debian's python3-torch is
# importable in it; tracegap itself comes only from the wheel. Where
# python3, venv or torch are missing the tests are skipped with a message,
# except under CI=true, where they fail (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  # Debian's python3 has python3-torch; prefer it to one on PATH.
  for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import venv, ensurepip' >/dev/null 2>&1; then
      PYTHON="$p"
      break
    fi
  done
fi
if [ -z "$PYTHON" ]; then
  msg="test-python.sh: no python3 with venv and ensurepip (Debian: apt-get install python3-venv)"
  if [ "${CI:-}" = true ]; then echo "$msg" >&2; exit 1; fi
  echo "$msg: skipping the Python package tests" >&2
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
wheel="$(OUT="$work/dist" scripts/build-wheel.sh | tail -n 1)"
echo "== built $(basename "$wheel")"

"$PYTHON" -m venv --system-site-packages "$work/venv"
venv="$work/venv/bin"
"$venv/python" -m pip install --quiet --no-index --no-cache-dir --disable-pip-version-check "$wheel"
export PATH="$venv:$PATH"

echo "== tracegap --version"
tracegap --version
echo "== python -m tracegap analyze testdata/example.pt.trace.json.gz"
python -m tracegap analyze testdata/example.pt.trace.json.gz | sed -n 3p
echo "== tracegap.analyze(...)"
python -c 'import tracegap; print(tracegap.analyze("testdata/example.pt.trace.json.gz")["verdict"])'

echo "== python/tests"
# From the tests' directory, so that the checkout's python/tracegap is
# not importable: the tests import the installed wheel.
python -m unittest discover -s python/tests -t python/tests -v
