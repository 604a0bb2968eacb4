#!/usr/bin/env bash
# Sets up a fresh machine, builds Sinter and runs every test: the fuzz corpora
# (frontend, runtime readers) under sanitizers, then through ctest the lit
# suite (compiler, dialects, diagnostics, fuzz regressions) and the GoogleTest
# unit tests (compiler and runtime).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
# The fuzz corpus once more, under ASan and UBSan (the lit suite replays it
# without sanitizers, through the dialect verifiers as well).
scripts/fuzz.sh --replay
cd build
status=0
ctest --output-on-failure 2>&1 | tee ctest.out || status=$?
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
# ctest shows the lit suite as one test; print lit's own count too, then
# ctest's summary again so it closes the output.
echo
echo "lit suite:"
grep -E '^ *(Total Discovered Tests|Passed|Failed|Unresolved|Unsupported|Expectedly Failed)' \
  Testing/Temporary/LastTest.log | sed 's/^/  /' || true
grep -E 'tests passed|tests failed' ctest.out | tail -n 1
exit $status
