#!/usr/bin/env bash
# Fuzzes the lexer, parser and semantic analysis with libFuzzer.
#   scripts/fuzz.sh [SECONDS]    (default 300)
# Seeds come from test/Fuzz/corpus and the examples; new interesting inputs
# collect in build-fuzz/corpus; crashes land in build-fuzz/ as crash-*.
# Copy a fixed crash into test/Fuzz/corpus so the suite replays it forever.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
out=build-fuzz
mkdir -p "$out/corpus"
src=(frontend/{ASTDump,Builtins,Diagnostics,Lexer,Parser,Sema,SourceSet}.cpp
     frontend/fuzz/FrontendFuzzer.cpp frontend/fuzz/LibFuzzerMain.cpp
     dialects/Graph/IR/ShapeRules.cpp)
if [ ! -x "$out/frontend-fuzzer" ] || [ -n "$(find "${src[@]}" frontend/*.h -newer "$out/frontend-fuzzer")" ]; then
  clang++-22 -std=c++17 -O1 -g -I. -DSINTER_STDLIB_DIR="\"$PWD/std\"" \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "${src[@]}" -o "$out/frontend-fuzzer"
fi
cp -n test/Fuzz/corpus/* examples/*/*.sn std/*.sn "$out/corpus/" 2>/dev/null || true
cd "$out"
./frontend-fuzzer -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -rss_limit_mb=4096 -print_final_stats=1 corpus
