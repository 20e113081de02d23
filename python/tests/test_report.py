"""The typed report: a dict with attributes, its HTML in a notebook, its
fields held to docs/report-v1.md, and the hooks' logging callback."""

from __future__ import annotations

import html
import io
import json
import os
import pathlib
import re
import shutil
import tempfile
import unittest

import tracegap
import tracegap.report
import tracegap.torch
from helpers import EXAMPLE, ROOT
from test_package import FakeProfile


class ReportTest(unittest.TestCase):
    def test_typed(self) -> None:
        # The example: data-bound, 28.4% of the window idle on input.
        r = tracegap.analyze(EXAMPLE)
        self.assertIsInstance(r, tracegap.Report)
        self.assertIsInstance(r, dict)
        self.assertEqual((r.verdict, r.confidence), ("data-bound", "high"))
        self.assertEqual(r.verdict, r["verdict"])
        self.assertEqual(len(r.steps), 5)
        self.assertAlmostEqual(r.idle_shares()["input"], 0.284, places=3)
        self.assertEqual(json.loads(json.dumps(r))["verdict"], "data-bound")

    def test_repr_html(self) -> None:
        # The notebook gets the page in a sandboxed frame, whose styles
        # cannot reach the notebook; html() gives the page itself.
        r = tracegap.analyze(EXAMPLE)
        shown = r._repr_html_()
        m = re.fullmatch(r'<iframe [^>]*sandbox="allow-scripts"[^>]* srcdoc="([^"]*)"></iframe>', shown, re.S)
        self.assertIsNotNone(m, shown[:200])
        page = html.unescape(m.group(1))
        self.assertEqual(page, r.html())
        self.assertTrue(page.lstrip().lower().startswith("<!doctype html"), page[:80])
        self.assertIn("data-bound", page)

    def test_html_of_a_trace_gone(self) -> None:
        # A trace removed after its analysis is not rendered again: html()
        # says so, and the notebook shows the verdict and summary.
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "run.pt.trace.json.gz")
            shutil.copy(EXAMPLE, trace)
            r = tracegap.analyze(trace)
            os.remove(trace)
            with self.assertRaisesRegex(tracegap.TracegapError, "changed or is gone"):
                r.html()
            shown = r._repr_html_()
        self.assertIn("<b>data-bound</b> (high confidence)", shown)
        self.assertIn("<td>input</td><td>28.4%</td>", shown)
        self.assertIn("changed or is gone", shown)
        self.assertNotIn("<iframe", shown)

    def test_analyze_many_one_path(self) -> None:
        # One path, a folder of two runs, is one argument, not its letters.
        with tempfile.TemporaryDirectory() as d:
            for name in ("a", "b"):
                os.mkdir(os.path.join(d, name))
                shutil.copy(EXAMPLE, os.path.join(d, name, "run.pt.trace.json.gz"))
            many = tracegap.analyze_many(d)
            self.assertEqual([r.verdict for r in many], ["data-bound", "data-bound"])
            self.assertEqual(len(tracegap.analyze_many(pathlib.Path(d) / "a")), 1)

    def test_tables(self) -> None:
        r = tracegap.analyze(EXAMPLE)
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(ImportError, "needs pandas"):
                r.tables()
            return
        tables = r.tables()
        self.assertEqual(len(tables["steps"]), 5)

    def test_fields_documented(self) -> None:
        # Every field the TypedDicts name is documented in docs/report-v1.md
        # and present in a real report.
        doc = (ROOT / "docs" / "report-v1.md").read_text(encoding="utf-8")
        documented = set(re.findall(r"^\| `([a-z_]+)` \|", doc, re.M))
        r = tracegap.analyze(EXAMPLE)
        present = {
            tracegap.report.SourceDict: r["source"],
            tracegap.report.DeviceDict: r["devices"][0],
            tracegap.report.IdleDict: r["idle_breakdown"],
            tracegap.report.StepDict: r["steps"][0],
            tracegap.report.FindingDict: r["findings"][0],
        }
        for td, obj in present.items():
            for key in td.__annotations__:
                self.assertIn(key, documented, f"{td.__name__}.{key} is not in docs/report-v1.md")
                self.assertIn(key, obj, f"{td.__name__}.{key} is not in a report")

    def test_hook_log(self) -> None:
        got = []
        with tempfile.TemporaryDirectory() as d:
            handler = tracegap.torch.on_trace_ready(d, "w0", out=io.StringIO(), log=got.append)
            handler(FakeProfile(str(EXAMPLE)))
        self.assertEqual([r.verdict for r in got], ["data-bound"])
        self.assertGreater(got[0].idle_shares()["input"], 0.2)


class MetadataTest(unittest.TestCase):
    def test_project_metadata(self) -> None:
        # What pip and package indexes show: where the project lives and
        # what it is for.
        from importlib import metadata

        md = metadata.metadata("tracegap")
        urls = dict(u.split(", ", 1) for u in md.get_all("Project-URL") or [])
        self.assertEqual(set(urls), {"Source", "Documentation", "Issues"})
        self.assertIn("Topic :: System :: Benchmark", md.get_all("Classifier") or [])
        self.assertEqual(md["Version"], tracegap.__version__)


if __name__ == "__main__":
    unittest.main()
