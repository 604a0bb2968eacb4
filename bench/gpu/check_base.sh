# Part "base" of scripts/gpu-check.sh (sourced by it, with its helpers):
#   - every op's forward and gradient against the CPU program on the same
#     inputs (f32: relative 1e-5; with compute: BF16, and with
#     activations: BF16 too, 2e-2; with precision.matmul TF32, against the
#     f32 CPU program, 5e-3);
#   - 20 training steps of mlp and gpt_tiny in f32 (gpt_tiny also with
#     heads of 32: Sinter's fused f32 attention) against the CPU
#     program's parameters (relative 1e-4); 10 of ResNet-18 (width 16) at
#     batch 32 (cuDNN's convolutions and batch-norm; 1e-3). A tensor that
#     training makes chaotic (a sum that cancels: the key bias, whose
#     gradient is zero but for rounding) may instead be within 4 times its
#     float32 noise floor: how far the CPU's own run moves from a start
#     perturbed at float32's rounding;
#   - with precision.deterministic false (cuDNN's faster algorithms for
#     attention's backward pass and the convolutions), the bf16 ops'
#     gradients and ResNet-18's training at the same tolerances, and GPT-2
#     124M bf16's tokens/s;
#   - CUDA graphs: gpt_tiny (f32 with heads of 16 and of 32, and bf16 with
#     cuDNN's fused attention) and
#     ResNet-18 again with every kernel launched direct
#     (SINTER_CUDA_GRAPHS=0), against their runs with graphs (1e-6), which
#     must have replayed some;
#   - GPT-2 124M, T=1024, 30 steps in f32 (micro-batch 16) and with
#     compute: BF16 and activations: BF16 (autocast's rounding; the
#     largest micro-batch the bundle found to fit):
#     tokens/s and MFU (6N + 6LCT FLOPs per token over 989 TFLOP/s dense
#     bf16), beside PyTorch eager and torch.compile on the same batches
#     (f32, and bf16 autocast), their peak memory allocated
#     (torch.cuda.max_memory_allocated) beside what Sinter allocated, and,
#     where bundled, llm.c's train_gpt2cu (bf16); and where the bf16 and
#     f32 steps' GPU time goes, by kernel and library call
#     (SINTER_CUDA_PROFILE);
#   - memcheck over the ops' gradients, bf16 and f32 (the f32 attention's
#     own kernels), where the machine has compute-sanitizer.

# Every library a program needs must resolve here; the first that does not
# is named in the table.
for prog in "$here"/ops/ops "$here"/gpt124m/gpt124m_bf16 "$here"/bin/sinter-run; do
  "${bundled[@]}" --list "$prog" >"$logs/libraries_$(basename "$prog").log" 2>&1
  missing=$(grep -m1 'not found' "$logs/libraries_$(basename "$prog").log")
  [ -n "$missing" ] && row "libraries of $(basename "$prog")" "MISSING: $missing"
done
stage "ops forward" "$logs/ops_eval.log" 45  "$here/ops/ops" --config "$here/ops/ops.pbtxt" \
  --eval --init "$here/ops/init.safetensors" --outputs "$here/got/ops_outputs" &&
  row "ops forward (f32, 1e-5)" "$(compare npy "$here/got/ops_outputs" "$here/ref/ops_outputs" 1e-5)"
stage "ops gradients" "$logs/ops_grad.log" 45  "$here/ops/ops" --config "$here/ops/ops.pbtxt" \
  --init "$here/ops/init.safetensors" --gradients "$here/got/ops_gradients" &&
  row "ops gradients (f32, 1e-5)" "$(compare npy "$here/got/ops_gradients" "$here/ref/ops_gradients" 1e-5)"
# compute: BF16, and with activations: BF16 too (cuBLASLt's bf16 results,
# the bias rounded to bf16 and the f32 sum rounded once, against oneDNN's).
for variant in bf16 bf16act; do
  what=bf16
  [ "$variant" = bf16act ] && what="bf16 activations"
  stage "ops forward, $what" "$logs/ops_${variant}_eval.log" 45  "$here/ops/ops_$variant" \
    --config "$here/ops/ops.pbtxt" --eval --init "$here/ops/init.safetensors" \
    --outputs "$here/got/ops_${variant}_outputs" &&
    row "ops forward ($what, 2e-2)" "$(compare npy "$here/got/ops_${variant}_outputs" "$here/ref/ops_${variant}_outputs" 2e-2)"
  stage "ops gradients, $what" "$logs/ops_${variant}_grad.log" 45  "$here/ops/ops_$variant" \
    --config "$here/ops/ops.pbtxt" --init "$here/ops/init.safetensors" \
    --gradients "$here/got/ops_${variant}_gradients" &&
    row "ops gradients ($what, 2e-2)" "$(compare npy "$here/got/ops_${variant}_gradients" "$here/ref/ops_${variant}_gradients" 2e-2)"
done
# A shape that cuBLASLt has no bias epilogue for is run with the bias
# copied into the result's rows: the rows pass either way, so this says
# which way a program's bf16 activations went.
bias_epilogues() { # NAME LOG...
  local name=$1 fallbacks
  shift
  fallbacks=$(cat "$@" 2>/dev/null | grep -c 'bias epilogue is not available')
  if [ "$fallbacks" -eq 0 ]; then
    row "$name bias epilogues" "all by cuBLASLt's epilogue"
  else
    row "$name bias epilogues" "$fallbacks shapes through the bias's rows: $(cat "$@" | grep -m1 'bias epilogue')"
  fi
}
bias_epilogues "ops, bf16 activations," "$logs"/ops_bf16act_*.log
# precision.matmul TF32 against the f32 CPU program: TF32 keeps 10 bits of
# mantissa (relative rounding 2^-11, 4.9e-4), so 5e-3 allows a sum's worth.
stage "ops forward, tf32" "$logs/ops_tf32_eval.log" 45  "$here/ops/ops" \
  --config "$here/ops/ops.pbtxt" --set precision.matmul=TF32 --eval --init "$here/ops/init.safetensors" \
  --outputs "$here/got/ops_tf32_outputs" &&
  row "ops forward (tf32, 5e-3)" "$(compare npy "$here/got/ops_tf32_outputs" "$here/ref/ops_outputs" 5e-3)"
stage "ops gradients, tf32" "$logs/ops_tf32_grad.log" 45  "$here/ops/ops" \
  --config "$here/ops/ops.pbtxt" --set precision.matmul=TF32 --init "$here/ops/init.safetensors" \
  --gradients "$here/got/ops_tf32_gradients" &&
  row "ops gradients (tf32, 5e-3)" "$(compare npy "$here/got/ops_tf32_gradients" "$here/ref/ops_gradients" 5e-3)"
# precision.deterministic false: cuDNN's attention backward pass and its
# convolutions in their faster algorithms, whose sums' order may change
# between runs; held to the same tolerances as the deterministic runs.
stage "ops gradients, bf16, any order" "$logs/ops_bf16_any_order.log" 45  "$here/ops/ops_bf16" \
  --config "$here/ops/ops.pbtxt" --set precision.deterministic=false \
  --init "$here/ops/init.safetensors" --gradients "$here/got/ops_bf16_any_order_gradients" &&
  row "ops gradients (bf16, any order, 2e-2)" "$(compare npy "$here/got/ops_bf16_any_order_gradients" "$here/ref/ops_bf16_gradients" 2e-2)"
stage "mlp, 20 steps" "$logs/mlp.log" 45  "$here/mlp/mlp" --config "$here/mlp/train.pbtxt" \
  --save "$here/got/mlp.safetensors" &&
  row "mlp, 20 steps (f32, 1e-4)" "$(compare safetensors "$here/got/mlp.safetensors" "$here/ref/mlp.safetensors" 1e-4 "$here/ref/mlp_floor.json")"
stage "gpt_tiny, 20 steps" "$logs/gpt_tiny.log" 45  "$here/gpt_tiny/gpt_tiny" \
  --save "$here/got/gpt_tiny.safetensors" &&
  row "gpt_tiny, 20 steps (f32, 1e-4)" "$(compare safetensors "$here/got/gpt_tiny.safetensors" "$here/ref/gpt_tiny.safetensors" 1e-4 "$here/ref/gpt_tiny_floor.json")"
# Heads of 32: its f32 attention is Sinter's fused kernels.
stage "gpt_tiny heads of 32, 20 steps" "$logs/gpt_tiny_heads32.log" 45 \
  "$here/gpt_tiny/gpt_tiny_heads32" --save "$here/got/gpt_tiny_heads32.safetensors" &&
  row "gpt_tiny heads of 32, 20 steps (f32, 1e-4)" "$(compare safetensors "$here/got/gpt_tiny_heads32.safetensors" "$here/ref/gpt_tiny_heads32.safetensors" 1e-4 "$here/ref/gpt_tiny_heads32_floor.json")"
# CUDA graphs: each program below runs again with every kernel launched
# direct (SINTER_CUDA_GRAPHS=0). A graph replays the same work (cuBLASLt,
# cuDNN's convolutions, batch-norm and fused attention, the generated
# kernels), so the parameters agree to rounding (1e-6); the run with
# graphs must have replayed some.
graphs_vs_direct() { # NAME PROGRAM LOG_OF_GRAPHS_RUN SAVED_BY_IT ARGS...
  local name=$1 prog=$2 log=$3 saved=$4 replays
  shift 4
  [ -f "$saved" ] || return 0 # the run with graphs failed, and says so
  replays=$(grep -m1 -o 'CUDA graphs: [0-9]* captured, [0-9]* replays' "$log" | awk '{print $5}')
  if [ "${replays:-0}" -eq 0 ]; then
    row "$name, CUDA graphs" "FAILED: no replays ($(grep -m1 'CUDA graphs' "$log" || echo 'no report'))"
    return
  fi
  SINTER_CUDA_GRAPHS=0 stage "$name, no graphs" "${log%.log}_direct.log" 90 "$prog" \
    "$@" --save "${saved%.safetensors}_direct.safetensors" &&
    row "$name, $replays replays vs direct" "$(compare safetensors "$saved" "${saved%.safetensors}_direct.safetensors" 1e-6)"
}
graphs_vs_direct gpt_tiny "$here/gpt_tiny/gpt_tiny" "$logs/gpt_tiny.log" "$here/got/gpt_tiny.safetensors"
graphs_vs_direct "gpt_tiny heads of 32" "$here/gpt_tiny/gpt_tiny_heads32" \
  "$logs/gpt_tiny_heads32.log" "$here/got/gpt_tiny_heads32.safetensors"
stage "gpt_tiny bf16, 20 steps" "$logs/gpt_tiny_bf16.log" 45 "$here/gpt_tiny/gpt_tiny_bf16" \
  --save "$here/got/gpt_tiny_bf16.safetensors" &&
  graphs_vs_direct "gpt_tiny bf16" "$here/gpt_tiny/gpt_tiny_bf16" "$logs/gpt_tiny_bf16.log" \
    "$here/got/gpt_tiny_bf16.safetensors"
# ResNet-18 (width 16) at batch 32: its batch statistics and convolutions are summed
# in another order than the CPU's, and a ReLU near 0 may go either way, so
# 1e-3; a batch-norm bias behind another batch-norm is a sum that cancels,
# held to its noise floor.
stage "ResNet-18, 10 steps" "$logs/resnet.log" 90  "$here/resnet/resnet" \
  --save "$here/got/resnet.safetensors" &&
  row "ResNet-18/16, 10 steps (f32, 1e-3)" "$(compare safetensors "$here/got/resnet.safetensors" "$here/ref/resnet.safetensors" 1e-3 "$here/ref/resnet_floor.json")"
graphs_vs_direct ResNet-18/16 "$here/resnet/resnet" "$logs/resnet.log" "$here/got/resnet.safetensors"
stage "ResNet-18, 10 steps, any order" "$logs/resnet_any_order.log" 90  "$here/resnet/resnet" \
  --set precision.deterministic=false --save "$here/got/resnet_any_order.safetensors" &&
  row "ResNet-18/16, 10 steps (any order, 1e-3)" "$(compare safetensors "$here/got/resnet_any_order.safetensors" "$here/ref/resnet.safetensors" 1e-3 "$here/ref/resnet_floor.json")"

declare -A sinter_tps=() # Sinter's tokens/s, to set PyTorch's beside
declare -A micros=([f32]=$(cat "$here/gpt124m/micro") [bf16]=$(cat "$here/gpt124m/micro_bf16"))
for precision in f32 bf16; do
  micro=${micros[$precision]}
  prog="$here/gpt124m/gpt124m"
  [ "$precision" = bf16 ] && prog="$here/gpt124m/gpt124m_bf16"
  stage "GPT-2 124M $precision" "$logs/gpt124m_$precision.log" 150 "$prog" || continue
  # From step 6: start-up (module load, library plans) left out.
  read -r tps mfu < <(checks throughput "$logs/gpt124m_$precision.log" 124439808 12 768 5)
  label=$precision
  [ "$precision" = bf16 ] && label="bf16 (activations bf16)"
  row "GPT-2 124M $label, B=$micro x 1024" "$tps tokens/s, MFU $mfu%"
  sinter_tps[$precision]=$tps
done
bias_epilogues "GPT-2 124M bf16 activations," "$logs/gpt124m_bf16.log"
# PyTorch on the same batches as Sinter's two programs.
for precision in f32 bf16; do
  micro=${micros[$precision]}
  if [ "${GPU_CHECK_PEERS:-1}" = 0 ]; then
    row "PyTorch $precision" "skipped: GPU_CHECK_PEERS=0"
  elif [ "$SECONDS" -gt "$deadline" ]; then
    row "PyTorch $precision" "skipped: past the check's deadline (${deadline} s)"
  elif PYTHONPATH="$here" timeout 150 "$py" "$here/torch_gpt2.py" "$micro" 15 "$precision" \
      >"$logs/torch_$precision.log" 2>"$logs/torch_${precision}_stderr.log"; then
    # Its rows on stdout, NAME<tab>TOKENS_PER_S<tab>PEAK_MIB; warnings go
    # to stderr. The peak is torch.cuda.max_memory_allocated, beside what
    # Sinter allocated at the same batch (buffers, workspace, staging,
    # attention's).
    sinter_mib=$(allocated_of "$logs/gpt124m_$precision.log")
    while IFS=$'\t' read -r name value peak; do
      ratio=$(awk -v s="${sinter_tps[$precision]:-0}" -v p="$value" \
        'BEGIN { if (p + 0 > 0 && s > 0) printf " (Sinter %.2fx)", s / p }')
      memory=$(awk -v s="$sinter_mib" -v p="${peak:-0}" 'BEGIN {
        if (p + 0 > 0 && s > 0)
          printf "; peak %d MiB allocated, Sinter %d (%s)", p, s, s <= p ? "not more" : "MORE" }')
      row "$name, B=$micro x 1024" "$value tokens/s$ratio$memory"
    done <"$logs/torch_$precision.log"
  else
    row "PyTorch $precision" "FAILED: $(tail -n 1 "$logs/torch_${precision}_stderr.log" | cut -c1-100)"
  fi
done

# llm.c's hand-written GPT-2 trainer (cuDNN's attention), from a random
# GPT-2 124M (-e d12) on the bf16 row's batch of uniform tokens: its train
# loop only (no sampling; one validation batch at the first and last
# steps, outside the steps' times). Bundled only with LLMC set.
# SINTER_CUDA_SYNC set: stage does not run it again on a failure (that
# rerun is for Sinter's programs).
micro=${micros[bf16]}
if [ "${GPU_CHECK_PEERS:-1}" = 0 ]; then
  row "llm.c bf16" "skipped: GPU_CHECK_PEERS=0"
elif [ ! -x "$here/llmc/train_gpt2cu" ]; then
  row "llm.c bf16" "skipped: not bundled (LLMC=CHECKOUT scripts/gpu-bundle.sh)"
else
  checks llmc-tokens "$here/got/llmc_tokens.bin" $((micro * 1024 * 40 + 1))
  tokens=$here/got/llmc_tokens.bin
  SINTER_CUDA_SYNC=1 stage "llm.c bf16" "$logs/llmc_bf16.log" 150 "$here/llmc/train_gpt2cu" \
    -i "$tokens" -j "$tokens" -e d12 -b "$micro" -t 1024 -d $((micro * 1024)) \
    -x 30 -v 1000 -m 1 -s 0 -n 0 -h 0 && {
    read -r tps mfu < <(checks llmc-throughput "$logs/llmc_bf16.log" "$micro" 124439808 12 768 5)
    ratio=$(awk -v s="${sinter_tps[bf16]:-0}" -v p="$tps" \
      'BEGIN { if (p + 0 > 0 && s > 0) printf " (Sinter %.2fx)", s / p }')
    row "llm.c bf16, B=$micro x 1024" "$tps tokens/s, MFU $mfu%$ratio"
  }
fi

# Where the bf16 step's GPU time goes: every kernel and library call timed
# over 6 steps (SINTER_CUDA_PROFILE, its 60 costliest; no graphs then), printed after the
# table; after the stages above, so that it cannot push them past the deadline.
SINTER_CUDA_PROFILE=60 stage "GPT-2 124M bf16, profiled" "$logs/gpt124m_bf16_profile.log" 90 \
  "$here/gpt124m/gpt124m_bf16" --set steps=6 &&
  row "GPT-2 124M bf16, profiled" "$(grep -m1 -o 'GPU time: .* calls' "$logs/gpt124m_bf16_profile.log")"

# The same for f32 (4 steps, its 40 costliest): where it stands against
# PyTorch's f32, now that its attention is Sinter's fused kernels.
SINTER_CUDA_PROFILE=40 stage "GPT-2 124M f32, profiled" "$logs/gpt124m_f32_profile.log" 90 \
  "$here/gpt124m/gpt124m" --set steps=4 &&
  row "GPT-2 124M f32, profiled" "$(grep -m1 -o 'GPU time: .* calls' "$logs/gpt124m_f32_profile.log")"

# GPT-2 124M bf16 with cuDNN's faster attention backward pass
# (precision.deterministic false), after the profiles: what it buys is the
# least needed row, so it is the one past the deadline.
stage "GPT-2 124M bf16, any order" "$logs/gpt124m_bf16_any_order.log" 150 \
  "$here/gpt124m/gpt124m_bf16" --set precision.deterministic=false && {
  read -r tps mfu < <(checks throughput "$logs/gpt124m_bf16_any_order.log" 124439808 12 768 5)
  row "GPT-2 124M bf16 any order, B=${micros[bf16]} x 1024" "$tps tokens/s, MFU $mfu%"
}

# Out-of-bounds and misaligned accesses of the generated kernels and the
# library calls, over every op's gradient (small shapes: compute-sanitizer's
# memcheck is slow), with compute: BF16 and in f32 (the f32 attention's own
# kernels), where the machine has the tool; last of the stages, as a
# diagnosis.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer \
              /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -n 1)
memcheck_ops() { # PRECISION PROGRAM
  local log="$logs/memcheck_$1.log" summary first
  if [ -z "$sanitizer" ]; then
    row "memcheck, ops gradients ($1)" "skipped: no compute-sanitizer here"
    return
  fi
  [ "$SECONDS" -le "$deadline" ] || return 0
  timeout 90 "$sanitizer" --tool memcheck --print-limit 5 "${bundled[@]}" \
    "$2" --config "$here/ops/ops.pbtxt" --init "$here/ops/init.safetensors" \
    --gradients "$here/got/ops_$1_memcheck" >"$log" 2>&1
  summary=$(grep -m1 'ERROR SUMMARY' "$log" | sed 's/^========= //')
  first=$(grep -m1 -E 'Invalid|Misaligned|Out of bounds' "$log" | sed 's/^========= //')
  row "memcheck, ops gradients ($1)" "${summary:-no summary: $(tail -n 1 "$log" | cut -c1-100)}${first:+; first: ${first:0:120}}"
}
memcheck_ops bf16 "$here/ops/ops_bf16"
memcheck_ops f32 "$here/ops/ops"
