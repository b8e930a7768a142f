#!/usr/bin/env bash
# A GPU visit in one or more device calls: a thin wrapper of tools/gpu_visit.py (its --help says
# everything). Runs from the repository root with the project importable (nothing installed).
#   tools/gpu_visit.sh size --carry .data/cifar10.npz   # here, before a device call
#   tools/gpu_visit.sh env bench                        # device call 1
#   tools/gpu_visit.sh reeval                           # device call 2
#   tools/gpu_visit.sh collect FILES_AT                 # here, after each call
#   tools/gpu_visit.sh all --dry-run --out /tmp/visit   # CPU rehearsal
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
exec "${PYTHON:-$(command -v python3 || command -v python)}" tools/gpu_visit.py "$@"
