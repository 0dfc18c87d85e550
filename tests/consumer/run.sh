#!/usr/bin/env bash
# Builds and runs tests/consumer against this source tree. Usage: run.sh MODE WORK_DIR
# (MODE: subdirectory, fetchcontent or package; package installs memsched into WORK_DIR first).
# Also builds tests/consumer/agree.cpp header-only and against memsched::compiled and compares.
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
    -DMEMSCHED_BUILD_EXAMPLES=OFF -DMEMSCHED_BUILD_TOOL=OFF -DMEMSCHED_INSTALL=ON -DCMAKE_INSTALL_PREFIX="$work/prefix" >/dev/null
  cmake --build "$work/memsched-build" --target memsched_compiled >/dev/null  # the one compiled part
  cmake --install "$work/memsched-build" >/dev/null
  extra=(-DCMAKE_PREFIX_PATH="$work/prefix")
fi
cmake -S "$here" -B "$work/consumer-build" -G Ninja -DMEMSCHED_CONSUME="$mode" -DMEMSCHED_SOURCE_DIR="$src" "${extra[@]}" >/dev/null
cmake --build "$work/consumer-build" >/dev/null
"$work/consumer-build/consumer"
# Header-only and separate compilation (memsched::compiled) must give the same results.
if [ ! -x "$work/consumer-build/agree_compiled" ]; then
  echo "memsched::compiled was not exported to the consumer" >&2
  exit 1
fi
# agree_compiled must take Serenity's search from the library (a strong definition, T), and
# agree_header_only must compile it itself (inline: weak, W, or inlined away, never T).
impl='serenity_order_impl('
if ! nm -C "$work/consumer-build/agree_compiled" | grep -F " T memsched::detail::$impl" >/dev/null; then
  echo "agree_compiled has no strong memsched::detail::$impl...): not compiled separately" >&2
  exit 1
fi
if nm -C "$work/consumer-build/agree_header_only" | grep -F " T memsched::detail::$impl" >/dev/null; then
  echo "agree_header_only has a strong memsched::detail::$impl...): not header-only" >&2
  exit 1
fi
"$work/consumer-build/agree_header_only" >"$work/header_only.txt"
"$work/consumer-build/agree_compiled" >"$work/compiled.txt"
if ! cmp -s "$work/header_only.txt" "$work/compiled.txt"; then
  echo "header-only and memsched::compiled disagree:" >&2
  diff "$work/header_only.txt" "$work/compiled.txt" | head -20 >&2
  exit 1
fi
echo "header-only and memsched::compiled agree on $(wc -l <"$work/compiled.txt") results"
