"""A context manager around ``jax.profiler.trace`` that analyses what it
captured:

    import jax, tracegap.jax

    opts = jax.profiler.ProfileOptions()
    opts.python_tracer_level = 1
    with tracegap.jax.trace("/tmp/jax-trace", profiler_options=opts,
                            tracegap={"min_gap": "50us"}) as capture:
        for _ in range(10):
            train_step(state, batch).block_until_ready()
    print(capture.verdict)

Every argument but ``tracegap`` is ``jax.profiler.trace``'s, passed on as
given. JAX writes ``<log_dir>/plugins/profile/<run>/<host>.xplane.pb``;
when the block ends, the run it wrote is analysed as ``tracegap analyze
<run>`` does, the report written and the one-line verdict printed. JAX is
imported only when the block is entered: importing this module needs no
JAX, entering :func:`trace` does.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from typing import Any, Iterator, Mapping, Optional, Set

from ._hook import SLOW_VERDICTS, Capture, conclude, default_out

__all__ = ["SLOW_VERDICTS", "trace"]

#: The keys of ``tracegap=`` that are the hook's own; the others are flags
#: of ``tracegap analyze``.
HOOK_OPTIONS = ("fail_on", "quiet", "out", "log")


def _runs(log_dir: str) -> Set[str]:
    profile = os.path.join(log_dir, "plugins", "profile")
    try:
        return {e.path for e in os.scandir(profile) if e.is_dir()}
    except FileNotFoundError:
        return set()


def _profiler() -> Any:
    """Import jax.profiler, saying what needs it when JAX is missing."""
    try:
        import jax.profiler  # deferred: importing tracegap.jax needs no JAX
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] != "jax":
            raise  # JAX is there but broken: its own error says why
        raise ImportError(
            "tracegap.jax.trace needs JAX (it runs jax.profiler.trace around the block), "
            "and jax is not importable here; tracegap.analyze(log_dir) reads a capture "
            "made with jax.profiler without this hook"
        ) from e
    return jax.profiler


@contextlib.contextmanager
def trace(log_dir: str, *args: Any, tracegap: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> Iterator[Capture]:
    """Profile the block with ``jax.profiler.trace(log_dir, *args,
    **kwargs)`` and analyse the run it wrote.

    ``args`` and ``kwargs`` are ``jax.profiler.trace``'s own, passed on
    unchanged: ``create_perfetto_link``, ``create_perfetto_trace``,
    ``profiler_options`` (a ``jax.profiler.ProfileOptions``). tracegap's
    options go in the one mapping ``tracegap``: ``fail_on`` (verdicts that
    raise :class:`tracegap.VerdictError`), ``quiet`` (print nothing),
    ``out`` (where the verdict goes; standard error by default), ``log`` (a
    callable given each :class:`tracegap.Report`, for an experiment
    tracker), and flags of :func:`tracegap.analyze` (``min_gap="50us"``).

    Yields a :class:`Capture` that is filled in when the block ends. A run
    with one ``.xplane.pb`` gives one report, written to
    ``<run>/tracegap.json``; a run with several (one per host) one per
    file, as ``tracegap analyze <run>`` gives them, each written beside its
    file (``host0.xplane.tracegap.json``) and printed on a line naming it.
    An exception from the block is passed on without analysis.
    """
    options = dict(tracegap or {})
    hook = {k: options.pop(k) for k in HOOK_OPTIONS if k in options}
    kwargs = _old_profiler_options(kwargs)
    profiler = _profiler()

    log_dir = os.fspath(log_dir)
    before = _runs(log_dir)
    capture = Capture()
    with profiler.trace(log_dir, *args, **kwargs):
        yield capture
    new = sorted(_runs(log_dir) - before)
    if not new:
        raise FileNotFoundError(f"jax.profiler.trace wrote no run under {os.path.join(log_dir, 'plugins', 'profile')}")
    out = None if hook.get("quiet") else hook.get("out") or default_out()
    conclude(capture, new[-1], options, hook.get("fail_on", ()), out, hook.get("log"))


def _old_profiler_options(kwargs: dict) -> dict:
    """Expand the form of tracegap 0.1.0.dev0 before ProfileOptions passed
    through: ``profiler_options`` a dict of jax.profiler.trace keywords."""
    opts = kwargs.get("profiler_options")
    if not isinstance(opts, Mapping):
        return kwargs
    warnings.warn(
        "tracegap.jax.trace(profiler_options={...}) as keywords of jax.profiler.trace is deprecated: "
        "pass them as keywords, and profiler_options a jax.profiler.ProfileOptions",
        DeprecationWarning,
        stacklevel=4,
    )
    rest = {k: v for k, v in kwargs.items() if k != "profiler_options"}
    return {**rest, **opts}
