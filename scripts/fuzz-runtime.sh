#!/usr/bin/env bash
# Fuzzes the runtime's file readers (.npy, token files, safetensors) with
# libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer.
#   scripts/fuzz-runtime.sh [SECONDS]   fuzz (default 300 s); new inputs collect
#                                       in build-fuzz/runtime-corpus, crashes in
#                                       build-fuzz/runtime-crash-*
#   scripts/fuzz-runtime.sh --replay    run every input of test/Runtime/corpus once
# Copy a crash, once fixed, into test/Runtime/corpus: the suite replays it
# forever (here under sanitizers, and in ReaderCorpus_test without).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-fuzz
mkdir -p "$out/runtime-corpus"
src=(runtime/src/checkpoint/{JsonTree,Safetensors}.cpp
     runtime/src/core/DType.cpp
     runtime/src/data/{Npy,PyLiteral,TokenFile}.cpp
     runtime/src/support/{AtomicFile,Crc32c,FileBuffer,Format}.cpp
     runtime/fuzz/ReaderFuzzer.cpp)
fuzzer="$out/runtime-reader-fuzzer"
if [ ! -x "$fuzzer" ] || [ -n "$(find "${src[@]}" runtime/src runtime/include -name '*.h' -newer "$fuzzer" -o -name '*.cpp' -newer "$fuzzer")" ]; then
  echo "fuzz-runtime: building $fuzzer"
  clang++-22 -std=c++17 -O1 -g -Iruntime/include -Iruntime/src \
    -fno-exceptions -ffp-contract=off \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "${src[@]}" -o "$fuzzer.tmp"
  mv "$fuzzer.tmp" "$fuzzer"
fi

if [ "${1:-}" = "--replay" ]; then
  inputs=(test/Runtime/corpus/*)
  if ! "$fuzzer" -runs=0 "${inputs[@]}" > "$out/runtime-replay.log" 2>&1; then
    cat "$out/runtime-replay.log"
    echo "fuzz-runtime: an input of the corpus crashed a reader" >&2
    exit 1
  fi
  echo "fuzz-runtime: replayed ${#inputs[@]} inputs under ASan and UBSan without a crash"
  exit 0
fi

seconds=${1:-300}
cp -n test/Runtime/corpus/* "$out/runtime-corpus/" 2>/dev/null || true
cd "$out"
./runtime-reader-fuzzer -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=runtime- \
  -dict=../runtime/fuzz/reader.dict runtime-corpus
