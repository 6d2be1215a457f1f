#!/usr/bin/env bash
# One command for a fresh machine: set up a virtual environment with pyatc installed, then
# compile the bundled sample model with pyatc and show what was built.
#   scripts/quickstart.sh            (VENV=/path to choose the environment, default .venv)
set -euo pipefail
cd "$(dirname -- "$0")/.."
repo=$(pwd)
venv="${VENV:-$repo/.venv}"
out="${OUT:-$repo/build/sample}"

python="${PYTHON:-python3}"

# What the build and the operator compiler need from the system: a C compiler and cmake. The
# BLAS is not among them: it is the scipy-openblas32 wheel that pip installs with pyatc.
PYTHON="$python" scripts/install_missing.sh cc:gcc cmake:cmake
"$python" -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
python -m pip install -q --upgrade pip
python -m pip install -q . onnxruntime

mkdir -p "$out"
cd "$out"
python "$repo/samples/make_sample.py" sample.onnx
pyatc --framework=5 --model=sample.onnx --output=sample --soc_version=Ascend310P3 \
      --op_compiler_cache_dir="$out/cache" --precision_mode=must_keep_origin_dtype
pyatc --mode=6 --om=sample.om
python -m ge.runtime.compare --onnx sample.onnx --om sample.om
echo "sample.om written to $out"
