"""tracegap.jax.trace against a stand-in for jax.profiler (JAX is not
installable on the test machine) that writes a real XPlane capture, the
shared tracelens-jax-conv-block-until-ready.xplane.pb, where JAX would."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import shutil
import sys
import tempfile
import types
import unittest
from typing import Any, Iterator

import tracegap
import tracegap.jax
from helpers import SHARED_TRACES, require

XPLANE = SHARED_TRACES / "tracelens-jax-conv-block-until-ready.xplane.pb"


runs = itertools.count(5)


@contextlib.contextmanager
def fake_trace(log_dir: str, **kwargs: Any) -> Iterator[None]:
    """Writes the capture on exit into a new run named by its time, as
    jax.profiler.trace does."""
    yield
    run = os.path.join(log_dir, "plugins", "profile", f"2024_01_02_03_04_{next(runs):02d}")
    os.makedirs(run)
    shutil.copyfile(XPLANE, os.path.join(run, "host0.xplane.pb"))


class JaxTraceTest(unittest.TestCase):
    def setUp(self) -> None:
        require(XPLANE.is_file(), f"{XPLANE} is missing")
        jax = types.ModuleType("jax")
        jax.profiler = types.ModuleType("jax.profiler")  # type: ignore[attr-defined]
        jax.profiler.trace = fake_trace  # type: ignore[attr-defined]
        self.saved = {k: sys.modules.get(k) for k in ("jax", "jax.profiler")}
        sys.modules["jax"], sys.modules["jax.profiler"] = jax, jax.profiler  # type: ignore[attr-defined]

    def tearDown(self) -> None:
        for k, v in self.saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v

    def test_trace_analyses_the_run(self) -> None:
        # expected.tsv: ~79 of ~133 ms of gap time inside block_until_ready,
        # sequential.
        with tempfile.TemporaryDirectory() as d:
            out = io.StringIO()
            with tracegap.jax.trace(d, out=out) as capture:
                self.assertIsNone(capture.report)
            self.assertEqual(capture.verdict, "sequential")
            self.assertEqual(os.path.dirname(capture.trace or ""), os.path.join(d, "plugins", "profile"))
            run = capture.trace or ""
            self.assertEqual(capture.report_path, os.path.join(run, "tracegap.json"))
            with open(capture.report_path) as f:
                self.assertEqual(json.load(f)["verdict"], "sequential")
            self.assertTrue(out.getvalue().startswith("tracegap: sequential"), out.getvalue())
            # A second capture into the same log directory is its own run.
            with self.assertRaises(tracegap.VerdictError):
                with tracegap.jax.trace(d, quiet=True, fail_on=tracegap.jax.SLOW_VERDICTS):
                    pass

    def test_block_error_skips_analysis(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(ZeroDivisionError):
                with tracegap.jax.trace(d, quiet=True) as capture:
                    1 / 0
            self.assertIsNone(capture.report)


if __name__ == "__main__":
    unittest.main()
