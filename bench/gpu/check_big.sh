# Part "big" of scripts/gpu-check.sh (sourced by it, with its helpers):
# GPT-2 350M (medium), 774M (large) and 1.5B (xl) with compute: BF16 at
# T=1024, 10 steps each on synthetic tokens, at the micro-batch
# scripts/gpu-bundle.sh found to fit (big/*.sizes: micro-batch, the memory
# report's total in MiB, trainable parameters, layers, width). Per model:
#   - tokens/s, the median from step 4 (start-up left out);
#   - MFU: 6N + 6LCT FLOPs per token over 989 TFLOP/s (dense bf16, H100
#     and H200 alike);
#   - the GPU's peak memory over the run (nvidia-smi every 0.2 s, less what
#     was in use before it) against sinterc --report-memory's total: within
#     5% passes (CUDA's context and the libraries' workspace are outside
#     the report and inside the peak).
# A model that does not fit is refused by the program before it allocates,
# which its row then says.
for size in medium large xl; do
  prog="$here/big/gpt2_$size"
  read -r micro planned params layers width <"$here/big/gpt2_$size.sizes"
  name="GPT-2 $size bf16, B=$micro x 1024"
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
  row "$name" "$("$py" - "$logs/gpt2_$size.log" "$params" "$layers" "$width" "$peak" "$planned" <<'PY'
import re, statistics, sys
log, n, layers, width, peak, planned = sys.argv[1], *map(int, sys.argv[2:])
rates = [float(m.group(2)) for m in
         (re.match(r"step (\d+)/\d+ .* ([0-9.]+) samples/s", l) for l in open(log))
         if m and int(m.group(1)) > 3]
T = 1024
tokens = statistics.median(rates) * T if rates else 0.0
mfu = 100 * tokens * (6 * n + 6 * layers * width * T) / 989e12
off = 100 * (peak - planned) / planned
verdict = "within 5%" if abs(off) <= 5 else "OFF BY MORE THAN 5%"
print(f"{tokens:.0f} tokens/s, MFU {mfu:.1f}%; peak {peak} MiB against the report's "
      f"{planned} ({off:+.1f}%, {verdict})")
PY
)"
done
