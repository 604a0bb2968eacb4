#!/usr/bin/env bash
# The forward-pass benchmark against PyTorch eager and JAX jit (not part of
# the tests: timings are never asserted). Builds Sinter, sets up a Python
# with torch and jax in .venv-bench, and prints the table with ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
if ! .venv-bench/bin/python3 -c "import torch, jax, numpy" 2>/dev/null; then
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q --disable-pip-version-check numpy jax torch
fi
exec .venv-bench/bin/python3 bench/forward.py "$@"
