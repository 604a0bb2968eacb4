# Part "sanitize" of scripts/gpu-check.sh (sourced by it, with its helpers):
# compute-sanitizer's memcheck (out-of-bounds and misaligned accesses,
# leaks), racecheck (shared-memory races inside the generated kernels'
# blocks) and synccheck (barriers not every thread reaches) over one step
# of gpt_tiny in f32, one with heads of 32 (Sinter's fused f32 attention,
# whose kernels share tiles through shared memory), one with compute: BF16
# (cuDNN's fused attention), and
# one of gpt_tiny under FULL_SHARD on 2 ranks sharing the GPU (collectives
# through pinned host buffers): each must report no error. Where the
# machine's driver refuses the tool, the row says so.

sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer \
              /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -n 1)
sanitized() { # TOOL NAME LOG COMMAND...: one run under the tool, its row
  local tool=$1 name=$2 log=$3 status=0
  shift 3
  if [ "$SECONDS" -gt "$deadline" ]; then
    row "$tool, $name" "skipped: past the check's deadline (${deadline} s)"
    return
  fi
  timeout 150 "$@" >"$log" 2>&1 || status=$?
  local summaries refused first
  summaries=$(grep -c 'ERROR SUMMARY' "$log")
  refused=$(grep -m1 -E '^========= (Error|Internal Sanitizer Error)' "$log" | sed 's/^========= //')
  first=$(grep -m1 -E 'Invalid|Misaligned|Out of bounds|Race|hazard|Barrier|Leaked' "$log" |
    sed 's/^========= //')
  if [ -n "$refused" ]; then
    row "$tool, $name" "refused by this machine: ${refused:0:160}"
  elif [ "$status" -eq 124 ]; then
    row "$tool, $name" "FAILED: timed out after 150 s"
  elif [ "$summaries" -eq 0 ]; then
    row "$tool, $name" "FAILED (exit $status): no summary: $(tail -n 1 "$log" | cut -c1-120)"
  else
    row "$tool, $name" "$(grep 'ERROR SUMMARY' "$log" | sed 's/^========= //' |
      sort | uniq -c | sed -E 's/^ *([0-9]+) /\1 x /' | paste -sd ';')${first:+; first: ${first:0:120}}"
  fi
}

if [ -z "$sanitizer" ]; then
  row "compute-sanitizer" "skipped: no compute-sanitizer on this machine"
else
  for tool in memcheck racecheck synccheck; do
    sanitized "$tool" "gpt_tiny f32, 1 step" "$logs/${tool}_gpt_tiny.log" \
      "$sanitizer" --tool "$tool" --print-limit 5 "${bundled[@]}" \
      "$here/gpt_tiny/gpt_tiny" --set steps=1
    sanitized "$tool" "gpt_tiny f32 heads of 32, 1 step" "$logs/${tool}_gpt_tiny_heads32.log" \
      "$sanitizer" --tool "$tool" --print-limit 5 "${bundled[@]}" \
      "$here/gpt_tiny/gpt_tiny_heads32" --set steps=1
    sanitized "$tool" "gpt_tiny bf16, 1 step" "$logs/${tool}_gpt_tiny_bf16.log" \
      "$sanitizer" --tool "$tool" --print-limit 5 "${bundled[@]}" \
      "$here/gpt_tiny/gpt_tiny_bf16" --set steps=1
    # Each rank under its own sanitizer: two summaries.
    sanitized "$tool" "FULL_SHARD, 2 ranks on 1 GPU" "$logs/${tool}_fsdp_2ranks.log" \
      "${bundled[@]}" "$here/bin/sinter-run" -n 2 "$sanitizer" --tool "$tool" \
      --print-limit 5 "${bundled[@]}" "$here/multi/gpt_tiny_FULL_SHARD" \
      --set parallel.collectives=GLOO --set steps=1
  done
fi
