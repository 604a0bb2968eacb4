#!/usr/bin/env bash
# Builds llm.c's GPT-2 trainer (train_gpt2cu, bf16, cuDNN's attention) for
# sm_90 from a checkout of karpathy/llm.c, for the GPU check's peer row.
# llm.c is never part of Sinter: the checkout stays where the caller keeps
# it (an ignored folder), and is built in a copy.
#
#   bench/gpu/llmc/build.sh LLMC_CHECKOUT OUT    writes OUT/train_gpt2cu
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
src=$(cd "$1" && pwd)
out=$2
[ -f "$src/train_gpt2.cu" ] || { echo "llmc: $src is not an llm.c checkout (no train_gpt2.cu)" >&2; exit 1; }
frontend=$(dirname "$(find "$root/.venv" -name cudnn_frontend.h -path '*/include/*' | head -n 1)")
[ -d "$frontend" ] || { echo "llmc: no cuDNN frontend headers in .venv (scripts/setup.sh)" >&2; exit 1; }
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/." "$work/"
# llm.c's Makefile looks for the frontend in ./cudnn-frontend/include.
mkdir -p "$work/cudnn-frontend" && ln -s "$frontend" "$work/cudnn-frontend/include"
# NVRTC: cuDNN's frontend references it for an sm100 engine never used
# here; Sinter's failing stand-ins keep NVRTC out of the link, as in
# Sinter's own programs.
PATH=$cuda/bin:$PATH make -C "$work" train_gpt2cu GPU_COMPUTE_CAPABILITY=90 NO_MULTI_GPU=1 \
  NO_USE_MPI=1 USE_CUDNN=1 NVCC="$cuda/bin/nvcc -include $here/cuda13.h" \
  NVCC_LDFLAGS="$root/runtime/src/cuda/NvrtcAbsent.cpp -L$cuda/lib64 -lcublas -lcublasLt -lcudnn" \
  >"$work/build.log" 2>&1 || { tail -n 20 "$work/build.log" >&2; exit 1; }
mkdir -p "$out"
cp "$work/train_gpt2cu" "$out/"
