#!/usr/bin/env bash
# The checks of Sinter's CUDA target on one NVIDIA GPU, in parts of under 8
# minutes each, each run in the folder `scripts/gpu-bundle.sh PART` made
# (copied to the GPU machine):
#   ./gpu-check.sh [base]   every op, training against the CPU, CUDA graphs,
#                           GPT-2 124M's speed beside PyTorch, the profile
#                           (check_base.sh says what and how);
#   ./gpu-check.sh multi    collectives: NCCL for one rank, ranks sharing the
#                           GPU through Gloo under every strategy, GPT-2
#                           124M under FULL_SHARD and its memory, a killed
#                           rank, and two GPUs where there are (check_multi.sh);
#   ./gpu-check.sh sanitize compute-sanitizer's memcheck, racecheck and
#                           synccheck over a step of gpt_tiny, f32 and bf16,
#                           and over two ranks sharing the GPU
#                           (check_sanitize.sh);
#   ./gpu-check.sh big      GPT-2 350M, 774M and 1.5B in bf16, 10 steps each:
#                           tokens/s, MFU, and the GPU's peak memory against
#                           sinterc's report (check_big.sh).
# Prints a table last, naming the GPU; logs go to $OUT (or ./logs).
#
# GPU_CHECK_DEADLINE (seconds, default 420) moves the point after which no
# stage starts; GPU_CHECK_PEERS=0 leaves PyTorch's rows out of the base part
# (a first look at a new machine, in half the time).
set -uo pipefail
cd "$(dirname "$0")"
here=$PWD
part=${1:-base}
case "$part" in
  base | multi | sanitize | big) ;;
  *) echo "usage: $0 [base | multi | sanitize | big]" >&2; exit 2 ;;
esac
if [ "$(cat "$here/part" 2>/dev/null)" != "$part" ]; then
  echo "gpu-check: this folder was bundled for part '$(cat "$here/part" 2>/dev/null)';" \
    "make one for $part with scripts/gpu-bundle.sh $part" >&2
  exit 2
fi
logs=${OUT:-$here/logs}
# What this run writes; nothing of an earlier run's.
rm -rf "$here/got"
mkdir -p "$logs" "$here/got"
py=${PYTHON:-python3}

# CUDA's libraries from the machine's Python packages (CUDA 13's wheels
# put cuBLAS and the runtime in nvidia/cu13/lib, cuDNN and NCCL in
# nvidia/cudnn/lib and nvidia/nccl/lib), then a toolkit's, then the driver.
cudalibs=$("$py" - <<'PY'
import glob, os, sys
dirs = []
for base in sys.path:
    for d in sorted(glob.glob(os.path.join(base or ".", "nvidia", "*", "lib"))):
        if glob.glob(os.path.join(d, "*.so*")) and d not in dirs:
            dirs.append(d)
print(":".join(dirs))
PY
)
cudalibs="$cudalibs:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
libpath="$here/lib:$cudalibs:/usr/local/nvidia/lib64:/usr/local/nvidia/lib:/usr/lib/x86_64-linux-gnu"
loader="$here/lib/ld-linux-x86-64.so.2"
bundled=("$loader" --library-path "$libpath") # a program, with the bundle's libraries
checks() { PYTHONPATH="$here" "$py" "$here/checks.py" "$@"; }
compare() { checks compare "$@"; }

rows=()
row() { rows+=("$(printf '%-34s %s' "$1" "$2")"); echo "== $1: $2"; }
# The whole check stays within 8 minutes: a stage that would start after
# this many seconds is skipped, and says so.
deadline=${GPU_CHECK_DEADLINE:-420}

stage() { # NAME LOG SECONDS PROGRAM ARGS...: a program of the bundle, with its libraries
  local name=$1 log=$2 limit=$3 status=0
  shift 3
  if [ "$SECONDS" -gt "$deadline" ]; then
    row "$name" "skipped: past the check's deadline (${deadline} s)"
    return 1
  fi
  timeout "$limit" "${bundled[@]}" "$@" >"$log" 2>&1 || status=$?
  [ "$status" -eq 0 ] && return 0
  local why
  why=$(grep -m1 -i error "$log" || tail -n 1 "$log")
  [ "$status" -eq 124 ] && why="timed out after $limit s"
  # A fault on the GPU surfaces at the next wait; run again waiting for
  # each call, the failure names the kernel or library call and its .sn line.
  # (Not for a program that refused to start: no GPU, or too little memory.)
  if [ "$status" -ne 124 ] && [ -z "${SINTER_CUDA_SYNC:-}" ] &&
     ! grep -q -e 'no NVIDIA GPU' -e 'so the run cannot start' "$log" &&
     [ "$SECONDS" -le "$deadline" ]; then
    SINTER_CUDA_SYNC=1 timeout "$limit" "${bundled[@]}" "$@" >"${log%.log}_sync.log" 2>&1
    why="$why; with SINTER_CUDA_SYNC=1: $(grep -m1 -i error "${log%.log}_sync.log")"
  fi
  row "$name" "FAILED (exit $status): ${why:0:400}"
  return 1
}

# What a run's last lines say Sinter allocated (MiB; 0 when they do not
# say): the plans' buffers; beside the plan, the libraries' workspace,
# input staging and attention's recomputed outputs; and all of it.
sinter_memory() { # LOG
  grep -m1 'GPU memory allocated by Sinter' "$1" | sed -E \
    "s/.*the plans' buffers ([0-9]+) MiB.*workspace ([0-9]+) MiB, input staging ([0-9]+) MiB(, attention's recomputed outputs and statistics ([0-9]+) MiB)?.*/\1 \2 \3 \5/"
}
buffers_of() { sinter_memory "$1" | awk '{ s = $1 } END { print s + 0 }'; }
workspaces_of() { sinter_memory "$1" | awk '{ s = $2 + $3 + $4 } END { print s + 0 }'; }
allocated_of() { sinter_memory "$1" | awk '{ s = $1 + $2 + $3 + $4 } END { print s + 0 }'; }

# The GPU's memory in use (MiB, every process's), sampled while a stage runs.
gpu_used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n 1; }
sample_memory() { # FILE: the GPU's memory in use, every 0.2 s, until killed
  while :; do gpu_used >>"$1"; sleep 0.2; done
}
peak_of() { sort -n "$1" | tail -n 1 | awk '{ s = $1 } END { print s + 0 }'; }

nvidia-smi -L 2>&1 | head -n 1
# shellcheck source=/dev/null
source "$here/check_$part.sh"
echo
echo "Sinter CUDA check ($part) on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -n 1)"
printf '%s\n' "${rows[@]}"
if [ "$part" = base ]; then
  echo
  sed -n '/GPU time:/,/others/p' "$logs/gpt124m_bf16_profile.log" 2>/dev/null | head -n 24
  echo
  echo "f32:"
  sed -n '/GPU time:/,/others/p' "$logs/gpt124m_f32_profile.log" 2>/dev/null | head -n 16
fi
