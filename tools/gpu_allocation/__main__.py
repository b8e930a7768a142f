"""``python tools/gpu_allocation ARGS`` (what tools/gpu_allocation.sh runs): the checkout's package
and the scripts beside this one importable, then :func:`gpu_allocation.cli.main`."""

from __future__ import annotations

import sys
from pathlib import Path

__all__: list[str] = []

_TOOLS = Path(__file__).resolve().parent.parent
# in place of this folder (run as a script, it is first on the path): the checkout, then tools/
sys.path[0:1] = [str(_TOOLS.parent), str(_TOOLS)]

from gpu_allocation.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
