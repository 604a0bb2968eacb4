#!/usr/bin/env bash
# Sets up a fresh machine, builds Sinter and runs every test: the lit suite
# (compiler, dialects, diagnostics, fuzz regressions) and the unit tests,
# both through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd build
ctest --output-on-failure
