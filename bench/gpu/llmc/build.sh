#!/usr/bin/env bash
# Builds llm.c's GPT-2 trainer (train_gpt2cu, bf16, cuDNN's attention) for
# sm_90 from a checkout of karpathy/llm.c, for the GPU check's peer row.
# llm.c is never part of Sinter: the checkout stays where the caller keeps
# it (an ignored folder), and is built in a fresh copy.
#
#   bench/gpu/llmc/build.sh LLMC_CHECKOUT OUT    writes OUT/train_gpt2cu
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
src=$(cd "$1" && pwd)
out=$2
[ -f "$src/train_gpt2.cu" ] || { echo "llmc: $src is not an llm.c checkout (no train_gpt2.cu)" >&2; exit 1; }
header=$(find "$root/.venv" -name cudnn_frontend.h -path '*/include/*' | head -n 1)
[ -n "$header" ] || { echo "llmc: no cuDNN frontend headers in .venv (scripts/setup.sh)" >&2; exit 1; }
frontend=$(dirname "$header")
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/." "$work/"
rm -rf "$work/build" # objects an earlier build of the checkout left
# llm.c's Makefile wants a frontend folder to exist before it takes
# CUDNN_FRONTEND_PATH; both name .venv's.
mkdir -p "$work/cudnn-frontend" && ln -s "$frontend" "$work/cudnn-frontend/include"
# The link line replaces the Makefile's (it adds -lnvidia-ml, which only a
# machine with the driver has): NVML only where its header makes llm.c use
# it, from the toolkit's stubs; NVRTC, which cuDNN's frontend references for
# an sm100 engine never used here, as Sinter's failing stand-ins; an rpath
# so that ldd finds CUDA's libraries when the bundle collects the others.
libs="-L$cuda/lib64 -lcublas -lcublasLt -lcudnn -Xlinker -rpath,$cuda/lib64"
[ -f "$cuda/include/nvml.h" ] && libs="$libs -L$cuda/lib64/stubs -lnvidia-ml"
PATH=$cuda/bin:$PATH make -C "$work" train_gpt2cu GPU_COMPUTE_CAPABILITY=90 NO_MULTI_GPU=1 \
  NO_USE_MPI=1 USE_CUDNN=1 CUDNN_FRONTEND_PATH="$frontend" \
  NVCC="$cuda/bin/nvcc -include $here/cuda13.h" \
  NVCC_LDFLAGS="$root/runtime/src/cuda/NvrtcAbsent.cpp $libs" \
  >"$work/build.log" 2>&1 || { tail -n 20 "$work/build.log" >&2; exit 1; }
mkdir -p "$out"
cp "$work/train_gpt2cu" "$out/"
