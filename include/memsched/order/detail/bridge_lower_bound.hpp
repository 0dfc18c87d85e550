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

/// Graphs above this many vertices get peak_lower_bound only: the ancestor and descendant sets
/// take n^2 / 4 bytes (50 MB at this size).
inline constexpr std::size_t bridge_bound_max_vertices = 14'000;

/// max over v of min_running_bytes(g, v) (peak_lower_bound's term) + the bytes of the strict
/// ancestors of v, other than v's inputs, that are graph outputs or have a reader among v's strict
/// descendants. Valid for every order under the memory model (in-place rule included).
/// O(m x n / 64 + S) time, where S <= n^2 is the number of (value, vertex it spans) pairs;
/// n^2 / 4 bytes.
inline std::int64_t bridge_peak_lower_bound(const memory_graph& g) {
  const std::size_t n = g.size();
  std::int64_t bound = peak_lower_bound(g);
  if (n > bridge_bound_max_vertices) return bound;
  const std::size_t words = (n + 63) / 64;
  // ancestors[v] / descendants[v]: v's strict ancestors / descendants, bitsets of `words` words.
  std::vector<std::uint64_t> ancestors(n * words, 0), descendants(n * words, 0);
  const auto above = [&](std::size_t v) { return ancestors.data() + v * words; };
  const auto below = [&](std::size_t v) { return descendants.data() + v * words; };
  // One pass in an order where every neighbour comes first: a set is the union of its
  // neighbours' sets and the neighbours themselves.
  const auto close = [words](auto first, auto last, auto set_of, auto neighbours_of) {
    for (; first != last; ++first) {
      std::uint64_t* mine = set_of(*first);
      for (auto u : neighbours_of(*first)) {
        const std::uint64_t* theirs = set_of(u);
        for (std::size_t w = 0; w < words; ++w) mine[w] |= theirs[w];
        mine[u / 64] |= std::uint64_t{1} << (u % 64);
      }
    }
  };
  const auto& topo = g.topological_order();
  close(topo.begin(), topo.end(), above, [&](std::size_t v) { return g.predecessors(v); });
  close(topo.rbegin(), topo.rend(), below, [&](std::size_t v) { return g.successors(v); });
  // extra[v]: the bytes of such ancestors of v. The vertices a value a spans are its strict
  // descendants that are strict ancestors of one of its readers (every descendant when a is an
  // output), less its readers (for them a is an input, counted already).
  std::vector<std::int64_t> extra(n, 0);
  std::vector<std::uint64_t> spanned(words);
  for (std::size_t a = 0; a < n; ++a) {
    if (g.bytes(a) <= 0 || memory_model::dies_unread(g, a)) continue;
    const std::uint64_t* after = below(a);
    if (g.is_output(a)) {
      std::copy(after, after + words, spanned.begin());
    } else {
      std::fill(spanned.begin(), spanned.end(), 0);
      for (auto s : g.successors(a)) {
        const std::uint64_t* theirs = above(s);
        for (std::size_t w = 0; w < words; ++w) spanned[w] |= theirs[w];
      }
      for (std::size_t w = 0; w < words; ++w) spanned[w] &= after[w];
    }
    for (auto s : g.successors(a)) spanned[s / 64] &= ~(std::uint64_t{1} << (s % 64));
    for (std::size_t w = 0; w < words; ++w)
      for (std::uint64_t bits = spanned[w]; bits != 0; bits &= bits - 1)
        extra[w * 64 + static_cast<std::size_t>(std::countr_zero(bits))] += g.bytes(a);
  }
  for (std::size_t v = 0; v < n; ++v) bound = std::max(bound, memory_model::min_running_bytes(g, v) + extra[v]);
  return bound;
}

}  // namespace memsched::detail
