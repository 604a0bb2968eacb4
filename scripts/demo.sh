#!/usr/bin/env bash
# The main job: sets up, builds, and compiles the examples, printing each
# model's parameter table and the size of its graph.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
sinterc=build/bin/sinterc
for example in mlp/mlp.pbtxt resnet/resnet.pbtxt gpt/gpt_tiny.pbtxt gpt/gpt124m.pbtxt; do
  echo "== examples/$example"
  "$sinterc" --config "examples/$example" --list-params
  ops=$("$sinterc" --config "examples/$example" --emit=graph | grep -c ' = graph\.' || true)
  echo "graph ops (train and eval phases): $ops"
  echo
done
