"""tracegap.jax.trace against a stand-in for jax.profiler (JAX is not
installable on the test machine) that writes real XPlane captures from
../shared/traces where JAX would. The stand-in has jax.profiler.trace's
signature, so that the hook's arguments reach it as JAX would take them."""

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
from typing import Any, Iterator, List, Optional

import tracegap
import tracegap.jax
from helpers import SHARED_TRACES, require

# expected.tsv: ~79 of ~133 ms of gap time inside block_until_ready,
# sequential.
SEQUENTIAL = SHARED_TRACES / "tracelens-jax-conv-block-until-ready.xplane.pb"
# expected.tsv: GPU:0 ~94% busy, parallel.
PARALLEL = SHARED_TRACES / "tracelens-jax-te-fused-attn.xplane.pb"

runs = itertools.count(5)


class ProfileOptions:
    """Stands in for jax.profiler.ProfileOptions: an object, not a mapping."""

    python_tracer_level = 0
    host_tracer_level = 2


class FakeProfiler:
    """A jax.profiler whose trace writes ``hosts`` (one capture per host,
    as a multi-host run does) into a new run named by its time, as
    jax.profiler.trace does, and records the arguments it was given."""

    def __init__(self, hosts: List[Any]) -> None:
        self.hosts = hosts
        self.calls: List[tuple] = []
        self.ProfileOptions = ProfileOptions

    @contextlib.contextmanager
    def trace(
        self,
        log_dir: str,
        create_perfetto_link: bool = False,
        create_perfetto_trace: bool = False,
        profiler_options: Optional[ProfileOptions] = None,
    ) -> Iterator[None]:
        # The signature of jax.profiler.trace (jax/_src/profiler.py).
        self.calls.append((log_dir, create_perfetto_link, create_perfetto_trace, profiler_options))
        yield
        run = os.path.join(log_dir, "plugins", "profile", f"2024_01_02_03_04_{next(runs):02d}")
        os.makedirs(run)
        for i, src in enumerate(self.hosts):
            shutil.copyfile(src, os.path.join(run, f"host{i}.xplane.pb"))


class NoJax:
    """A meta path finder that finds no jax, as where it is not installed."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> None:
        if name.split(".")[0] == "jax":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


class JaxTraceTest(unittest.TestCase):
    def setUp(self) -> None:
        require(SEQUENTIAL.is_file() and PARALLEL.is_file(), f"{SEQUENTIAL} or {PARALLEL} is missing")
        self.saved = {k: sys.modules.get(k) for k in ("jax", "jax.profiler")}
        self.profiler = self.install([SEQUENTIAL])

    def install(self, hosts: List[Any]) -> FakeProfiler:
        profiler = FakeProfiler(hosts)
        jax = types.ModuleType("jax")
        jax.profiler = profiler  # type: ignore[attr-defined]
        sys.modules["jax"], sys.modules["jax.profiler"] = jax, profiler  # type: ignore[assignment]
        return profiler

    def tearDown(self) -> None:
        for k, v in self.saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v

    def test_trace_analyses_the_run(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            out = io.StringIO()
            with tracegap.jax.trace(d, tracegap={"out": out}) as capture:
                self.assertIsNone(capture.report)
            self.assertEqual(capture.verdict, "sequential")
            self.assertEqual(capture.verdicts, ["sequential"])
            self.assertEqual(os.path.dirname(capture.trace or ""), os.path.join(d, "plugins", "profile"))
            run = capture.trace or ""
            self.assertEqual(capture.report_path, os.path.join(run, "tracegap.json"))
            with open(capture.report_path) as f:
                self.assertEqual(json.load(f)["verdict"], "sequential")
            self.assertTrue(out.getvalue().startswith("tracegap: sequential"), out.getvalue())
            # A second capture into the same log directory is its own run.
            with self.assertRaises(tracegap.VerdictError):
                with tracegap.jax.trace(d, tracegap={"quiet": True, "fail_on": tracegap.jax.SLOW_VERDICTS}):
                    pass

    def test_jax_arguments_pass_through(self) -> None:
        # docs/jax.md builds a ProfileOptions; the hook hands it to
        # jax.profiler.trace as JAX names it, with its other keywords, and
        # reads tracegap's own options (an analyze flag here: a min-gap
        # above every gap leaves nothing attributed) from tracegap=.
        opts = ProfileOptions()
        opts.python_tracer_level = 1
        with tempfile.TemporaryDirectory() as d:
            with tracegap.jax.trace(
                d, create_perfetto_trace=True, profiler_options=opts, tracegap={"quiet": True, "min_gap": "10s"}
            ) as capture:
                pass
            self.assertEqual(self.profiler.calls, [(d, False, True, opts)])
            self.assertEqual(capture.report["thresholds"]["min_gap_ns"], 10_000_000_000)

    def test_old_dict_profiler_options(self) -> None:
        # The form documented before ProfileOptions passed through: a dict
        # of jax.profiler.trace keywords. It still works, with a warning.
        with tempfile.TemporaryDirectory() as d:
            with self.assertWarns(DeprecationWarning):
                with tracegap.jax.trace(d, profiler_options={"create_perfetto_link": True}, tracegap={"quiet": True}):
                    pass
            self.assertEqual(self.profiler.calls, [(d, True, False, None)])

    def test_multi_host_run(self) -> None:
        # A run with one capture per host: `tracegap analyze RUN` gives one
        # report per file (XPlane names no rank, so no job), and so does
        # the hook: host0 is sequential, host1 parallel.
        self.install([SEQUENTIAL, PARALLEL])
        with tempfile.TemporaryDirectory() as d:
            out = io.StringIO()
            with self.assertRaises(tracegap.VerdictError) as failed:
                with tracegap.jax.trace(d, tracegap={"out": out, "fail_on": ["sequential"]}) as capture:
                    pass
            run = capture.trace or ""
            self.assertEqual(capture.verdicts, ["sequential", "parallel"])
            self.assertIsNone(capture.verdict)
            self.assertIsNone(capture.report)
            self.assertEqual(
                capture.report_paths,
                [os.path.join(run, "host0.xplane.tracegap.json"), os.path.join(run, "host1.xplane.tracegap.json")],
            )
            for path, verdict in zip(capture.report_paths, capture.verdicts):
                with open(path) as f:
                    self.assertEqual(json.load(f)["verdict"], verdict)
            lines = out.getvalue().splitlines()
            self.assertEqual(len(lines), 2, lines)
            self.assertTrue(lines[0].startswith("tracegap: host0.xplane.pb: sequential"), lines)
            self.assertTrue(lines[1].startswith("tracegap: host1.xplane.pb: parallel"), lines)
            self.assertEqual(failed.exception.report["verdict"], "sequential")

    def test_multi_host_run_as_a_job(self) -> None:
        # job=True is `tracegap analyze --job RUN`: the hosts read as the
        # ranks of one job, one report for the run. Two hosts of one job
        # work at the same time: the same capture twice does (two captures
        # of different runs are refused as not one job's ranks).
        self.install([SEQUENTIAL, SEQUENTIAL])
        with tempfile.TemporaryDirectory() as d:
            with tracegap.jax.trace(d, tracegap={"quiet": True, "job": True}) as capture:
                pass
            run = capture.trace or ""
            self.assertEqual(capture.report_paths, [os.path.join(run, "tracegap.json")])
            self.assertEqual((capture.report or {})["job"]["ranks"], 2)

    def test_without_jax(self) -> None:
        # As on a machine without JAX: importing tracegap.jax works,
        # entering trace says what needs JAX and what works without it.
        sys.modules.pop("jax", None)
        sys.modules.pop("jax.profiler", None)
        sys.meta_path.insert(0, NoJax())
        self.addCleanup(sys.meta_path.pop, 0)
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(ImportError) as failed:
                with tracegap.jax.trace(d):
                    pass
            msg = str(failed.exception)
            self.assertIn("tracegap.jax.trace needs JAX", msg)
            self.assertIn("tracegap.analyze", msg)
            self.assertNotIsInstance(failed.exception, ModuleNotFoundError)
            self.assertEqual(os.listdir(d), [])

    def test_block_error_skips_analysis(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(ZeroDivisionError):
                with tracegap.jax.trace(d, tracegap={"quiet": True}) as capture:
                    1 / 0
            self.assertIsNone(capture.report)
            self.assertEqual(capture.reports, [])


if __name__ == "__main__":
    unittest.main()
