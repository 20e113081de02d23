"""The typed report :func:`tracegap.analyze` returns.

A :class:`Report` is the JSON v1 report (docs/report-v1.md) as a dict, so
``report["verdict"]`` and ``json.dump(report, f)`` work as they always did,
with typed attributes for what a notebook or a test reaches for, the HTML
report when a notebook shows it, and its tables as pandas DataFrames where
pandas is installed. The ``TypedDict`` classes name the fields for type
checkers; a test holds them to docs/report-v1.md.
"""

from __future__ import annotations

import html as _html
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional

if sys.version_info >= (3, 8):
    from typing import TypedDict
else:  # pragma: no cover - Python 3.7 has no TypedDict
    TypedDict = dict

__all__ = ["Report", "StepDict", "DeviceDict", "FindingDict", "IdleDict", "SourceDict"]


class SourceDict(TypedDict, total=False):
    path: str
    format: str
    framework: str
    bytes: int
    events: int


class DeviceDict(TypedDict, total=False):
    id: str
    busy_ns: int
    idle_ns: int
    span_ns: int
    utilization: float
    gaps: int


class IdleDict(TypedDict, total=False):
    in_sync_ns: int
    after_sync_ns: int
    input_ns: int
    runtime_ns: int
    host_ns: int
    untraced_ns: int
    stalled_ns: int
    below_min_gap_ns: int


class StepDict(TypedDict, total=False):
    name: str
    start_ns: int
    dur_ns: int
    device_busy_ns: int
    input_ns: int
    sync_ns: int
    verdict: str


class FindingDict(TypedDict, total=False):
    id: str
    severity: str
    message: str
    fix: str


class Report(dict):
    """A tracegap JSON v1 report: a dict, with typed attributes.

    ``verdict``, ``confidence`` and ``summary`` are the one-word verdict,
    its confidence and the one-line explanation; ``steps``, ``devices``,
    ``findings`` and ``idle`` the report's lists and idle breakdown.
    """

    def __init__(self, data: Mapping[str, Any], html: Optional[Callable[[], str]] = None) -> None:
        super().__init__(data)
        self._html = html

    @property
    def verdict(self) -> str:
        return str(self.get("verdict", ""))

    @property
    def confidence(self) -> str:
        return str(self.get("confidence", ""))

    @property
    def summary(self) -> str:
        return str(self.get("summary", ""))

    @property
    def source(self) -> SourceDict:
        return self.get("source", {})

    @property
    def steps(self) -> List[StepDict]:
        return list(self.get("steps") or [])

    @property
    def devices(self) -> List[DeviceDict]:
        return list(self.get("devices") or [])

    @property
    def findings(self) -> List[FindingDict]:
        return list(self.get("findings") or [])

    @property
    def idle(self) -> IdleDict:
        return self.get("idle_breakdown", {})

    def idle_shares(self) -> Dict[str, float]:
        """Each cause's idle as a share of the window (0-1), as the text
        report's table gives it: ``{"input": 0.284, ...}``."""
        dur = max(int(self.get("window", {}).get("dur_ns", 0)), 1)
        return {k[: -len("_ns")]: v / dur for k, v in self.idle.items() if k.endswith("_ns")}

    def html(self) -> str:
        """The HTML report of the same trace and options, as ``tracegap
        analyze --format html`` writes it."""
        if self._html is None:
            raise ValueError("this report was not made by tracegap.analyze: no trace to render")
        return self._html()

    def _repr_html_(self) -> str:
        """What Jupyter shows: the HTML report in a sandboxed frame, so that
        its styles stay off the notebook's page; the verdict and its
        summary alone when the report cannot be rendered (the trace is
        gone), since a display must not raise."""
        try:
            page = self.html()
        except Exception as e:  # noqa: BLE001 - shown, not raised
            return _summary_html(self, str(e))
        return (
            '<iframe class="tracegap-report" title="tracegap report" sandbox="allow-scripts" '
            'style="width:100%;height:720px;border:1px solid #ccc" srcdoc="' + _html.escape(page, quote=True) + '"></iframe>'
        )

    def tables(self) -> Dict[str, Any]:
        """The report's tables as pandas DataFrames: ``steps``, ``devices``,
        ``findings``, ``call_sites``. Needs pandas."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Report.tables() needs pandas (pip install pandas); the report itself is a dict") from e
        return {k: pd.DataFrame(self.get(k) or []) for k in ("steps", "devices", "findings", "call_sites")}


def _summary_html(r: Report, why: str) -> str:
    """The verdict, its summary and the idle shares as a small HTML block,
    with why the full report is missing: every text escaped."""
    rows = "".join(
        f"<tr><td>{_html.escape(k)}</td><td>{v:.1%}</td></tr>" for k, v in r.idle_shares().items() if v > 0
    )
    return (
        f'<div class="tracegap-summary"><p><b>{_html.escape(r.verdict)}</b> ({_html.escape(r.confidence)} confidence): '
        f"{_html.escape(r.summary)}</p>"
        + (f"<table><tr><th>idle on</th><th>share of the window</th></tr>{rows}</table>" if rows else "")
        + f"<p><small>No full report: {_html.escape(why)}</small></p></div>"
    )
