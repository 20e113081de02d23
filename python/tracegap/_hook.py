"""What the profiler hooks share: analyse a capture, keep its report, say
the verdict in one line and fail on the verdicts asked for."""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any, Callable, Collection, Dict, List, Mapping, Optional

from . import Report, VerdictError, analyze_many

#: Verdicts that mean the accelerator waited on the host; a convenient
#: ``fail_on`` for tests that guard a training loop.
SLOW_VERDICTS = ("sequential", "data-bound", "host-bound")


class Capture:
    """The last capture a hook analysed.

    ``trace`` is the trace file or run directory analysed; ``reports`` its
    JSON v1 reports (see :func:`tracegap.analyze`), one for the trace or,
    where ``tracegap analyze`` gives one per file of a directory (the hosts
    of a multi-host JAX run), one per file in name order; ``report_paths``
    where each was written. None and empty until a capture is analysed.
    """

    def __init__(self) -> None:
        self.trace: Optional[str] = None
        self.reports: List[Dict[str, Any]] = []
        self.report_paths: List[str] = []

    @property
    def report(self) -> Optional[Dict[str, Any]]:
        """The report of the last capture when it gave one, else None."""
        return self.reports[0] if len(self.reports) == 1 else None

    @property
    def report_path(self) -> Optional[str]:
        """Where :attr:`report` was written, or None."""
        return self.report_paths[0] if len(self.report_paths) == 1 else None

    @property
    def verdict(self) -> Optional[str]:
        """The verdict of :attr:`report`, or None."""
        return None if self.report is None else self.report.get("verdict")

    @property
    def verdicts(self) -> List[Optional[str]]:
        """The verdict of each of :attr:`reports`."""
        return [r.get("verdict") for r in self.reports]


def report_path(trace: str) -> str:
    """Where the report of ``trace`` goes: beside it, named after it with
    ``.tracegap.json``, or ``tracegap.json`` in it for a directory (the
    trace reader skips such files in a directory)."""
    if os.path.isdir(trace):
        return os.path.join(trace, "tracegap.json")
    base = trace
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
    log: Optional[Callable[[Report], None]] = None,
) -> List[Report]:
    """Analyse ``trace`` as ``tracegap analyze`` does, record it in
    ``capture``, write each report, print one verdict line per report to
    ``out`` (unless None) and raise :class:`tracegap.VerdictError` for the
    first report whose verdict is in ``fail_on``.

    One report (a file, a directory of one trace, a job) is written as
    :func:`report_path` of ``trace``; several (a directory of unrelated
    traces) each beside its own file, named in the line. ``log``, when
    given, is called with each report (a :class:`tracegap.Report`: its
    ``verdict``, ``idle_shares()`` and ``html()``) before a failing verdict
    raises: the place to send them to an experiment tracker."""
    reports = analyze_many([trace], **options)
    if len(reports) == 1:
        paths = [report_path(trace)]
    else:
        paths = [report_path(path_of(r)) for r in reports]
    lines = []
    for report, path in zip(reports, paths):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
        what = report.get("summary", report.get("verdict", "?"))
        if len(reports) > 1:
            what = f"{os.path.basename(path_of(report))}: {what}"
        lines.append(f"tracegap: {printable(what)}")
    capture.trace, capture.reports, capture.report_paths = trace, reports, paths
    if out is not None:
        for line in lines:
            print(line, file=out)
    if log is not None:
        for report in reports:
            log(report)
    for report, path, line in zip(reports, paths, lines):
        if report.get("verdict") in fail_on:
            raise VerdictError(f"{line} (report: {path})", report)
    return reports


def path_of(report: Mapping[str, Any]) -> str:
    """The trace a report is of, as tracegap found it."""
    return str(report.get("source", {}).get("path", ""))


def printable(s: Any) -> str:
    """Return ``s`` as text with control characters escaped: names in a
    report come from the trace and must not drive a terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(s))


def default_out() -> IO[str]:
    """Where hooks print the verdict by default: standard error, beside the
    training loop's own log."""
    return sys.stderr
