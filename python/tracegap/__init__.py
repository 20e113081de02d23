"""tracegap: why did the accelerator sit idle?

This package carries the tracegap binary (a static Go program) and a small
API over it. It needs nothing beyond the standard library:

    >>> import tracegap
    >>> report = tracegap.analyze("run.pt.trace.json.gz", min_gap="50us")
    >>> report["verdict"]
    'data-bound'

Hooks run the analysis right after a capture: :mod:`tracegap.torch` for
``torch.profiler.profile(on_trace_ready=...)`` and :mod:`tracegap.jax` around
``jax.profiler.trace``. ``tracegap`` on the command line and
``python -m tracegap`` run the binary itself.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any, Iterable, List, Mapping, Sequence, Union

from .report import Report

try:
    from ._version import __version__
except ImportError:  # a source checkout: the wheel build writes _version.py
    __version__ = "0+unknown"

__all__ = [
    "Report",
    "TracegapError",
    "VerdictError",
    "analyze",
    "analyze_many",
    "binary",
    "run",
    "__version__",
]

PathLike = Union[str, "os.PathLike[str]"]

#: The environment variable that points at another tracegap binary than the
#: one bundled (a development build).
BINARY_ENV = "TRACEGAP_BINARY"


class TracegapError(RuntimeError):
    """The tracegap binary failed: unusable input or bad options.

    ``returncode`` is its exit status and ``stderr`` what it said.
    """

    def __init__(self, message: str, returncode: int = 2, stderr: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class VerdictError(TracegapError):
    """A run's verdict is one the caller asked to fail on.

    ``report`` is the JSON v1 report of the run.
    """

    def __init__(self, message: str, report: Mapping[str, Any]) -> None:
        super().__init__(message, returncode=1)
        self.report = report


def binary() -> str:
    """Return the path of the tracegap binary: $TRACEGAP_BINARY when set,
    else the one the wheel installed among the environment's scripts (as
    ruff and uv do: on PATH, with no Python in between), in the user's
    scripts for ``pip install --user``, or in ``bin`` beside the package
    for ``pip install --target``."""
    env = os.environ.get(BINARY_ENV)
    if env:
        return env
    name = "tracegap.exe" if sys.platform == "win32" else "tracegap"
    dirs = [sysconfig.get_path("scripts")]
    try:
        dirs.append(sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user")))
    except (AttributeError, KeyError):  # Python before 3.10, or no user scheme
        pass
    dirs.append(str(Path(__file__).resolve().parent.parent / "bin"))
    for d in dirs:
        path = Path(d) / name
        if path.is_file():
            return str(path)
    raise TracegapError(
        f"no tracegap binary in {', '.join(dirs)}: install a platform wheel of tracegap, "
        f"or set {BINARY_ENV} to a binary built with go build ./cmd/tracegap"
    )


def run(args: Sequence[str], *, check: bool = True) -> "subprocess.CompletedProcess[str]":
    """Run the tracegap binary with ``args`` and return the finished process,
    its output captured as text. With ``check``, an exit status of 2
    (unusable input, bad usage) raises :class:`TracegapError`; 1 (a failed
    ``check``) is returned."""
    proc = subprocess.run([binary(), *args], capture_output=True, text=True)
    if check and proc.returncode not in (0, 1):
        msg = proc.stderr.strip() or f"tracegap exited with status {proc.returncode}"
        raise TracegapError(msg, proc.returncode, proc.stderr)
    return proc


def option_flags(options: Mapping[str, Any]) -> List[str]:
    """Turn keyword options into command-line flags: ``min_gap="50us"``
    becomes ``--min-gap 50us``, a list repeats the flag, True sets a
    boolean flag, None and False leave it out."""
    flags: List[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            flags.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                flags += [flag, str(v)]
        else:
            flags += [flag, str(value)]
    return flags


def analyze(path: PathLike, **options: Any) -> Report:
    """Analyse one trace and return its JSON v1 report: a :class:`Report`,
    which is a dict with typed attributes (``report.verdict``) that shows
    as the HTML report in a notebook.

    ``path`` is a trace file (Kineto/Chrome JSON, XPlane; gzipped or not) or
    a directory holding one run (a TensorBoard log directory, the ranks of
    one job). ``options`` are the flags of ``tracegap analyze --help`` with
    underscores: ``min_gap="50us"``, ``step_regex="train_step"``,
    ``sync_pattern=["my_barrier"]``. The report's fields are documented in
    docs/report-v1.md; ``report["verdict"]`` is the one-word verdict and
    ``report["summary"]`` the one-line explanation.

    Raises :class:`TracegapError` when the input cannot be analysed, and
    when ``path`` holds several unrelated traces (use :func:`analyze_many`).
    """
    out = _analyze_json([os.fspath(path)], options)
    if isinstance(out, list):
        if len(out) == 1:
            return _report(out[0], options)
        raise TracegapError(f"{os.fspath(path)} holds {len(out)} traces: use tracegap.analyze_many")
    return _report(out, options)


def analyze_many(paths: Union[PathLike, Iterable[PathLike]], **options: Any) -> List[Report]:
    """Analyse several traces (files or directories) and return one JSON v1
    report (:class:`Report`) per trace, in order. A single path (a ``str``
    or ``os.PathLike``, such as a directory of runs) counts as one argument.
    ``options`` are as for :func:`analyze`."""
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        paths = [paths]  # type: ignore[list-item]
    out = _analyze_json([os.fspath(p) for p in paths], options)  # type: ignore[union-attr]
    return [_report(r, options) for r in (out if isinstance(out, list) else [out])]


def _report(data: Mapping[str, Any], options: Mapping[str, Any]) -> Report:
    """Wrap a report, its HTML rendered on demand from the trace it is of,
    once: Jupyter asks for it at every redraw. Rendering it costs a second
    analysis, which most reports never need; a trace changed or removed
    since it was analysed is refused rather than rendered as another
    report."""
    path = str(data.get("source", {}).get("path", ""))
    if not path or path == "-":
        return Report(data, None)
    stamp = _stamp(path)

    @functools.lru_cache(maxsize=1)
    def html() -> str:
        if stamp is None or _stamp(path) != stamp:
            raise TracegapError(f"{path} changed or is gone since it was analysed: analyse it again for its HTML report")
        rest = {k: v for k, v in options.items() if k != "format"}
        return run(["analyze", "--format", "html", *option_flags(rest), "--", path]).stdout

    return Report(data, html)


def _stamp(path: str) -> Any:
    """The size and modification time of path, None when it cannot be
    read: enough to tell that a trace changed between two runs."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def _check_json_options(options: Mapping[str, Any]) -> None:
    """Refuse the options that would keep ``analyze`` from printing its JSON
    report, which :func:`analyze` and :func:`analyze_many` return."""
    fmt = options.get("format")
    if fmt is not None and str(fmt).strip().lower() != "json":
        raise TracegapError(
            f"format={fmt!r}: analyze returns the JSON report; for another format use "
            f"tracegap.run(['analyze', '--format', {str(fmt)!r}, PATH]).stdout, "
            "or a report's HTML in a notebook"
        )
    for key in ("quiet", "output", "o"):
        if options.get(key):
            raise TracegapError(f"{key}=: analyze returns the JSON report, printed on stdout; use tracegap.run for {key}")


def _analyze_json(paths: List[str], options: Mapping[str, Any]) -> Any:
    _check_json_options(options)
    proc = run(["analyze", "--format", "json", *option_flags(options), "--", *paths])
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise TracegapError(f"tracegap printed no JSON report: {e}", proc.returncode, proc.stderr) from e
