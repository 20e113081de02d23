"""``python -m tracegap ARGS``: run the installed binary with ARGS, as if
it were called directly (``tracegap`` on PATH is the binary itself)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import List, Optional

from . import TracegapError, binary


def main(argv: Optional[List[str]] = None) -> int:
    """Run the binary with ``argv`` (default: the command line). On POSIX
    the process becomes the binary (exec), so signals and exit status are
    its own; elsewhere its exit status is returned."""
    args = sys.argv[1:] if argv is None else argv
    try:
        exe = binary()
    except TracegapError as e:
        print(f"tracegap: {e}", file=sys.stderr)
        return 2
    if os.name == "posix" and argv is None:
        sys.stdout.flush()
        os.execv(exe, [exe, *args])
    return subprocess.call([exe, *args])


if __name__ == "__main__":
    sys.exit(main())
