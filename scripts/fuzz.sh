#!/usr/bin/env bash
# Fuzzes Sinter with libFuzzer under AddressSanitizer and UBSan, in a build
# of its own (build-fuzz: clang 22, SINTER_ENABLE_FUZZ, the fuzzers of
# test/Fuzz):
#   scripts/fuzz.sh frontend [SECONDS]  the lexer, parser and semantic analysis
#   scripts/fuzz.sh runtime [SECONDS]   the .npy, token-file and safetensors readers
#   scripts/fuzz.sh --replay            every input of both corpora, once
#   scripts/fuzz.sh cuda [COUNT] [FIRST] COUNT (100) random models from seed
#                                       FIRST (1000) through the CUDA target's
#                                       fusions, run on the CPU (sinterc
#                                       --cuda-on-host) against the CPU target
#                                       (test/E2E/check_cuda_fusions.py; the
#                                       main build, not build-fuzz)
# SECONDS defaults to 300. New inputs collect in build-fuzz/corpus-TARGET,
# crashes in build-fuzz/crash-*; copy a crash, once fixed, into the target's
# corpus (test/Fuzz/corpus, test/Runtime/corpus): the suite replays it
# forever.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ "${1:-}" = "cuda" ]; then
  scripts/setup.sh
  scripts/build.sh
  work=build/fuzz-cuda
  rm -rf "$work"
  PATH=$root/build/bin:$PATH exec .venv/bin/python3 test/E2E/check_cuda_fusions.py \
    "$work" "${3:-1000}" "${2:-100}"
fi
out=build-fuzz
if [ ! -f "$out/build.ninja" ]; then
  cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DSINTER_ENABLE_FUZZ=ON -DSINTER_ENABLE_COMPILER=OFF -DSINTER_ENABLE_TESTS=OFF \
    -DSINTER_ENABLE_CUDA=OFF >/dev/null
fi

# The fuzzer of each target, its corpus and its options.
fuzzer() { case $1 in frontend) echo sinter-frontend-fuzzer ;; runtime) echo sinter-reader-fuzzer ;; esac; }
corpus() { # TARGET: its committed inputs
  case $1 in
    frontend) ls test/Fuzz/corpus/* examples/*/*.sn std/*.sn ;;
    runtime) ls test/Runtime/corpus/* ;;
  esac
}
options() {
  case $1 in
    frontend) echo "-max_len=4096" ;;
    runtime) echo "-max_len=65536 -dict=$root/test/Fuzz/reader.dict" ;;
  esac
}

if [ "${1:-}" = "--replay" ]; then
  cmake --build "$out" --target sinter-frontend-fuzzer sinter-reader-fuzzer >/dev/null
  for target in frontend runtime; do
    mapfile -t inputs < <(corpus "$target")
    if ! "$out/bin/$(fuzzer "$target")" -runs=0 "${inputs[@]}" >"$out/replay-$target.log" 2>&1; then
      cat "$out/replay-$target.log"
      echo "fuzz: an input of the $target corpus crashed it" >&2
      exit 1
    fi
    echo "fuzz: $target: replayed ${#inputs[@]} inputs under ASan and UBSan without a crash"
  done
  exit 0
fi

target=${1:-}
if [ -z "$(fuzzer "$target")" ]; then
  echo "usage: scripts/fuzz.sh frontend|runtime [SECONDS] | --replay | cuda [COUNT] [FIRST]" >&2
  exit 2
fi
seconds=${2:-300}
cmake --build "$out" --target "$(fuzzer "$target")"
mkdir -p "$out/corpus-$target"
corpus "$target" | xargs -I{} cp -n {} "$out/corpus-$target/" 2>/dev/null || true
cd "$out"
# shellcheck disable=SC2046
"bin/$(fuzzer "$target")" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="crash-$target-" $(options "$target") \
  "corpus-$target"
