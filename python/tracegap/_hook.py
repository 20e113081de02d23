"""What the profiler hooks share: analyse a capture, keep its report, say
the verdict in one line and fail on the verdicts asked for."""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any, Collection, Dict, Mapping, Optional

from . import VerdictError, analyze

#: Verdicts that mean the accelerator waited on the host; a convenient
#: ``fail_on`` for tests that guard a training loop.
SLOW_VERDICTS = ("sequential", "data-bound", "host-bound")


class Capture:
    """The last capture a hook analysed.

    ``trace`` is the trace file or run directory analysed, ``report`` its
    JSON v1 report (see :func:`tracegap.analyze`), ``report_path`` where the
    report was written; all None until a capture is analysed.
    """

    def __init__(self) -> None:
        self.trace: Optional[str] = None
        self.report: Optional[Dict[str, Any]] = None
        self.report_path: Optional[str] = None

    @property
    def verdict(self) -> Optional[str]:
        """The verdict of the last capture, or None."""
        return None if self.report is None else self.report.get("verdict")


def report_path(trace: str) -> str:
    """Where the report of ``trace`` goes: beside it, named after it with
    ``.tracegap.json`` (the trace reader skips such files in a directory)."""
    base = trace.rstrip(os.sep)
    for suffix in (".gz", ".json", ".pb"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base + ".tracegap.json"


def conclude(
    capture: Capture,
    trace: str,
    options: Mapping[str, Any],
    fail_on: Collection[str],
    out: Optional[IO[str]],
) -> Dict[str, Any]:
    """Analyse ``trace``, record it in ``capture``, write the report beside
    it, print the one-line verdict to ``out`` (unless None) and raise
    :class:`tracegap.VerdictError` when the verdict is in ``fail_on``."""
    report = analyze(trace, **options)
    path = report_path(trace) if not os.path.isdir(trace) else os.path.join(trace, "tracegap.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    capture.trace, capture.report, capture.report_path = trace, report, path
    line = f"tracegap: {printable(report.get('summary', report.get('verdict', '?')))}"
    if out is not None:
        print(line, file=out)
    if report.get("verdict") in fail_on:
        raise VerdictError(f"{line} (report: {path})", report)
    return report


def printable(s: Any) -> str:
    """Return ``s`` as text with control characters escaped: names in a
    report come from the trace and must not drive a terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(s))


def default_out() -> IO[str]:
    """Where hooks print the verdict by default: standard error, beside the
    training loop's own log."""
    return sys.stderr
