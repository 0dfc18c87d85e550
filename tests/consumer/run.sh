#!/usr/bin/env bash
# Builds and runs tests/consumer against this source tree. Usage: run.sh MODE WORK_DIR
# (MODE: subdirectory, fetchcontent or package; package installs memsched into WORK_DIR first).
set -euo pipefail
mode=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
rm -rf "$work"
mkdir -p "$work"
extra=()
if [ "$mode" = package ]; then
  cmake -S "$src" -B "$work/memsched-build" -G Ninja -DMEMSCHED_BUILD_TESTS=OFF -DMEMSCHED_BUILD_BENCH=OFF \
    -DMEMSCHED_BUILD_EXAMPLES=OFF -DMEMSCHED_INSTALL=ON -DCMAKE_INSTALL_PREFIX="$work/prefix" >/dev/null
  cmake --install "$work/memsched-build" >/dev/null
  extra=(-DCMAKE_PREFIX_PATH="$work/prefix")
fi
cmake -S "$here" -B "$work/consumer-build" -G Ninja -DMEMSCHED_CONSUME="$mode" -DMEMSCHED_SOURCE_DIR="$src" "${extra[@]}" >/dev/null
cmake --build "$work/consumer-build" >/dev/null
"$work/consumer-build/consumer"
