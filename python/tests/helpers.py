"""Paths and skips the package tests share. The tests run against the
installed wheel (scripts/test-python.sh installs it into a fresh virtual
environment), never against python/ in the checkout."""

from __future__ import annotations

import os
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "testdata" / "example.pt.trace.json.gz"
SHARED_TRACES = ROOT.parent / "shared" / "traces"


def require(ok: bool, why: str) -> None:
    """Skip the test unless ok; under CI (CI=true) fail instead, so that CI
    never passes by skipping what it was meant to check."""
    if ok:
        return
    if os.environ.get("CI") == "true":
        raise AssertionError(f"{why} (required under CI)")
    raise unittest.SkipTest(why)
