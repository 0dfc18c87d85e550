#!/usr/bin/env bash
# serenity_order's time on graph files, compiled against two include trees in the same run (issue 9:
# "bench_serenity no more than 5% slower on any graph", against an older commit). A small driver
# (below) reads a graph, builds its memory_graph, then calls serenity_order (one thread, no attempt
# limit, 120 s time limit) until MIN_MS milliseconds have passed and prints the mean per call, the
# states expanded, the peak, the status and a hash of the order. It is compiled header-only (g++ -O3
# -DNDEBUG) against OLD_INCLUDE and NEW_INCLUDE; each graph runs RUNS times per binary, interleaved,
# so that a load change on the machine hits both alike. Prints per graph the medians, their ratio
# (new / old), the ratio of the fastest runs (noise on a shared machine only adds time, so the
# minimum is the steadier estimate where the machine's speed jumps between runs), both state counts,
# whether the peaks and the orders agree and both statuses, then the graphs above 1.05x by the
# medians and by the minima, and the graphs whose orders differ.
#
#   bench/serenity_against.sh OLD_INCLUDE [NEW_INCLUDE] [GRAPH.json ...]
#   RUNS=5 bench/serenity_against.sh /tmp/base/include include ../shared/graphs/torch/*.inference.json
#   MEASURE=instructions CALLS=3 bench/serenity_against.sh /tmp/base/include
#
# MEASURE=instructions counts instructions instead (valgrind's callgrind, which counts the same
# total on every run whatever the machine does): a run with CALLS calls less a run with none,
# divided by CALLS, per binary and graph; the ratio is new / old.
#
# NEW_INCLUDE (a directory) defaults to this checkout's include/, the graphs to
# ../shared/graphs/*/*.json beside the checkout (MEMSCHED_SHARED_GRAPHS overrides the directory).
# An old tree: `git archive COMMIT include | tar -x -C DIR`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
old=$(cd "$1" && pwd)
shift
new=$here/include
if [ $# -ge 1 ] && [ -d "$1" ]; then
  new=$(cd "$1" && pwd)
  shift
fi
if [ $# -eq 0 ]; then
  shared=${MEMSCHED_SHARED_GRAPHS:-$here/../shared/graphs}
  set -- "$shared"/*/*.json
fi
runs=${RUNS:-3}
min_ms=${MIN_MS:-300}
cxx=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/driver.cpp" <<'CPP'
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/serenity.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const memsched::memory_graph g = memsched::make_memory_graph(memsched::read_json_graph(argv[1]));
  memsched::serenity_options options;
  options.attempt_time_limit = std::chrono::duration<double>(1e6);
  options.time_limit = std::chrono::duration<double>(120);
  options.threads = 1;
#ifdef COUNT_CALLS  // argv[2] calls, for valgrind (MEASURE=instructions)
  long sum = 0;
  for (int k = 0; k < std::stoi(argv[2]); ++k) sum += memsched::serenity_order(g, options).peak_bytes;
  std::printf("%ld\n", sum);
  return 0;
#endif
  const auto min_time = std::chrono::milliseconds(std::stoi(argv[2]));
  const auto start = std::chrono::steady_clock::now();
  auto r = memsched::serenity_order(g, options);
  long calls = 1;
  while (std::chrono::steady_clock::now() - start < min_time) {
    r = memsched::serenity_order(g, options);
    ++calls;
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::uint64_t order_hash = 14695981039346656037ull;  // FNV-1a over the order's vertex indices
  for (const auto v : r.order) order_hash = (order_hash ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
  std::printf("%.5f %llu %lld %d %016llx\n", ms / static_cast<double>(calls), static_cast<unsigned long long>(r.stats.states_expanded),
              static_cast<long long>(r.peak_bytes), static_cast<int>(r.status), static_cast<unsigned long long>(order_hash));
}
CPP
for side in old new; do
  dir=$old
  [ $side = new ] && dir=$new
  count_calls=()
  [ "${MEASURE:-time}" != instructions ] || count_calls=(-DCOUNT_CALLS)
  "$cxx" -std=c++20 -O3 -DNDEBUG "${count_calls[@]}" -pthread -I"$dir" "$tmp/driver.cpp" -o "$tmp/$side"
done

# Shared by both modes: a graph's name in the tables, and whether a ratio is above 1.05x.
graph_name() { echo "$(basename "$(dirname "$1")")/$(basename "$1" .json)"; }
above_margin() { [ "$(echo "$1 > 1.05" | bc -l)" = 1 ]; }

if [ "${MEASURE:-time}" = instructions ]; then
  command -v valgrind >/dev/null || { echo "serenity_against.sh: MEASURE=instructions needs valgrind (apt-get install -y valgrind)" >&2; exit 2; }
  calls=${CALLS:-3}
  # Instructions of one run of the driver: refs SIDE GRAPH CALLS (the driver's own argument order).
  refs() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$tmp/$1" "$2" "$3" 2>&1 | awk '/Collected/ {print $4}'; }
  echo "old $old, new $new; $cxx -O3, instructions per serenity_order call (callgrind: $calls calls less none), $(date -u +%FT%TZ)"
  printf '%-44s %14s %14s %7s\n' graph "old" "new" ratio
  above=()
  for f in "$@"; do
    name=$(graph_name "$f")
    per_call_old=$(( ($(refs old "$f" "$calls") - $(refs old "$f" 0)) / calls ))
    per_call_new=$(( ($(refs new "$f" "$calls") - $(refs new "$f" 0)) / calls ))
    ratio=$(echo "$per_call_new / $per_call_old" | bc -l)
    printf '%-44s %14d %14d %6.3fx\n' "$name" "$per_call_old" "$per_call_new" "$ratio"
    if above_margin "$ratio"; then above+=("$name"); fi
  done
  echo "above 1.05x: ${above[*]:-none}"
  exit 0
fi

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
minimum() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }
echo "old $old, new $new; $cxx -O3, $runs interleaved runs of at least $min_ms ms, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %10s %10s %6s %6s  %s\n' graph "old ms" "new ms" ratio "min" "states old/new, peak, order, status old/new"
slow=() slow_min=() other_order=()
for f in "$@"; do
  name=$(graph_name "$f")
  t_old="" t_new=""
  for ((r = 1; r <= runs; ++r)); do
    for side in old new; do
      out=$("$tmp/$side" "$f" "$min_ms") || { echo "serenity_against.sh: $f: the $side driver failed" >&2; exit 1; }
      read -r ms states peak status order <<<"$out"
      if [ $side = old ]; then
        t_old="$t_old $ms" states_old=$states peak_old=$peak status_old=$status order_old=$order
      else
        t_new="$t_new $ms" states_new=$states peak_new=$peak status_new=$status order_new=$order
      fi
    done
  done
  m_old=$(echo "$t_old" | median)
  m_new=$(echo "$t_new" | median)
  ratio=$(echo "$m_new / $m_old" | bc -l)
  ratio_min=$(echo "$(echo "$t_new" | minimum) / $(echo "$t_old" | minimum)" | bc -l)
  peaks=same
  [ "$peak_old" = "$peak_new" ] || peaks="DIFFERENT ($peak_old / $peak_new)"
  orders=same
  [ "$order_old" = "$order_new" ] || { orders=DIFFERENT; other_order+=("$name"); }
  printf '%-44s %10.4f %10.4f %5.2fx %5.2fx  %s/%s, peak %s, order %s, status %s/%s\n' "$name" "$m_old" "$m_new" "$ratio" \
    "$ratio_min" "$states_old" "$states_new" "$peaks" "$orders" "$status_old" "$status_new"
  if above_margin "$ratio"; then slow+=("$name"); fi
  if above_margin "$ratio_min"; then slow_min+=("$name"); fi
done
echo "above 1.05x (medians): ${slow[*]:-none}"
echo "above 1.05x (fastest runs): ${slow_min[*]:-none}"
echo "orders that differ: ${other_order[*]:-none}"
