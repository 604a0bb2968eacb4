#!/usr/bin/env bash
# The benchmarks against PyTorch and JAX (not part of the tests: timings are
# never asserted). Builds Sinter, runs in the peers' Python environment
# (scripts/peers-env.sh), and prints tables with ratios:
#   scripts/bench.sh [STEPS] [--models mlp,resnet18,resnet18-224,cnn,mobilenet,gpt,gpt2,
#                                      gpt-bf16,gpt2-bf16,resnet18-winograd,cnn-winograd]
#                                    the suite: whole training steps of mlp,
#                                    ResNet-18 (CIFAR's and ImageNet's sizes), a
#                                    small CNN, a MobileNet and a small GPT against
#                                    PyTorch eager, torch.compile and JAX jit,
#                                    with compile times, peak memory and the
#                                    share of the GEMM peak
#                                    (bench/train_vs_peers.py)
#   scripts/bench.sh forward         the forward step (bench/forward.py)
#   scripts/bench.sh data-parallel   training on 1 and 2 ranks against
#                                    PyTorch DDP (bench/data_parallel.py)
#   scripts/bench.sh train-step      Sinter's whole training steps, update
#                                    included, on synthetic data, and a
#                                    124M-parameter model (bench/train_step.py)
#   scripts/bench.sh compile         sinterc's time and peak memory for GPT
#                                    shapes from 2 to 48 layers
#                                    (bench/compile_time.py)
#   scripts/bench.sh conv-time       where ResNet-18's and the small CNN's
#                                    steps go (convolution passes, oneDNN's
#                                    reorders, the rest) against PyTorch
#                                    eager's (bench/conv_time.py)
#   scripts/bench.sh conv-nets       small conv nets the suite lacks (MNIST's
#                                    example, the CIFAR tutorial's, batch norm
#                                    throughout, stride-2) on synthetic data
#                                    against PyTorch eager (bench/conv_nets.py)
#   scripts/bench.sh winograd-error  precision.convolution WINOGRAD's error
#                                    against DIRECT's and JAX's, from float64
#                                    (bench/winograd_error.py; no timing)
#   scripts/bench.sh gpu-traffic     GPT-2 124M's CUDA step: kernel launches
#                                    and the bytes they are given, counted
#                                    from sinterc's output (no GPU needed;
#                                    bench/gpu/kernel_traffic.py)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
if [ "${1:-}" = "compile" ]; then
  shift
  exec python3 bench/compile_time.py "$@"
fi
if [ "${1:-}" = "gpu-traffic" ]; then
  shift
  exec python3 bench/gpu/kernel_traffic.py "$@"
fi
if [ "${1:-}" = "train-step" ]; then
  shift
  exec python3 bench/train_step.py "$@"
fi
python=$(scripts/peers-env.sh)
if [ "${1:-}" = "data-parallel" ]; then
  shift
  exec "$python" bench/data_parallel.py "$@"
fi
if [ "${1:-}" = "conv-time" ]; then
  shift
  exec "$python" bench/conv_time.py "$@"
fi
if [ "${1:-}" = "conv-nets" ]; then
  shift
  exec "$python" bench/conv_nets.py "$@"
fi
if [ "${1:-}" = "winograd-error" ]; then
  shift
  exec "$python" bench/winograd_error.py "$@"
fi
if [ "${1:-}" = "forward" ]; then
  shift
  exec "$python" bench/forward.py "$@"
fi
exec "$python" bench/train_vs_peers.py "$@"
