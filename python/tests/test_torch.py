"""A real capture with torch.profiler (Debian's python3-torch, CPU only)
through tracegap.torch.on_trace_ready."""

from __future__ import annotations

import io
import json
import os
import tempfile
import unittest

import tracegap
import tracegap.torch
from helpers import require

try:
    import torch
    import torch.profiler
except ImportError:  # checked in the test, which skips or fails
    torch = None


class TorchCaptureTest(unittest.TestCase):
    def test_cpu_capture_is_no_device(self) -> None:
        require(torch is not None, "torch is not installed (Debian: apt-get install python3-torch)")
        with tempfile.TemporaryDirectory() as d:
            out = io.StringIO()
            handler = tracegap.torch.on_trace_ready(d, worker_name="rank0", out=out)
            with torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU],
                schedule=torch.profiler.schedule(wait=0, warmup=1, active=3, repeat=1),
                on_trace_ready=handler,
            ) as prof:
                for _ in range(5):
                    x = torch.randn(64, 64)
                    (x @ x).relu().sum().item()
                    prof.step()
            # A CPU-only trace has no device: the verdict says so.
            self.assertEqual(handler.verdict, "no-device")
            self.assertRegex(os.path.basename(handler.trace or ""), r"^rank0\.\d+\.pt\.trace\.json$")
            with open(handler.report_path or "") as f:
                report = json.load(f)
            self.assertEqual(report["verdict"], "no-device")
            self.assertEqual(report["source"]["path"], handler.trace)
            self.assertGreater(report["source"]["events"], 0)
            self.assertTrue(out.getvalue().startswith("tracegap: no-device"), out.getvalue())
            # The directory analyses as the hook's trace, its report skipped.
            self.assertEqual(tracegap.analyze(d)["verdict"], "no-device")


if __name__ == "__main__":
    unittest.main()
