#!/usr/bin/env bash
# Builds and runs tests/consumer against this source tree. Usage: run.sh MODE WORK_DIR
# (MODE: subdirectory, fetchcontent or package; package installs memsched into WORK_DIR first).
# The subdirectory and package modes also build main.cpp against memsched::compiled (fetchcontent
# checks that the target exists); the subdirectory mode builds
# tests/consumer/agree.cpp header-only and against memsched::compiled and compares their output.
set -euo pipefail
mode=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
rm -rf "$work"
mkdir -p "$work"
extra=()
if [ "$mode" = package ]; then
  # Build type None (no optimisation flags), as the consumer's own build: src/memsched.cpp compiles
  # in 36 s instead of Release's 62 s, and what is tested is the packaging, not the speed.
  cmake -S "$src" -B "$work/memsched-build" -G Ninja -DCMAKE_BUILD_TYPE=None -DMEMSCHED_BUILD_TESTS=OFF -DMEMSCHED_BUILD_BENCH=OFF \
    -DMEMSCHED_BUILD_EXAMPLES=OFF -DMEMSCHED_BUILD_TOOL=OFF -DMEMSCHED_INSTALL=ON -DCMAKE_INSTALL_PREFIX="$work/prefix" >/dev/null
  cmake --build "$work/memsched-build" --target memsched_compiled >/dev/null  # the one compiled part
  cmake --install "$work/memsched-build" >/dev/null
  extra=(-DCMAKE_PREFIX_PATH="$work/prefix")
fi
cmake -S "$here" -B "$work/consumer-build" -G Ninja -DMEMSCHED_CONSUME="$mode" -DMEMSCHED_SOURCE_DIR="$src" "${extra[@]}" >/dev/null
cmake --build "$work/consumer-build" >/dev/null
"$work/consumer-build/consumer"
[ "$mode" != fetchcontent ] || exit 0  # the consumer's configure checked memsched::compiled exists
if [ ! -x "$work/consumer-build/consumer_compiled" ]; then
  echo "memsched::compiled was not exported to the consumer" >&2
  exit 1
fi
"$work/consumer-build/consumer_compiled"
# A program linking memsched::compiled must take the separately compiled parts from the library
# (strong definitions, T); a header-only one must compile them itself (template instantiations,
# `name<void>(`, config.hpp: weak, W, or inlined away, never T).
strong() {
  local name=${2%(}
  nm -C "$1" | grep -F -e " T memsched::$name(" -e " T memsched::$name<void>(" >/dev/null
}
# The header-only program must hold its own copy of the body: the weak instantiation of one entry
# point that is too large to be inlined.
weak_instance() { nm -C "$1" | grep -F " W memsched::$2<void>(" >/dev/null; }
if ! strong "$work/consumer-build/consumer_compiled" 'memory_graph::build('; then
  echo "consumer_compiled has no strong memsched::memory_graph::build(...): not compiled separately" >&2
  exit 1
fi
[ "$mode" = subdirectory ] || exit 0
# Header-only and separate compilation (memsched::compiled) must give the same results.
for impl in 'detail::serenity_order_impl(' 'detail::lifetime_search_on(' 'detail::hiremate_plan_on(' 'memory_graph::build(' \
  'parse_json_graph(' 'parse_graphml_graph(' 'write_dot_graph(' 'detail::solve_layout_until('; do
  if ! strong "$work/consumer-build/agree_compiled" "$impl"; then
    echo "agree_compiled has no strong memsched::$impl...): not compiled separately" >&2
    exit 1
  fi
  if strong "$work/consumer-build/agree_header_only" "$impl"; then
    echo "agree_header_only has a strong memsched::$impl...): not header-only" >&2
    exit 1
  fi
done
if ! weak_instance "$work/consumer-build/agree_header_only" 'detail::serenity_order_impl'; then
  echo "agree_header_only has no instantiation memsched::detail::serenity_order_impl<void>(...)" >&2
  exit 1
fi
# The conversion of a dataflow_graph and the default remat_plan portfolio are explicit
# instantiations in memsched::compiled (the `extern template`s of graph/dataflow_graph.hpp and
# remat/remat_plan.hpp): agree.cpp's object must call them (U) without instantiating them when it
# links the library, and must instantiate them header-only. (agree.cpp converts no other graph type.)
compiled_object=$work/consumer-build/CMakeFiles/agree_compiled.dir/agree.cpp.o
header_only_object=$work/consumer-build/CMakeFiles/agree_header_only.dir/agree.cpp.o
for object in "$compiled_object" "$header_only_object"; do
  [ -f "$object" ] || { echo "no object file $object" >&2; exit 1; }
done
symbols() { nm -C "--$2-only" "$1" | grep -cF "$3" || true; }
for instance in 'memsched::make_memory_graph<' 'memsched::detail::remat_over_orders<memsched::no_solver>('; do
  if [ "$(symbols "$compiled_object" defined "$instance")" != 0 ] || [ "$(symbols "$compiled_object" undefined "$instance")" = 0 ]; then
    echo "agree_compiled's TU instantiates $instance...) or does not call it: the extern template is not used" >&2
    exit 1
  fi
  if [ "$(symbols "$header_only_object" defined "$instance")" = 0 ]; then
    echo "agree_header_only's TU has no $instance...) of its own" >&2
    exit 1
  fi
done
"$work/consumer-build/agree_header_only" "$work/files_header_only" >"$work/header_only.txt"
"$work/consumer-build/agree_compiled" "$work/files_compiled" >"$work/compiled.txt"
if ! cmp -s "$work/header_only.txt" "$work/compiled.txt"; then
  echo "header-only and memsched::compiled disagree:" >&2
  diff "$work/header_only.txt" "$work/compiled.txt" | head -20 >&2
  exit 1
fi
echo "header-only and memsched::compiled agree on $(wc -l <"$work/compiled.txt") results"
