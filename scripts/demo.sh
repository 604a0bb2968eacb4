#!/usr/bin/env bash
# The main job: set up, build, compile the examples into programs, train the
# MLP on the 8x8 digits (scikit-learn's, converted to .npy) on 2 local ranks
# (sinter-run, Gloo) and evaluate it, then evaluate resnet and gpt_tiny at
# initialisation on synthetic data.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
sinterc=build/bin/sinterc
mkdir -p build/examples

echo "== examples/mlp: 8x8 digits"
.venv/bin/python3 examples/mlp/make_digits.py
"$sinterc" --config examples/mlp/mlp.pbtxt --list-params
"$sinterc" --config examples/mlp/mlp.pbtxt -o build/examples/mlp
build/examples/mlp --eval
echo "-- training on 2 ranks (300 steps of SGD with momentum, as examples/mlp/mlp.pbtxt says)"
build/bin/sinter-run -n 2 build/examples/mlp --set eval.batches=0 \
  --set checkpoint.dir=build/examples/mlp-checkpoints
build/examples/mlp --eval --init build/examples/mlp-checkpoints/step-300.safetensors

for example in resnet/resnet gpt/gpt_tiny gpt/gpt124m; do
  echo
  echo "== examples/$example.pbtxt"
  "$sinterc" --config "examples/$example.pbtxt" --list-params | tail -n 3
done
echo
echo "== resnet and gpt_tiny on synthetic data"
"$sinterc" --config examples/resnet/resnet.pbtxt -o build/examples/resnet
build/examples/resnet --eval --set eval.batches=2
"$sinterc" --config examples/gpt/gpt_tiny.pbtxt -o build/examples/gpt_tiny
build/examples/gpt_tiny --eval --set eval.batches=20
echo
echo "programs: build/examples/{mlp,resnet,gpt_tiny} (run one with --help)"
