# Part "multi" of scripts/gpu-check.sh (sourced by it, with its helpers):
# collectives on CUDA, checkable on one GPU.
#   - NCCL for one rank: mlp, gpt_tiny, and gpt_tiny under FULL_SHARD for a
#     world of 1, train 20 steps with parallel.collectives NCCL (its set-up,
#     all-reduces, reduce-scatters and all-gathers run for real) to the
#     parameters of the same program without collectives (GLOO, which runs
#     none for one process): bit for bit, as NCCL's sum over one rank is a
#     copy;
#   - 2 ranks sharing the GPU through parallel.collectives GLOO (buckets
#     and shards through pinned host memory): gpt_tiny under DDP, ZERO1,
#     ZERO2 and FULL_SHARD, 20 steps, against the CPU's one rank over the
#     same global batch (1e-4, or 4 times the tensor's float32 noise floor);
#     FULL_SHARD's checkpoint of step 10 (each rank's pieces) resumed by one
#     rank of DDP to the same step 20;
#   - GPT-2 124M with compute: BF16 under FULL_SHARD on those 2 ranks, 5
#     steps, against one rank of DDP on the GPU (2e-2, or 4 times the bf16
#     run's own noise floor, from a start perturbed at float32's rounding);
#     and its GPU memory per rank (half the GPU's peak over its idle use)
#     against --report-memory plus the workspaces and CUDA's own memory the
#     runs name, within 5%;
#   - rank 1 killed mid-step under sinter-run -n 2: rank 0 ends within 60 s
#     and names rank 1;
#   - 2 GPUs, where the machine has them: mlp, gpt_tiny and gpt_tiny under
#     FULL_SHARD on 2 ranks over NCCL; else the rows say why not.

multi=$here/multi
gloo=(--set parallel.collectives=GLOO)
nccl=(--set parallel.collectives=NCCL)

# 1. NCCL for one rank, against no collectives.
nccl_for_one() { # TAG NAME PROGRAM ARGS...: TAG names its files
  local tag=$1 name=$2 prog=$3
  shift 3
  stage "$name, no collectives" "$logs/${tag}_none.log" 60 "$prog" "$@" "${gloo[@]}" \
    --save "$here/got/${tag}_none.safetensors" || return
  stage "$name, NCCL for 1 rank" "$logs/${tag}_nccl.log" 60 "$prog" "$@" "${nccl[@]}" \
    --save "$here/got/${tag}_nccl.safetensors" || return
  if ! grep -q 'collectives: NCCL' "$logs/${tag}_nccl.log"; then
    row "$name, NCCL for 1 rank" "FAILED: its log does not say it ran NCCL"
    return
  fi
  row "$name, NCCL for 1 rank vs none" "$(compare safetensors "$here/got/${tag}_nccl.safetensors" \
    "$here/got/${tag}_none.safetensors" 0)"
}
nccl_for_one mlp mlp "$here/mlp/mlp" --config "$here/mlp/train.pbtxt"
nccl_for_one gpt_tiny gpt_tiny "$here/gpt_tiny/gpt_tiny"
nccl_for_one gpt_tiny_fsdp1 "gpt_tiny FULL_SHARD for 1" "$multi/gpt_tiny_fsdp1"

# 2. Two ranks on the one GPU, every strategy, against the CPU's one rank.
for strategy in DDP ZERO1 ZERO2 FULL_SHARD; do
  prog=$multi/gpt_tiny_$strategy
  [ "$strategy" = DDP ] && prog=$here/gpt_tiny/gpt_tiny
  log=$logs/gpt_tiny_${strategy}_2ranks.log
  # FULL_SHARD's ranks also write their pieces of a checkpoint at step 10.
  pieces=()
  [ "$strategy" = FULL_SHARD ] &&
    pieces=(--set checkpoint.dir="$here/got/ck_fsdp" --set checkpoint.every=10)
  stage "gpt_tiny $strategy, 2 ranks on 1 GPU" "$log" 90 "$here/bin/sinter-run" -n 2 \
    "${bundled[@]}" "$prog" "${gloo[@]}" "${pieces[@]}" \
    --save "$here/got/gpt_tiny_${strategy}_2.safetensors" || continue
  if ! grep -q 'on 2 ranks.*collectives: Gloo over TCP, through pinned host buffers' "$log"; then
    row "gpt_tiny $strategy, 2 ranks" "FAILED: its log does not say how it ran"
    continue
  fi
  row "gpt_tiny $strategy, 2 ranks, GLOO (1e-4)" "$(compare safetensors \
    "$here/got/gpt_tiny_${strategy}_2.safetensors" "$here/ref/gpt_tiny.safetensors" 1e-4 \
    "$here/ref/gpt_tiny_floor.json")"
done

# A sharded checkpoint does not depend on the world size: FULL_SHARD's
# step 10, resumed by one rank of DDP, reaches its step 20.
if [ -f "$here/got/ck_fsdp/step-10.safetensors" ]; then
  mkdir -p "$here/got/ck_resumed"
  cp "$here/got/ck_fsdp"/step-10.* "$here/got/ck_resumed/"
  stage "FULL_SHARD's checkpoint, resumed" "$logs/gpt_tiny_resumed.log" 60 \
    "$here/gpt_tiny/gpt_tiny" --set checkpoint.dir="$here/got/ck_resumed" \
    --set checkpoint.resume=true --save "$here/got/gpt_tiny_resumed.safetensors" &&
    row "FULL_SHARD/2 step 10 resumed on 1 rank" "$(compare safetensors \
      "$here/got/gpt_tiny_resumed.safetensors" "$here/got/gpt_tiny_FULL_SHARD_2.safetensors" \
      1e-4 "$here/ref/gpt_tiny_floor.json")"
fi

# 3. GPT-2 124M bf16 under FULL_SHARD on 2 ranks of the GPU, against DDP on
# one, and its memory.
gpt2=$multi/gpt124m_bf16
stage "GPT-2 124M bf16, 1 rank DDP" "$logs/gpt124m_ddp1.log" 120 "${gpt2}_ddp" \
  --save "$here/got/gpt124m_ddp1.safetensors"
# The bf16 run's own noise floor: the same from a start perturbed at
# float32's rounding.
if [ -f "$here/got/gpt124m_ddp1.safetensors" ]; then
  stage "GPT-2 124M bf16, its start" "$logs/gpt124m_start.log" 60 "${gpt2}_ddp" --set steps=0 \
    --save "$here/got/gpt124m_start.safetensors" &&
    checks perturb "$here/got/gpt124m_start.safetensors" \
      "$here/got/gpt124m_start1.safetensors" 1 &&
    stage "GPT-2 124M bf16, perturbed" "$logs/gpt124m_perturbed.log" 120 "${gpt2}_ddp" \
      --init "$here/got/gpt124m_start1.safetensors" \
      --save "$here/got/gpt124m_perturbed.safetensors" &&
    checks noise-floor "$here/got/gpt124m_floor.json" \
      "$here/got/gpt124m_ddp1.safetensors" "$here/got/gpt124m_perturbed.safetensors"
fi
# CUDA's own memory in a process (context, kernels' module, the libraries'
# handles): a small run's peak over idle less what it says it allocated.
idle=$(gpu_used)
: >"$logs/memory_small.txt"
sample_memory "$logs/memory_small.txt" &
sampler=$!
stage "gpt_tiny bf16, 1 step" "$logs/gpt_tiny_bf16_1step.log" 60 "$here/gpt_tiny/gpt_tiny_bf16" \
  --set steps=1
kill "$sampler" 2>/dev/null
small=$(( $(buffers_of "$logs/gpt_tiny_bf16_1step.log") + $(workspaces_of "$logs/gpt_tiny_bf16_1step.log") ))
own=$(( $(peak_of "$logs/memory_small.txt") - idle - small ))
idle=$(gpu_used)
: >"$logs/memory_fsdp.txt"
sample_memory "$logs/memory_fsdp.txt" &
sampler=$!
log=$logs/gpt124m_fsdp2.log
stage "GPT-2 124M bf16 FULL_SHARD, 2 ranks" "$log" 180 "$here/bin/sinter-run" -n 2 \
  "${bundled[@]}" "${gpt2}_fsdp" "${gloo[@]}" --save "$here/got/gpt124m_fsdp2.safetensors"
kill "$sampler" 2>/dev/null
if [ -f "$here/got/gpt124m_fsdp2.safetensors" ]; then
  floor=()
  [ -f "$here/got/gpt124m_floor.json" ] && floor=("$here/got/gpt124m_floor.json")
  row "GPT-2 124M bf16 FULL_SHARD, 2 ranks vs 1 (2e-2)" "$(compare safetensors \
    "$here/got/gpt124m_fsdp2.safetensors" "$here/got/gpt124m_ddp1.safetensors" 2e-2 "${floor[@]}")"
  planned=$(cat "$multi/report_fsdp_mib")
  work=$(workspaces_of "$log")
  measured=$(( ($(peak_of "$logs/memory_fsdp.txt") - idle) / 2 ))
  expected=$(( planned + ${work:-0} + own ))
  row "GPT-2 124M FULL_SHARD, GPU memory per rank" "$(awk -v m="$measured" -v e="$expected" \
    -v p="$planned" -v w="${work:-0}" -v o="$own" 'BEGIN {
      d = e > 0 ? 100 * (m - e) / e : 100
      printf "measured %d MiB (half the GPU peak over idle), expected %d MiB = the report %d + workspaces, staging and attention outputs %d + CUDA'"'"'s own %d: %+.1f%%: %s",
        m, e, p, w, o, d, (d <= 5 && d >= -5) ? "pass" : "FAIL" }')"
fi

# 4. A rank killed mid-step: the other ends within 60 s, naming it.
if [ "$SECONDS" -le "$deadline" ]; then
  row "rank 1 killed, 2 ranks on 1 GPU" "$(checks kill-rank 60 \
    "$logs/killed_rank.log" "$here/bin/sinter-run" -n 2 "${bundled[@]}" \
    "$here/gpt_tiny/gpt_tiny" "${gloo[@]}" --set steps=100000000 --set log.every=1)"
else
  row "rank 1 killed" "skipped: past the check's deadline (${deadline} s)"
fi

# 5. Two GPUs: NCCL between them.
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
two_gpus() { # TAG NAME PROGRAM REFERENCE NOISE_FLOOR ARGS...
  local tag=$1 name=$2 prog=$3 ref=$4 noise=$5
  shift 5
  if [ "$gpus" -lt 2 ]; then
    row "$name, 2 GPUs on NCCL" "skipped: $gpus GPU here; NCCL needs one per rank"
    return
  fi
  stage "$name, 2 GPUs" "$logs/${tag}_2gpus.log" 90 "$here/bin/sinter-run" -n 2 \
    "${bundled[@]}" "$prog" "${nccl[@]}" "$@" --save "$here/got/${tag}_2gpus.safetensors" &&
    row "$name, 2 GPUs on NCCL (1e-4)" "$(compare safetensors \
      "$here/got/${tag}_2gpus.safetensors" "$ref" 1e-4 "$noise")"
}
two_gpus mlp mlp "$here/mlp/mlp" "$here/ref/mlp.safetensors" "$here/ref/mlp_floor.json" \
  --config "$here/mlp/train.pbtxt"
two_gpus gpt_tiny gpt_tiny "$here/gpt_tiny/gpt_tiny" "$here/ref/gpt_tiny.safetensors" \
  "$here/ref/gpt_tiny_floor.json"
two_gpus gpt_tiny_fsdp "gpt_tiny FULL_SHARD" "$multi/gpt_tiny_FULL_SHARD" \
  "$here/ref/gpt_tiny.safetensors" "$here/ref/gpt_tiny_floor.json"
