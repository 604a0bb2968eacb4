#!/usr/bin/env bash
# Fuzzes the lexer, parser and semantic analysis with libFuzzer under
# AddressSanitizer and UndefinedBehaviorSanitizer.
#   scripts/fuzz.sh [SECONDS]   fuzz (default 300 s); new inputs collect in
#                               build-fuzz/corpus, crashes in build-fuzz/crash-*
#   scripts/fuzz.sh --replay    run every input of test/Fuzz/corpus once
# Copy a crash, once fixed, into test/Fuzz/corpus: the suite replays it forever.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-fuzz
mkdir -p "$out/corpus"
# SinterFrontend's sources: every frontend/*.cpp but the MLIR translation.
src=($(ls frontend/*.cpp | grep -v '^frontend/MLIR')
     frontend/fuzz/FrontendFuzzer.cpp frontend/fuzz/LibFuzzerMain.cpp
     dialects/Graph/IR/ShapeRules.cpp)
fuzzer="$out/frontend-fuzzer"
if [ ! -x "$fuzzer" ] || [ -n "$(find "${src[@]}" frontend/*.h dialects/Graph/IR/ShapeRules.h -newer "$fuzzer")" ]; then
  echo "fuzz: building $fuzzer"
  clang++-22 -std=c++17 -O1 -g -I. -DSINTER_STDLIB_DIR="\"$PWD/std\"" \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "${src[@]}" -o "$fuzzer.tmp"
  mv "$fuzzer.tmp" "$fuzzer"
fi

if [ "${1:-}" = "--replay" ]; then
  inputs=(test/Fuzz/corpus/* examples/*/*.sn std/*.sn)
  if ! "$fuzzer" -runs=0 "${inputs[@]}" > "$out/replay.log" 2>&1; then
    cat "$out/replay.log"
    echo "fuzz: an input of the corpus crashed the frontend" >&2
    exit 1
  fi
  echo "fuzz: replayed ${#inputs[@]} inputs under ASan and UBSan without a crash"
  exit 0
fi

seconds=${1:-300}
cp -n test/Fuzz/corpus/* examples/*/*.sn std/*.sn "$out/corpus/" 2>/dev/null || true
cd "$out"
./frontend-fuzzer -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -rss_limit_mb=4096 -print_final_stats=1 corpus
