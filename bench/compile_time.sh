#!/usr/bin/env bash
# Compile time of small user TUs (issue 9, section 6): a Boost.Graph reference (adjacency_list +
# topological_sort), a Serenity call on a graph read from a file (order/serenity.hpp +
# graph/json_io.hpp), the same call through the umbrella header memsched/memsched.hpp, and `goal`:
# the TU as the issue states it (includes order/serenity.hpp and graph/json_io.hpp, calls
# serenity_order on a graph built in code), and `remat`: remat_plan (the portfolio of
# `memsched remat --algo auto`) on a graph read from a file. Each TU is compiled RUNS times (g++ -O2
# -std=c++20 -c, as a user would) for every include directory given; the output lists every run,
# the median, and the ratio of each median to the Boost TU's median of the same run: wall-clock
# seconds (what a user waits) and user CPU seconds (steadier on a loaded machine).
# `goal_sep`, `umbrella_sep` and `remat_sep` are those TUs with -DMEMSCHED_SEPARATE_COMPILATION
# (what a TU that links memsched::compiled compiles; include directories older than
# core/config.hpp ignore the macro and compile them header-only), and `library` is
# src/memsched.cpp, the one TU memsched::compiled adds (every impl/*.ipp of the directory; compiled
# once per build, not per user TU; listed where the directory has order/impl/serenity.ipp).
#
#   bench/compile_time.sh [INCLUDE_DIR ...]        (default: this checkout's include/)
#   RUNS=3 CXX=g++ CXXFLAGS="-O2 -std=c++20" bench/compile_time.sh /work/base/include include
#   TUS="goal umbrella" bench/compile_time.sh OLD/include include   (those TUs and boost only)
#
# Interleaves the include directories run by run, so a load change on the machine hits all alike.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-3}
cxx=${CXX:-g++}
read -r -a flags <<<"${CXXFLAGS:--O2 -std=c++20}"
[ $# -gt 0 ] || set -- "$here/include"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/boost.cpp" <<'CPP'
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <iterator>
#include <vector>

int main() {
  boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS> g(4);
  boost::add_edge(0, 1, g);
  boost::add_edge(1, 2, g);
  std::vector<std::size_t> order;
  boost::topological_sort(g, std::back_inserter(order));
  return static_cast<int>(order.size());
}
CPP
cat >"$tmp/serenity.cpp" <<'CPP'
#include <memsched/graph/json_io.hpp>
#include <memsched/order/serenity.hpp>

int main(int argc, char** argv) {
  const auto g = memsched::read_json_graph(argv[argc - 1]);
  return static_cast<int>(memsched::serenity_order(g).peak_bytes & 1);
}
CPP
cat >"$tmp/goal.cpp" <<'CPP'
#include <memsched/graph/json_io.hpp>
#include <memsched/order/serenity.hpp>

int main(int argc, char**) {
  memsched::dataflow_graph g(3);
  boost::add_edge(0, 1, g);
  boost::add_edge(1, 2, g);
  g[0].bytes = argc;
  return static_cast<int>(memsched::serenity_order(g).peak_bytes & 1);
}
CPP
cat >"$tmp/umbrella.cpp" <<'CPP'
#include <memsched/memsched.hpp>

int main(int argc, char** argv) {
  const auto g = memsched::read_json_graph(argv[argc - 1]);
  return static_cast<int>(memsched::serenity_order(g).peak_bytes & 1);
}
CPP

cat >"$tmp/remat.cpp" <<'CPP'
#include <memsched/graph/json_io.hpp>
#include <memsched/remat/remat_plan.hpp>

int main(int argc, char** argv) {
  const auto g = memsched::read_json_graph(argv[argc - 1]);
  return static_cast<int>(memsched::remat_plan(g, 1000).total_cost > 0);
}
CPP

cp "$tmp/goal.cpp" "$tmp/goal_sep.cpp"
cp "$tmp/remat.cpp" "$tmp/remat_sep.cpp"
cp "$tmp/umbrella.cpp" "$tmp/umbrella_sep.cpp"
tus() {  # the TUs measured for include directory $1 (TUS, when set, names them; boost always)
  if [ -n "${TUS:-}" ]; then
    echo boost "${TUS//boost/}"
    return 0
  fi
  echo boost serenity goal umbrella remat goal_sep umbrella_sep remat_sep
  [ -f "$1/memsched/order/impl/serenity.ipp" ] && echo library
  return 0
}

# times[tu@dir] = "t1 t2 ..."
declare -A times user
for ((r = 1; r <= runs; ++r)); do
  for dir in "$@"; do
    for tu in $(tus "$dir"); do
      extra=()
      case $tu in goal_sep | umbrella_sep | remat_sep | library) extra=(-DMEMSCHED_SEPARATE_COMPILATION) ;; esac
      # The library TU of this directory: every impl/*.ipp it has (what src/memsched.cpp includes).
      [ "$tu" = library ] && (cd "$dir" && find memsched -name '*.ipp' | sort | sed 's|.*|#include <&>|') >"$tmp/library.cpp"
      if ! /usr/bin/time -f "%e %U" -o "$tmp/t" "$cxx" "${flags[@]}" "${extra[@]}" -I"$dir" -c "$tmp/$tu.cpp" -o "$tmp/$tu.o" 2>"$tmp/err"; then
        cat "$tmp/err" >&2
        exit 1
      fi
      read -r t u < <(tail -1 "$tmp/t")
      times[$tu@$dir]="${times[$tu@$dir]:-} $t"
      user[$tu@$dir]="${user[$tu@$dir]:-} $u"
    done
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "$cxx ${flags[*]}, $runs runs, $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for dir in "$@"; do
  b=$(echo "${times[boost@$dir]}" | median)
  bu=$(echo "${user[boost@$dir]}" | median)
  for tu in $(tus "$dir"); do
    m=$(echo "${times[$tu@$dir]}" | median)
    mu=$(echo "${user[$tu@$dir]}" | median)
    printf '%-28s %-9s wall:%-20s median %6.2f s ratio %5.2f | user:%-20s median %6.2f s ratio %5.2f\n' "$dir" "$tu" \
      "${times[$tu@$dir]}" "$m" "$(echo "$m / $b" | bc -l)" "${user[$tu@$dir]}" "$mu" "$(echo "$mu / $bu" | bc -l)"
  done
done
