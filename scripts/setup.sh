#!/usr/bin/env bash
# Installs what Sinter's build and tests need on a fresh Debian 12 machine.
# Idempotent: packages already present are skipped.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 libclang-rt-22-dev
  libomp-22-dev
  libprotobuf-dev protobuf-compiler libgtest-dev nlohmann-json3-dev libdnnl-dev
  libgloo-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  echo "setup: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python is for tests only: NumPy and JAX are the reference implementations,
# scikit-learn ships the digits data set of examples/mlp, and TensorBoard's
# event reader checks the event files a run writes.
cd "$(dirname "$0")/.."
python_packages=(numpy jax scikit-learn tensorboard)
if ! .venv/bin/python3 -c "import numpy, jax, sklearn, tensorboard" 2>/dev/null; then
  echo "setup: installing ${python_packages[*]} into .venv"
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "${python_packages[@]}"
fi

# Where the CUDA toolkit is, the CUDA runtime's fused attention is built on
# cuDNN's C++ frontend: headers only, from PyPI, into .venv/.../include.
if [ -d /usr/local/cuda ] &&
   ! ls .venv/lib/python3*/site-packages/include/cudnn_frontend.h >/dev/null 2>&1; then
  echo "setup: installing nvidia-cudnn-frontend into .venv"
  .venv/bin/pip install -q --disable-pip-version-check nvidia-cudnn-frontend==1.32.0
fi
