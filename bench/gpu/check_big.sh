# Part "big" of scripts/gpu-check.sh (sourced by it, with its helpers):
# GPT-2 350M (medium), 774M (large) and 1.5B (xl) with compute: BF16 and
# activations: BF16 at T=1024, 10 steps each on synthetic tokens, at the micro-batch
# scripts/gpu-bundle.sh found to fit (big/*.sizes: micro-batch, the memory
# report's total in MiB, trainable parameters, layers, width). Per model:
#   - tokens/s, the median from step 4 (start-up left out), and MFU
#     (checks.py throughput: 6N + 6LCT FLOPs per token over 989 TFLOP/s);
#   - the GPU's peak memory over the run (nvidia-smi every 0.2 s, less what
#     was in use before it) against sinterc --report-memory's total: within
#     5% passes (CUDA's context and the libraries' workspace are outside
#     the report and inside the peak). The row also gives the workspace the
#     run reported (cuDNN's deterministic attention backward pass takes
#     b x heads x T^2 x 2 bytes on Hopper, 512 MiB for 350M at 16), and the
#     peak against the report plus it.
# A model that does not fit is refused by the program before it allocates,
# which its row then says.
for size in medium large xl; do
  prog="$here/big/gpt2_$size"
  read -r micro planned params layers width <"$here/big/gpt2_$size.sizes"
  name="GPT-2 $size bf16 (activations bf16), B=$micro x 1024"
  idle=$(gpu_used)
  : >"$logs/memory_$size.txt"
  sample_memory "$logs/memory_$size.txt" &
  sampler=$!
  stage "$name" "$logs/gpt2_$size.log" 150 "$prog"
  status=$?
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  [ "$status" -eq 0 ] || continue
  peak=$(( $(peak_of "$logs/memory_$size.txt") - idle ))
  read -r tokens mfu < <(checks throughput "$logs/gpt2_$size.log" "$params" "$layers" "$width" 3)
  workspace=$(grep -m1 -o "the libraries' workspace [0-9]* MiB" "$logs/gpt2_$size.log" | awk '{print $4}')
  row "$name" "$(awk -v t="$tokens" -v m="$mfu" -v peak="$peak" -v plan="$planned" -v ws="${workspace:-0}" 'BEGIN {
    off = 100 * (peak - plan) / plan
    offWs = 100 * (peak - plan - ws) / (plan + ws)
    printf "%s tokens/s, MFU %s%%; peak %d MiB against the report'"'"'s %d (%+.1f%%, %s); with the libraries'"'"' workspace %d MiB, %+.1f%%",
      t, m, peak, plan, off, (off <= 5 && off >= -5) ? "within 5%" : "OFF BY MORE THAN 5%", ws, offWs }')"
done
# After the bigger models (the issue's rows first, within the deadline):
# GPT-2 124M at the base part's bf16 micro-batch, beside the base part's row
# (activations bf16): with compute: BF16 alone (f32 activations), what bf16
# activations buy; with precision.residual BF16 too, what the bf16 residual
# stream buys (tokens/s, and memory planned and allocated).
declare -A variant_names=([f32_activations]="f32 activations"
                          [residual]="bf16 residual stream")
for variant in f32_activations residual; do
  [ -f "$here/big/gpt124m_bf16_$variant.sizes" ] || continue
  read -r micro planned <"$here/big/gpt124m_bf16_$variant.sizes"
  log="$logs/gpt124m_bf16_$variant.log"
  stage "GPT-2 124M bf16, ${variant_names[$variant]}" "$log" 150 \
    "$here/big/gpt124m_bf16_$variant" && {
    read -r tps mfu < <(checks throughput "$log" 124439808 12 768 5)
    row "GPT-2 124M bf16 (${variant_names[$variant]}), B=$micro x 1024" \
      "$tps tokens/s, MFU $mfu%; $planned MiB planned, $(allocated_of "$log") MiB allocated"
  }
done
