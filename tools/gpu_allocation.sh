#!/usr/bin/env bash
# The benchmark and a slice of the re-evaluation in a time-limited GPU allocation (docs/gpu_allocation.md;
# --help lists the options). Runs from the repository root, so relative paths are the checkout's.
#   tools/gpu_allocation.sh all --dry-run --out /tmp/gpu_out   # CPU rehearsal
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-$(command -v python3 || command -v python)}" -u tools/gpu_allocation "$@"
