#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, -fsanitize=fuzzer,address,undefined) and runs each for a
# number of seconds; exits 1 if any harness crashes, leaks, trips a sanitizer, times out or runs out
# of memory (the reproducer is saved under $BUILD/artifacts/).
#
#   fuzz/run.sh [seconds-per-harness] [harness ...]     (default 45 s; harnesses: json graphml dot plan onnx)
#
# The onnx harness is built only when ONNX and protobuf are installed (Debian: libonnx-dev,
# libprotobuf-dev; ONNX_NAMESPACE=onnx as their CMake config says); without them it is skipped
# with a message, unless named on the command line (then missing ONNX is an error).
#
# Environment: JOBS (harnesses built and run at once; default: the cores), MEMSCHED_FUZZ_BUILD
# (default <repo>/build-fuzz: binaries, the growing corpus,
# artifacts), CXX_FUZZ (default clang++-19, which `scripts/setup.sh --fuzz` installs).
# The corpus persists in $BUILD/corpus/<harness>, so repeated runs continue where they stopped.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${MEMSCHED_FUZZ_BUILD:-$ROOT/build-fuzz}
CXX_FUZZ=${CXX_FUZZ:-clang++-19}
SECONDS_EACH=${1:-45}
shift || true
HARNESSES=("$@")
EXPLICIT=${#HARNESSES[@]}
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(json graphml dot plan onnx)

declare -A SOURCE=([json]=json_graph [graphml]=graphml_graph [dot]=dot_graph [plan]=plan_files [onnx]=onnx_graph)
# ONNX models are binary and the bundled ones are 12-47 KB: a longer limit than the text formats.
declare -A MAX_LEN=([json]=8192 [graphml]=8192 [dot]=8192 [plan]=8192 [onnx]=65536)
have_onnx() { [ -f /usr/include/onnx/onnx_pb.h ] && [ -f /usr/include/google/protobuf/message.h ]; }
# -Wno-deprecated-declarations: libstdc++ 12's std::stable_sort calls std::get_temporary_buffer,
# which it declares deprecated and silences for GCC only.
FLAGS=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -Wno-deprecated-declarations -I "$ROOT/include")
mkdir -p "$BUILD/artifacts"

build() {  # rebuilds a harness when it is missing or older than any header or harness source
  local name=$1 src=$ROOT/fuzz/${SOURCE[$1]}.cpp bin=$BUILD/fuzz_${SOURCE[$1]}
  if [ -x "$bin" ] && [ -z "$(find "$ROOT/include" "$ROOT/fuzz" -newer "$bin" \( -name '*.[hc]pp' -o -name '*.ipp' \) -print -quit)" ]; then return; fi
  echo "fuzz: building $bin" >&2
  local extra=()
  [ "$name" = onnx ] && extra=(-DONNX_NAMESPACE=onnx -DONNX_ML=1 -DMEMSCHED_HAVE_ONNX -lonnx -lonnx_proto -lprotobuf -lpthread)
  "$CXX_FUZZ" "${FLAGS[@]}" "$src" -o "$bin" -lboost_graph "${extra[@]}"
}

seeds() {  # seed directories of a harness: hand-written seeds, regression inputs, small test graphs (JSON only)
  local name=$1 dirs=("$ROOT/fuzz/seeds/$1")
  [ "$name" = onnx ] && dirs+=("$ROOT/tests/data/onnx")
  [ -d "$ROOT/tests/data/fuzz/$1" ] && dirs+=("$ROOT/tests/data/fuzz/$1")
  if [ "$name" = json ]; then
    mkdir -p "$BUILD/seeds_json"
    find "$ROOT/tests/data" -path "$ROOT/tests/data/fuzz" -prune -o -name '*.json' -size -16k -exec cp {} "$BUILD/seeds_json/" \;
    dirs+=("$BUILD/seeds_json")
  fi
  printf '%s\n' "${dirs[@]}"
}

# Which harnesses run: the named or default ones, onnx only where its libraries are installed.
selected=()
for name in "${HARNESSES[@]}"; do
  [ -n "${SOURCE[$name]:-}" ] || { echo "fuzz: unknown harness '$name' (json graphml dot plan onnx)" >&2; exit 2; }
  if [ "$name" = onnx ] && ! have_onnx; then
    [ "$EXPLICIT" -gt 0 ] && { echo "fuzz: onnx needs libonnx-dev and libprotobuf-dev" >&2; exit 2; }
    echo "fuzz: onnx skipped (libonnx-dev / libprotobuf-dev not installed)" >&2
    continue
  fi
  selected+=("$name")
done

# Each harness is one clang TU and one single-threaded fuzzer: JOBS of them (default: the cores)
# are built, then run, at the same time. Every harness still gets SECONDS_EACH seconds of a core.
jobs=${JOBS:-$(nproc)}
throttle() { while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done; }
# throttle's `wait -n` takes the exit codes, so each build leaves its verdict in a file.
for name in "${selected[@]}"; do
  rm -f "$BUILD/fuzz_$name.built"
  throttle
  { build "$name" && touch "$BUILD/fuzz_$name.built"; } &
done
wait
for name in "${selected[@]}"; do
  [ -f "$BUILD/fuzz_$name.built" ] || { echo "fuzz: harness $name did not build" >&2; exit 1; }
done

run() {  # runs harness $1 for SECONDS_EACH seconds; its result goes to $BUILD/fuzz_$1.result
  local name=$1 log=$BUILD/fuzz_$1.log dirs
  mkdir -p "$BUILD/corpus/$name"
  mapfile -t dirs < <(seeds "$name")
  echo "fuzz: $name for ${SECONDS_EACH}s" >&2
  if UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$BUILD/fuzz_${SOURCE[$name]}" -max_total_time="$SECONDS_EACH" -max_len="${MAX_LEN[$name]}" \
       -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$BUILD/artifacts/$name-" "$BUILD/corpus/$name" "${dirs[@]}" >"$log" 2>&1; then
    echo "fuzz: $name: $(grep -E '^stat::number_of_executed_units|^Done ' "$log" | tr '\n' ' ')" >&2
    echo ok >"$BUILD/fuzz_$name.result"
  else
    echo "fuzz: $name FAILED (log: $log)" >&2
    grep -E 'ERROR|SUMMARY|check failed|Test unit written' "$log" | head -20 >&2 || true
    echo failed >"$BUILD/fuzz_$name.result"
  fi
}
for name in "${selected[@]}"; do
  rm -f "$BUILD/fuzz_$name.result"
  throttle
  run "$name" &
done
wait
failed=()
for name in "${selected[@]}"; do
  [ "$(cat "$BUILD/fuzz_$name.result" 2>/dev/null)" = ok ] || failed+=("$name")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all harnesses ran without a finding" >&2
