"""A context manager around ``jax.profiler.trace`` that analyses what it
captured:

    import tracegap.jax

    with tracegap.jax.trace("/tmp/jax-trace") as capture:
        for _ in range(10):
            train_step(state, batch).block_until_ready()
    print(capture.verdict)

JAX writes ``<log_dir>/plugins/profile/<run>/<host>.xplane.pb``; when the
block ends, the run it wrote is analysed, its report written to
``<run>/tracegap.json`` and the one-line verdict printed. JAX is imported
only when the block is entered.
"""

from __future__ import annotations

import contextlib
import os
from typing import IO, Any, Collection, Iterator, Optional, Set

from ._hook import SLOW_VERDICTS, Capture, conclude, default_out

__all__ = ["SLOW_VERDICTS", "trace"]


def _runs(log_dir: str) -> Set[str]:
    profile = os.path.join(log_dir, "plugins", "profile")
    try:
        return {e.path for e in os.scandir(profile) if e.is_dir()}
    except FileNotFoundError:
        return set()


@contextlib.contextmanager
def trace(
    log_dir: str,
    *,
    fail_on: Collection[str] = (),
    quiet: bool = False,
    out: Optional[IO[str]] = None,
    profiler_options: Optional[dict] = None,
    **options: Any,
) -> Iterator[Capture]:
    """Profile the block with ``jax.profiler.trace(log_dir)`` and analyse
    the run it wrote.

    Yields a :class:`Capture` that is filled in when the block ends.
    ``profiler_options`` are passed to ``jax.profiler.trace`` (such as
    ``create_perfetto_link``); ``options`` to :func:`tracegap.analyze`. The
    verdict goes to ``out`` (standard error by default; nothing when
    ``quiet``); a verdict in ``fail_on`` raises
    :class:`tracegap.VerdictError`. An exception from the block is passed
    on without analysis.
    """
    import jax.profiler  # deferred: importing tracegap.jax needs no JAX

    log_dir = os.fspath(log_dir)
    before = _runs(log_dir)
    capture = Capture()
    with jax.profiler.trace(log_dir, **(profiler_options or {})):
        yield capture
    new = sorted(_runs(log_dir) - before)
    if not new:
        raise FileNotFoundError(f"jax.profiler.trace wrote no run under {os.path.join(log_dir, 'plugins', 'profile')}")
    if out is None and not quiet:
        out = default_out()
    conclude(capture, new[-1], options, fail_on, None if quiet else out)
