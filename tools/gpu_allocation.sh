#!/usr/bin/env bash
# The benchmark and the sliced re-evaluation inside a time-limited GPU allocation: a thin wrapper
# of tools/gpu_allocation.py (its --help says everything). Runs from the repository root with the
# project importable (nothing installed).
#   tools/gpu_allocation.sh size --include .data/cifar10.npz   # before copying to the GPU machine
#   tools/gpu_allocation.sh env bench --out OUT_DIR            # on the GPU machine
#   tools/gpu_allocation.sh reeval --budget 3300 --out OUT_DIR # on the GPU machine, a one-hour job
#   tools/gpu_allocation.sh collect OUT_DIR                    # after copying OUT_DIR back
#   tools/gpu_allocation.sh all --dry-run --out /tmp/gpu_out   # CPU rehearsal
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
exec "${PYTHON:-$(command -v python3 || command -v python)}" tools/gpu_allocation.py "$@"
