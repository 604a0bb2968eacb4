#!/usr/bin/env bash
# The Hugging Face GPT-2 round trip (test/HF/check_hf_gpt2.py), apart from
# scripts/test.sh because it needs PyTorch and transformers: it sets up and
# builds like the other scripts, puts PyTorch, transformers and safetensors
# into .venv-bench (the benchmarks' environment) and runs offline.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
if ! .venv-bench/bin/python3 -c "import torch, transformers, safetensors, numpy" 2>/dev/null; then
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q --disable-pip-version-check numpy torch transformers safetensors
fi
export PATH="$PWD/build/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error \
  HF_HUB_DISABLE_PROGRESS_BARS=1
exec .venv-bench/bin/python3 test/HF/check_hf_gpt2.py "${1:-build/hf-gpt2}" examples
