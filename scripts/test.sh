#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (ctest). The README's test command.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
# The optional parts the tests cover: the ONNX reader (libonnx-dev), the pictures (matplotlib) and
# the PyTorch exporter (python3-torch, ~2-3 min to install once). Without them their tests are
# reported as skipped, not passed.
bash "$root/scripts/setup.sh" --onnx --plots --torch
# It builds what ctest runs: the tests, the tool and the examples; the benchmarks are built by
# `scripts/build.sh` (everything) or by name, and in CI's sanitizer phase.
bash "$root/scripts/build.sh" -DMEMSCHED_BUILD_TESTS=ON -DMEMSCHED_BUILD_TOOL=ON -DMEMSCHED_BUILD_EXAMPLES=ON -DMEMSCHED_BUILD_BENCH=OFF "$@"
ctest --test-dir "$build" --output-on-failure --parallel "${JOBS:-$(nproc)}" --timeout 600
