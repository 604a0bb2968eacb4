#!/usr/bin/env bash
# The data-parallel training benchmark against PyTorch DDP on 1 and 2 ranks
# of this machine (not part of the tests: timings are never asserted).
# Builds Sinter, sets up a Python with torch in .venv-bench, prints the table.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
if ! .venv-bench/bin/python3 -c "import torch, jax, numpy" 2>/dev/null; then
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q --disable-pip-version-check numpy jax torch
fi
exec .venv-bench/bin/python3 bench/data_parallel.py "$@"
