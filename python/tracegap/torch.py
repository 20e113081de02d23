"""A ``torch.profiler`` hook: write the trace as PyTorch's TensorBoard
handler does, then analyse it and say the verdict.

    import torch.profiler
    import tracegap.torch

    with torch.profiler.profile(
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=5),
        on_trace_ready=tracegap.torch.on_trace_ready("./log/run1"),
    ) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

Each trace lands in ``./log/run1/<worker>.<ns>.pt.trace.json`` (what
TensorBoard's profiler plugin and ``tracegap DIR`` read), its report in
``<worker>.<ns>.pt.trace.tracegap.json`` beside it, and one line such as
``tracegap: data-bound (high confidence): ...`` on standard error.
``fail_on=tracegap.torch.SLOW_VERDICTS`` turns a slow verdict into a
:class:`tracegap.VerdictError`, to fail a test.

This module does not import torch: the handler only calls the profiler's
``export_chrome_trace``.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any, Callable, Collection, IO, Optional

from ._hook import SLOW_VERDICTS, Capture, conclude, default_out

__all__ = ["SLOW_VERDICTS", "TraceHandler", "on_trace_ready"]


class TraceHandler(Capture):
    """The callable given to ``torch.profiler.profile(on_trace_ready=...)``.

    Its attributes (``trace``, ``report``, ``report_path``, ``verdict``,
    ``reports``, ``report_paths``, ``verdicts``)
    describe the last trace it analysed; see :func:`on_trace_ready`.
    """

    def __init__(
        self,
        dir_name: str,
        worker_name: Optional[str] = None,
        use_gzip: bool = False,
        *,
        fail_on: Collection[str] = (),
        out: Optional[IO[str]] = None,
        options: Optional[dict] = None,
        log: Optional[Callable[[Any], None]] = None,
    ) -> None:
        super().__init__()
        self.log = log
        self.dir_name = os.fspath(dir_name)
        self.worker_name = worker_name
        self.use_gzip = use_gzip
        self.fail_on = tuple(fail_on)
        self.out = out
        self.options = dict(options or {})

    def trace_path(self) -> str:
        """Name the next trace as ``torch.profiler.tensorboard_trace_handler``
        does: ``<worker>.<time in ns>.pt.trace.json[.gz]``, the worker being
        ``<host>_<pid>`` unless given."""
        worker = self.worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json"
        if self.use_gzip:
            name += ".gz"
        return os.path.join(self.dir_name, name)

    def __call__(self, prof: Any) -> None:
        """Export ``prof``'s trace, analyse it and report the verdict."""
        os.makedirs(self.dir_name, exist_ok=True)
        path = self.trace_path()
        prof.export_chrome_trace(path)
        conclude(self, path, self.options, self.fail_on, self.out, self.log)


def on_trace_ready(
    dir_name: str,
    worker_name: Optional[str] = None,
    use_gzip: bool = False,
    *,
    fail_on: Collection[str] = (),
    quiet: bool = False,
    out: Optional[IO[str]] = None,
    log: Optional[Callable[[Any], None]] = None,
    **options: Any,
) -> TraceHandler:
    """Return a handler for ``torch.profiler.profile(on_trace_ready=...)``.

    ``dir_name``, ``worker_name`` and ``use_gzip`` mean what they mean to
    ``torch.profiler.tensorboard_trace_handler``. After each trace is
    written the handler analyses it (``options`` as for
    :func:`tracegap.analyze`, such as ``min_gap="50us"``), writes the JSON
    report beside it and prints the one-line verdict to ``out`` (standard
    error by default; nothing when ``quiet``). When the verdict is in
    ``fail_on`` (for instance :data:`SLOW_VERDICTS`) it raises
    :class:`tracegap.VerdictError` carrying the report. ``log``, when given,
    is called with the report (a :class:`tracegap.Report`) first: to log the
    verdict, ``report.idle_shares()`` and ``report.html()`` to an
    experiment tracker (docs/python.md has Weights & Biases and MLflow).
    """
    if out is None and not quiet:
        out = default_out()
    return TraceHandler(dir_name, worker_name, use_gzip, fail_on=fail_on, out=None if quiet else out, options=options, log=log)
