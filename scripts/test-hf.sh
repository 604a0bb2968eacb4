#!/usr/bin/env bash
# The Hugging Face GPT-2 round trip (test/HF/check_hf_gpt2.py), apart from
# scripts/test.sh because it needs PyTorch and transformers: it sets up and
# builds like the other scripts, runs in the peers' environment
# (scripts/peers-env.sh: PyTorch, transformers, ...) and offline.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
python=$(scripts/peers-env.sh)
export PATH="$PWD/build/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error \
  HF_HUB_DISABLE_PROGRESS_BARS=1
exec "$python" test/HF/check_hf_gpt2.py "${1:-build/hf-gpt2}" examples
