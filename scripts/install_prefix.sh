#!/bin/sh
# Install pyatc as a CANN-style tree:
#   scripts/install_prefix.sh <prefix>
# gives <prefix>/bin/{atc,atc.bin,pyatc}, <prefix>/lib64/libpyatc_wrapper.so,
# <prefix>/python/site-packages/ge and <prefix>/set_env.sh. Afterwards
# `source <prefix>/set_env.sh` makes pyatc, `python3 -m ge.pyatc` and `import ge` work from any
# Python 3.9+ that has the runtime dependencies (numpy, onnx, protobuf, cffi).
#
# Environment: PYTHON    interpreter to build atc.bin against (default python3); atc.bin embeds
#                        it and uses its environment's packages
#              BUILD_DIR build directory (default: a temporary directory, removed afterwards)
#              CMAKE_ARGS extra arguments for the CMake configure step, e.g.
#                        -DATC_STATIC_EXTERNAL=/path/libatc_static.a
set -eu
if [ $# -ne 1 ]; then
    echo "usage: $0 <prefix>" >&2
    exit 2
fi
prefix="$1"
source_dir="$(cd "$(dirname -- "$0")/.." && pwd -P)"
python="$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')"
if [ -n "${BUILD_DIR:-}" ]; then
    build_dir="$BUILD_DIR"
else
    build_dir="$(mktemp -d)"
    trap 'rm -rf "$build_dir"' EXIT
fi
# shellcheck disable=SC2086
cmake -S "$source_dir/native" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
    -DPython_EXECUTABLE="$python" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" >/dev/null
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
# Byte-compile the package once, so no run pays for it (or needs a writable tree).
"$python" -m compileall -q "$prefix/python/site-packages/ge" >/dev/null || true
echo "installed pyatc into $prefix; run: source $prefix/set_env.sh"
