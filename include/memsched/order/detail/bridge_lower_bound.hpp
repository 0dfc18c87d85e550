#pragma once
// A lower bound on the peak of every order that also counts the values certainly resident while a
// vertex runs: every order runs a strict ancestor a of v before v, and a reader s of a that is a
// strict descendant of v after v, so a's value is resident while v runs (its last reader comes
// after v, so no in-place successor has taken its buffer). Graph outputs are never freed: an
// output ancestor is resident too. Where the graph has long skip edges (random layered graphs,
// U-Nets, DenseNets) this is much stronger than a vertex with its inputs alone.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/sim/memory_model.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace memsched::detail {

/// Graphs above this many vertices get peak_lower_bound only: the ancestor sets take n^2 / 8
/// bytes (50 MB at this size).
inline constexpr std::size_t bridge_bound_max_vertices = 20'000;

/// max over v of min_running_bytes(g, v) (peak_lower_bound's term) + the bytes of the strict ancestors of v, other than v's
/// inputs, that are graph outputs or have a reader among v's strict descendants. Valid for every
/// order under the memory model (in-place rule included). O(m x n / 64 + n^2) time, n^2 / 8 bytes.
inline std::int64_t bridge_peak_lower_bound(const memory_graph& g) {
  const std::size_t n = g.size();
  std::int64_t bound = peak_lower_bound(g);
  if (n > bridge_bound_max_vertices) return bound;
  const std::size_t words = (n + 63) / 64;
  // ancestors[v]: v's strict ancestors, a bitset of `words` words.
  std::vector<std::uint64_t> ancestors(n * words, 0);
  const auto row = [&](std::size_t v) { return ancestors.data() + v * words; };
  const auto has = [](const std::uint64_t* set, std::size_t u) { return (set[u / 64] >> (u % 64) & 1) != 0; };
  for (std::size_t v : g.topological_order()) {
    std::uint64_t* mine = row(v);
    for (auto p : g.predecessors(v)) {
      const std::uint64_t* theirs = row(p);
      for (std::size_t w = 0; w < words; ++w) mine[w] |= theirs[w];
      mine[p / 64] |= std::uint64_t{1} << (p % 64);
    }
  }
  // extra[v]: the bytes of such ancestors of v. For each value a, the vertices v it spans are
  // its strict descendants that are strict ancestors of one of its readers (every descendant when
  // a is an output), less its readers (for them a is an input, counted already).
  std::vector<std::int64_t> extra(n, 0);
  std::vector<std::uint64_t> spanned(words);
  for (std::size_t a = 0; a < n; ++a) {
    if (g.bytes(a) <= 0 || memory_model::dies_unread(g, a)) continue;
    if (g.is_output(a)) {
      std::fill(spanned.begin(), spanned.end(), ~std::uint64_t{0});
    } else {
      std::fill(spanned.begin(), spanned.end(), 0);
      for (auto s : g.successors(a)) {
        const std::uint64_t* theirs = row(s);
        for (std::size_t w = 0; w < words; ++w) spanned[w] |= theirs[w];
      }
    }
    for (auto s : g.successors(a)) spanned[s / 64] &= ~(std::uint64_t{1} << (s % 64));
    for (std::size_t w = 0; w < words; ++w) {
      for (std::uint64_t bits = spanned[w]; bits != 0; bits &= bits - 1) {
        const std::size_t v = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        if (v < n && has(row(v), a)) extra[v] += g.bytes(a);
      }
    }
  }
  for (std::size_t v = 0; v < n; ++v) bound = std::max(bound, memory_model::min_running_bytes(g, v) + extra[v]);
  return bound;
}

}  // namespace memsched::detail
