"""The installed package: the bundled binary, analyze and its errors."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import tracegap
import tracegap.torch
from helpers import EXAMPLE


class PackageTest(unittest.TestCase):
    def test_installed_not_checkout(self) -> None:
        # The tests must exercise the wheel, with its binary.
        self.assertIn("site-packages", tracegap.__file__)
        self.assertTrue(os.access(tracegap.binary(), os.X_OK))
        self.assertNotEqual(tracegap.__version__, "0+unknown")

    def test_binary_on_path_and_module(self) -> None:
        exe = shutil.which("tracegap")
        self.assertIsNotNone(exe, "tracegap is not on PATH")
        # On PATH is the binary itself, as ruff's is, not a Python script
        # that starts it; the API finds that same file.
        with open(exe, "rb") as f:
            magic = f.read(4)
        self.assertIn(magic, (b"\x7fELF", b"\xcf\xfa\xed\xfe"), f"{exe} is not an executable binary")
        self.assertEqual(os.path.realpath(tracegap.binary()), os.path.realpath(exe))
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
        self.assertRegex(out, r"^tracegap \S+\n$")
        proc = subprocess.run([sys.executable, "-m", "tracegap", "analyze", str(EXAMPLE)], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("data-bound (high confidence)", proc.stdout)

    def test_analyze(self) -> None:
        # The example's DataLoader takes 60 ms a step against 45 ms of GPU
        # work (testdata/README.md): data-bound, five steady steps.
        report = tracegap.analyze(EXAMPLE)
        self.assertEqual(report["schema"], "tracegap/report/v1")
        self.assertEqual(report["verdict"], "data-bound")
        self.assertEqual(len(report["steps"]), 5)
        # Options are the CLI's flags: a huge min gap leaves no gap.
        self.assertEqual(tracegap.analyze(EXAMPLE, min_gap="10s")["top_gaps"], [])
        many = tracegap.analyze_many([EXAMPLE, EXAMPLE])
        self.assertEqual([r["verdict"] for r in many], ["data-bound", "data-bound"])

    def test_errors(self) -> None:
        with self.assertRaises(tracegap.TracegapError) as cm:
            tracegap.analyze("no-such-trace.json")
        self.assertEqual(cm.exception.returncode, 2)
        self.assertIn("no-such-trace.json", str(cm.exception))
        with self.assertRaises(tracegap.TracegapError):
            tracegap.analyze(EXAMPLE, min_gap="soon")
        # A format other than JSON is refused in words, not as a JSON error.
        with self.assertRaises(tracegap.TracegapError) as cm:
            tracegap.analyze(EXAMPLE, format="html")
        self.assertIn("format='html': analyze returns the JSON report", str(cm.exception))
        with self.assertRaises(tracegap.TracegapError):
            tracegap.analyze_many([EXAMPLE], quiet=True)
        self.assertEqual(tracegap.analyze(EXAMPLE, format="json")["verdict"], "data-bound")

    def test_option_flags(self) -> None:
        self.assertEqual(
            tracegap.option_flags({"min_gap": "50us", "sync_pattern": ["a", "b"], "top": 3, "x": None, "y": False}),
            ["--min-gap", "50us", "--sync-pattern", "a", "--sync-pattern", "b", "--top", "3"],
        )


class FakeProfile:
    """Stands in for torch.profiler.profile: exports a given trace."""

    def __init__(self, src: str) -> None:
        self.src = src

    def export_chrome_trace(self, path: str) -> None:
        shutil.copyfile(self.src, path)


class TorchHandlerTest(unittest.TestCase):
    """The handler without torch: what it writes, prints and raises."""

    def test_fail_on(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            out = io.StringIO()
            handler = tracegap.torch.on_trace_ready(d, "worker0", use_gzip=True, out=out, fail_on=tracegap.torch.SLOW_VERDICTS)
            with self.assertRaises(tracegap.VerdictError) as cm:
                handler(FakeProfile(str(EXAMPLE)))
            self.assertEqual(cm.exception.report["verdict"], "data-bound")
            self.assertRegex(os.path.basename(handler.trace or ""), r"^worker0\.\d+\.pt\.trace\.json\.gz$")
            self.assertTrue(out.getvalue().startswith("tracegap: data-bound (high confidence): "))
            with open(handler.report_path or "") as f:
                self.assertEqual(json.load(f), handler.report)
            self.assertTrue(handler.report_path.endswith(".pt.trace.tracegap.json"))


if __name__ == "__main__":
    unittest.main()
