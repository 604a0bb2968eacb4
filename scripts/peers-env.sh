#!/usr/bin/env bash
# Makes (once) and prints the Python environment of the peers Sinter is
# measured and checked against: PyTorch, JAX, transformers and safetensors
# with NumPy, in .venv-bench. scripts/bench.sh and scripts/test-hf.sh both
# run in it; the tests' own environment (.venv, scripts/setup.sh) stays
# without PyTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(numpy jax torch transformers safetensors)
if ! .venv-bench/bin/python3 -c "import numpy, jax, torch, transformers, safetensors" \
    2>/dev/null; then
  echo "peers-env: installing ${packages[*]} into .venv-bench" >&2
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q --disable-pip-version-check "${packages[@]}" >&2
fi
echo "$PWD/.venv-bench/bin/python3"
