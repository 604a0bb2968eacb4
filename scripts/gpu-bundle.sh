#!/usr/bin/env bash
# Builds, here, the folder that one part of scripts/gpu-check.sh runs in on
# a GPU machine that has only the NVIDIA driver and CUDA's libraries
# (cuBLASLt, cuDNN as Python packages): the CUDA programs of the part's
# checks, the CPU results they are compared with (computed here), and every
# other shared library the programs need, with the loader of the glibc they
# were built for; and that folder packed as DIR.tar.xz, what travels to
# the GPU machine (at most 60 MiB; the folder itself may be larger). There:
#
#   python3 -c 'import tarfile; tarfile.open("DIR.tar.xz").extractall("/tmp")'
#   /tmp/gpu-bundle-PART/gpu-check.sh PART
#
#   scripts/gpu-bundle.sh [PART [DIR]]   PART: base (default), multi,
#                                        sanitize or big; DIR:
#                                        build/gpu-bundle-PART
#
# GPT-2 124M is compiled for a micro-batch of $GPT124M_MICRO (default 16)
# sequences of 1024 tokens in f32, and with compute: BF16 and activations:
# BF16 (torch.autocast's rounding, as the PyTorch rows run) for the largest
# of 64, 32 and 16 that sinterc's memory report fits in three quarters of
# an H200 (139 GiB); the big part has it at the same micro-batch with
# compute: BF16 alone, for what bf16 activations buy, and with residual:
# BF16 too, for what the bf16 residual stream buys.
#
# With LLMC set to a checkout of karpathy/llm.c (kept in an ignored
# folder, never part of Sinter; a relative path is taken from where the
# script is called), the base part also carries its GPT-2
# trainer, train_gpt2cu, built for sm_90, as a peer for the GPT-2 124M bf16
# row (bench/gpu/llmc/build.sh).
#
# GPT-2 350M, 774M and 1.5B (part big) are compiled with compute: BF16 and
# activations: BF16 for the largest of 16, 8 and 4 sequences whose memory
# report fits in 60 GiB (three quarters of an H100, so that they fit on
# either).
#
# The check runs on an H100 or H200: its large programs (ops, GPT-2 124M)
# carry sm_90's kernels alone ($HOPPER), which keeps the part within its
# limit; the small ones carry every chip's, as users' programs do.
set -euo pipefail
[ -n "${LLMC:-}" ] && LLMC=$(cd "$LLMC" && pwd)
cd "$(dirname "$0")/.."
root=$PWD
part=${1:-base}
case "$part" in
  base | multi | sanitize | big) ;;
  *) echo "usage: $0 [base | multi | sanitize | big] [DIR]" >&2; exit 2 ;;
esac
out=${2:-build/gpu-bundle-$part}
wants() { # PART...: whether this bundle's part is one of them
  local p
  for p in "$@"; do [ "$p" = "$part" ] && return 0; done
  return 1
}
micro=${GPT124M_MICRO:-16}
# The first of MICROS (largest first) at which CONFIG compiled with ARGS
# plans at most LIMIT MiB, as "MICRO MIB" (the memory report's total);
# none fitting ends the bundle, naming the smallest's plan.
largest_micro() { # CONFIG LIMIT "MICROS" ARGS...
  local config=$1 limit=$2 micros=$3 m mib
  shift 3
  for m in $micros; do
    mib=$("$sinterc" --config "$config" "$@" --set batch.micro="$m" --set batch.global="$m" \
      --report-memory | awk '$1 == "total" { print int($2) }')
    if [ -n "$mib" ] && [ "$mib" -le "$limit" ]; then
      echo "$m $mib"
      return 0
    fi
  done
  echo "gpu-bundle: $config does not fit in $limit MiB at micro-batch $m (${mib:-no report} MiB)" >&2
  return 1
}
scripts/setup.sh >/dev/null
scripts/build.sh >/dev/null
sinterc=$root/build/bin/sinterc
HOPPER=--cuda-arch=sm_90
if [ ! -f build/lib/sinter-program-cuda.link ]; then
  echo "gpu-bundle: this build has no CUDA device (the CUDA toolkit was not found)" >&2
  exit 1
fi
python=$root/.venv/bin/python3

rm -rf "$out"
mkdir -p "$out/lib" "$out/ref"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp test/E2E/sinter_testing.py bench/gpu/checks.py bench/models_torch.py \
   bench/gpu/torch_gpt2.py bench/gpu/check_*.sh scripts/gpu-check.sh "$out/"
PYTHONPATH=test/E2E "$python" bench/gpu/checks.py prepare "$work"

if wants base; then
echo "gpu-bundle: the ops check (forward and gradient of every op)"
cp -r "$work/ops" "$out/ops"
(cd "$out/ops" && "$sinterc" --config ops.pbtxt -o "$work/ops_cpu" &&
   "$sinterc" --config ops.pbtxt --set device=CUDA $HOPPER -o ops)
"$work/ops_cpu" --config "$out/ops/ops.pbtxt" --eval --init "$out/ops/init.safetensors" \
  --outputs "$out/ref/ops_outputs" >/dev/null
"$work/ops_cpu" --config "$out/ops/ops.pbtxt" --init "$out/ops/init.safetensors" \
  --gradients "$out/ref/ops_gradients" >/dev/null
# The same ops with compute: BF16 (matmuls read bf16-rounded inputs), and
# with activations: BF16 too (the matmuls making activations write bf16).
for variant in bf16 bf16act; do
  flags=(--set precision.compute=BF16)
  [ "$variant" = bf16act ] && flags+=(--set precision.activations=BF16)
  (cd "$out/ops" && "$sinterc" --config ops.pbtxt "${flags[@]}" -o "$work/ops_${variant}_cpu" &&
     "$sinterc" --config ops.pbtxt "${flags[@]}" --set device=CUDA $HOPPER -o "ops_$variant")
  "$work/ops_${variant}_cpu" --config "$out/ops/ops.pbtxt" --eval --init "$out/ops/init.safetensors" \
    --outputs "$out/ref/ops_${variant}_outputs" >/dev/null
  "$work/ops_${variant}_cpu" --config "$out/ops/ops.pbtxt" --init "$out/ops/init.safetensors" \
    --gradients "$out/ref/ops_${variant}_gradients" >/dev/null
done

fi

# A training check's float32 noise floor, each tensor's: how far the CPU
# program's run moves from its reference when it starts from its start
# perturbed at float32's rounding, twice (checks.py compare).
noise_floor() { # NAME CPU_PROGRAM ARGS...
  local name=$1 prog=$2 seed
  shift 2
  local checks=(env PYTHONPATH=test/E2E "$python" bench/gpu/checks.py)
  "$prog" "$@" --set steps=0 --save "$work/${name}_start.safetensors" >/dev/null
  for seed in 1 2; do
    "${checks[@]}" perturb "$work/${name}_start.safetensors" \
      "$work/${name}_start$seed.safetensors" "$seed"
    "$prog" "$@" --init "$work/${name}_start$seed.safetensors" \
      --save "$work/${name}_run$seed.safetensors" >/dev/null
  done
  "${checks[@]}" noise-floor "$out/ref/${name}_floor.json" "$out/ref/$name.safetensors" \
    "$work/${name}_run"?.safetensors
}

if wants base multi sanitize; then
echo "gpu-bundle: 20 training steps of mlp and gpt_tiny"
cp -r "$work/mlp" "$out/mlp"
"$sinterc" --config examples/mlp/mlp.pbtxt -o "$work/mlp_cpu"
"$sinterc" --config examples/mlp/mlp.pbtxt --set device=CUDA -o "$out/mlp/mlp"
"$work/mlp_cpu" --config "$out/mlp/train.pbtxt" --save "$out/ref/mlp.safetensors" >/dev/null
noise_floor mlp "$work/mlp_cpu" --config "$out/mlp/train.pbtxt"
mkdir -p "$out/gpt_tiny"
"$sinterc" --config examples/gpt/gpt_tiny.pbtxt --set steps=20 -o "$work/gpt_tiny_cpu"
"$sinterc" --config examples/gpt/gpt_tiny.pbtxt --set steps=20 --set device=CUDA \
  -o "$out/gpt_tiny/gpt_tiny"
# With compute: BF16 (cuDNN's fused attention), for the CUDA graphs' check.
"$sinterc" --config examples/gpt/gpt_tiny.pbtxt --set steps=20 --set device=CUDA \
  --set precision.compute=BF16 -o "$out/gpt_tiny/gpt_tiny_bf16"
"$work/gpt_tiny_cpu" --save "$out/ref/gpt_tiny.safetensors" >/dev/null
noise_floor gpt_tiny "$work/gpt_tiny_cpu"
# Two heads of 32: f32 attention on Sinter's own fused kernels.
"$sinterc" --config examples/gpt/gpt_tiny.pbtxt --set steps=20 --set set.heads=2 \
  -o "$work/gpt_tiny_heads32_cpu"
"$sinterc" --config examples/gpt/gpt_tiny.pbtxt --set steps=20 --set set.heads=2 \
  --set device=CUDA -o "$out/gpt_tiny/gpt_tiny_heads32"
"$work/gpt_tiny_heads32_cpu" --save "$out/ref/gpt_tiny_heads32.safetensors" >/dev/null
noise_floor gpt_tiny_heads32 "$work/gpt_tiny_heads32_cpu"
fi

if wants base; then
# At a quarter of its width (0.7M parameters): the same layers and library
# calls, and a reference that keeps the bundle small.
echo "gpu-bundle: 10 training steps of ResNet-18 at width 16 (cuDNN's convolutions and batch-norm)"
mkdir -p "$out/resnet"
resnet=(--config examples/resnet/resnet.pbtxt -D width=16 --set batch.global=32
        --set batch.micro=32 --set steps=10 --set log.every=5)
"$sinterc" "${resnet[@]}" -o "$work/resnet_cpu" 2>/dev/null
"$sinterc" "${resnet[@]}" --set device=CUDA -o "$out/resnet/resnet" 2>/dev/null
"$work/resnet_cpu" --save "$out/ref/resnet.safetensors" >/dev/null
noise_floor resnet "$work/resnet_cpu"

echo "gpu-bundle: GPT-2 124M, micro-batch $micro x 1024 tokens"
mkdir -p "$out/gpt124m"
"$sinterc" --config examples/gpt/gpt124m.pbtxt --set device=CUDA $HOPPER \
  --set "data.train={synthetic {}}" --set batch.micro="$micro" \
  --set batch.global="$micro" --set steps=30 --set log.every=1 \
  -o "$out/gpt124m/gpt124m"
echo "$micro" > "$out/gpt124m/micro"
# The bf16 step's largest micro-batch: its planned bytes (the memory
# report's total) within three quarters of the GPU.
bf16=(--set device=CUDA --set precision.compute=BF16 --set precision.activations=BF16)
read -r micro_bf16 mib < <(largest_micro examples/gpt/gpt124m.pbtxt $((139 * 1024 * 3 / 4)) \
  "64 32 16" "${bf16[@]}")
[ -n "$micro_bf16" ] || exit 1
echo "gpu-bundle: GPT-2 124M bf16 (activations bf16), micro-batch $micro_bf16 x 1024 tokens ($mib MiB planned)"
"$sinterc" --config examples/gpt/gpt124m.pbtxt "${bf16[@]}" $HOPPER \
  --set "data.train={synthetic {}}" --set batch.micro="$micro_bf16" \
  --set batch.global="$micro_bf16" --set steps=30 --set log.every=1 \
  -o "$out/gpt124m/gpt124m_bf16"
echo "$micro_bf16" > "$out/gpt124m/micro_bf16"

if [ -n "${LLMC:-}" ]; then
  echo "gpu-bundle: llm.c's train_gpt2cu from $LLMC, the peer beside GPT-2 124M bf16"
  bench/gpu/llmc/build.sh "$LLMC" "$out/llmc"
fi
fi

# The collectives' part (gpu-check.sh multi, sanitize): gpt_tiny under each
# sharded strategy for 2 ranks, and under FULL_SHARD for 1 (NCCL's calls for
# one rank); GPT-2 124M bf16 at micro-batch 8 and global batch 16, under DDP
# (one rank: 2 micro-batches) and FULL_SHARD for 2 ranks, with the memory
# report's total of the latter (MiB per rank).
if wants multi sanitize; then
echo "gpu-bundle: the collectives' programs (gpt_tiny sharded, GPT-2 124M FULL_SHARD)"
mkdir -p "$out/multi"
strategies=(FULL_SHARD)
wants multi && strategies=(ZERO1 ZERO2 FULL_SHARD)
for strategy in "${strategies[@]}"; do
  "$sinterc" --config examples/gpt/gpt_tiny.pbtxt --set steps=20 --set device=CUDA \
    --set parallel.strategy=$strategy --set parallel.world_size=2 \
    -o "$out/multi/gpt_tiny_$strategy"
done
if wants multi; then
"$sinterc" --config examples/gpt/gpt_tiny.pbtxt --set steps=20 --set device=CUDA \
  --set parallel.strategy=FULL_SHARD --set parallel.world_size=1 -o "$out/multi/gpt_tiny_fsdp1"
gpt2_small=(--config examples/gpt/gpt124m.pbtxt --set device=CUDA $HOPPER --set precision.compute=BF16
            --set "data.train={synthetic {}}" --set batch.micro=8 --set batch.global=16
            --set steps=5 --set log.every=1)
"$sinterc" "${gpt2_small[@]}" -o "$out/multi/gpt124m_bf16_ddp"
"$sinterc" "${gpt2_small[@]}" --set parallel.strategy=FULL_SHARD --set parallel.world_size=2 \
  -o "$out/multi/gpt124m_bf16_fsdp"
"$sinterc" "${gpt2_small[@]}" --report-memory --world 2 |
  awk '$1 == "total" { print int($8) }' >"$out/multi/report_fsdp_mib"
fi
fi

# The big part (gpu-check.sh big): GPT-2 350M, 774M and 1.5B in bf16 on
# synthetic tokens, 10 steps each, with what the check needs beside the
# program: the micro-batch, the memory report's total (MiB), the trainable
# parameters, the layers and the width.
if wants big; then
mkdir -p "$out/big"
# GPT-2 124M at the base part's micro-batch, beside its bf16 row (bf16
# activations): with compute: BF16 alone (f32 activations), what bf16
# activations buy; with the residual stream bf16 too (llm.c's choice), what
# that buys.
read -r micro_plain mib < <(largest_micro examples/gpt/gpt124m.pbtxt $((139 * 1024 * 3 / 4)) \
  "64 32 16" --set device=CUDA --set precision.compute=BF16 --set precision.activations=BF16)
[ -n "$micro_plain" ] || exit 1
declare -A variants=(
  [f32_activations]="--set precision.compute=BF16"
  [residual]="--set precision.compute=BF16 --set precision.activations=BF16 --set precision.residual=BF16")
for variant in f32_activations residual; do
  read -ra flags <<<"${variants[$variant]}"
  "$sinterc" --config examples/gpt/gpt124m.pbtxt --set device=CUDA "${flags[@]}" \
    $HOPPER --set "data.train={synthetic {}}" --set batch.micro="$micro_plain" \
    --set batch.global="$micro_plain" --set steps=30 --set log.every=1 \
    -o "$out/big/gpt124m_bf16_$variant"
  mib=$("$sinterc" --config examples/gpt/gpt124m.pbtxt --set device=CUDA "${flags[@]}" \
    --set batch.micro="$micro_plain" --set batch.global="$micro_plain" --report-memory |
    awk '$1 == "total" { print int($2) }')
  echo "gpu-bundle: GPT-2 124M bf16 ($variant), micro-batch $micro_plain x 1024 tokens ($mib MiB planned)"
  echo "$micro_plain $mib" >"$out/big/gpt124m_bf16_$variant.sizes"
done
for size in medium large xl; do
  config=examples/gpt/gpt2_$size.pbtxt
  bf16=(--set device=CUDA --set precision.compute=BF16 --set precision.activations=BF16)
  read -r micro mib < <(largest_micro "$config" 61440 "16 8 4" "${bf16[@]}")
  [ -n "$micro" ] || exit 1
  echo "gpu-bundle: GPT-2 $size bf16, micro-batch $micro x 1024 tokens ($mib MiB planned)"
  "$sinterc" --config "$config" "${bf16[@]}" $HOPPER --set "data.train={synthetic {}}" \
    --set batch.micro="$micro" --set batch.global="$micro" --set steps=10 --set log.every=1 \
    -o "$out/big/gpt2_$size"
  params=$("$sinterc" --config "$config" --list-params |
    awk '/^trainable parameters:/ { gsub(",", "", $3); print $3 }')
  layers=$(sed -n 's/.*key: "layers" value: "\([0-9]*\)".*/\1/p' "$config")
  dim=$(sed -n 's/.*key: "dim" value: "\([0-9]*\)".*/\1/p' "$config")
  echo "$micro $mib $params $layers $dim" >"$out/big/gpt2_$size.sizes"
done
fi

# Every shared library the programs load but CUDA's (found on the GPU
# machine), and the loader they were linked for: they then run on any
# x86-64 Linux with an NVIDIA driver, whatever its glibc.
# The launcher, for runs of several ranks where the machine has the GPUs.
mkdir -p "$out/bin"
cp build/bin/sinter-run "$out/bin/"
programs=()
for prog in "$out"/ops/ops "$out"/ops/ops_bf16 "$out"/ops/ops_bf16act "$out"/mlp/mlp "$out"/gpt_tiny/gpt_tiny* \
            "$out"/resnet/resnet "$out"/gpt124m/gpt124m "$out"/gpt124m/gpt124m_bf16 \
            "$out"/multi/gpt_tiny_* "$out"/multi/gpt124m_* "$out"/big/gpt2_* "$out"/big/gpt124m_* \
            "$out"/llmc/train_gpt2cu "$out"/bin/sinter-run; do
  [ -f "$prog" ] && [ -x "$prog" ] && programs+=("$prog")
done
for prog in "${programs[@]}"; do
  ldd "$prog" | awk '/=>/ && $3 != "not" { print $3 } /ld-linux/ { print $1 }'
done | sort -u | grep -v -E 'libcublas|libcudnn|libnccl|libcuda\.|libnvidia|^$' | while read -r lib; do
  cp -L "$lib" "$out/lib/"
done

# Their symbol tables are for debuggers, not the checks: about 1 MiB a
# program.
strip "${programs[@]}"

echo "$part" >"$out/part"
# Packed, the programs take a fifth of their room: what travels is the
# archive.
tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
size=$(du -sm "$out" | cut -f1)
packed=$(du -sm "$out.tar.xz" | cut -f1)
echo "gpu-bundle: $out ($part), $size MiB; $out.tar.xz, $packed MiB"
if [ "$packed" -gt 60 ]; then
  echo "gpu-bundle: the packed bundle is over 60 MiB" >&2
  exit 1
fi
