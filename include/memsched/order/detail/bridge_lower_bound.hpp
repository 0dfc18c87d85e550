#pragma once
// A lower bound on the peak of every order that also counts the values certainly resident while a
// vertex runs: every order runs a strict ancestor a of v before v, and a reader s of a that is a
// strict descendant of v after v, so a's value is resident while v runs (its last reader comes
// after v, so no in-place successor has taken its buffer). Graph outputs are never freed: an
// output ancestor is resident too. Where the graph has long skip edges (random layered graphs,
// U-Nets, DenseNets) this is much stronger than a vertex with its inputs alone.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/signature_tables.hpp>
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
/// O(m x n / 64 + S) time, where S <= n^2 / 2 is the number of (value, vertex) pairs such that the
/// vertex lies between the value and its last reader in topological order and is spanned by the
/// value or not, whichever is fewer; n^2 / 4 bytes.
inline std::int64_t bridge_peak_lower_bound(const memory_graph& g) {
  const std::size_t n = g.size();
  std::int64_t bound = peak_lower_bound(g);
  if (n > bridge_bound_max_vertices) return bound;
  // Everything below is indexed by position in the topological order, so that what a value spans
  // lies between its position and its last reader's: a range of words, and, on training graphs,
  // most of that range (a forward value spans the rest of the forward pass and the backward pass up
  // to its gradient), where counting the range and subtracting the gaps is the cheaper way.
  const auto& topo = g.topological_order();
  std::vector<std::size_t> position(n);
  for (std::size_t p = 0; p < n; ++p) position[topo[p]] = p;
  const std::size_t words = signature_words(n);
  // ancestors[p] / descendants[p]: the positions of the strict ancestors / descendants of the
  // vertex at position p, bitsets of `words` words (ancestors only below p, descendants only above).
  std::vector<std::uint64_t> ancestors(n * words, 0), descendants(n * words, 0);
  const auto above = [&](std::size_t p) { return ancestors.data() + p * words; };
  const auto below = [&](std::size_t p) { return descendants.data() + p * words; };
  for (std::size_t p = 0; p < n; ++p) {
    std::uint64_t* mine = above(p);
    for (auto u : g.predecessors(topo[p])) {
      const std::size_t q = position[u];
      const std::uint64_t* theirs = above(q);
      for (std::size_t w = 0; w <= q / 64; ++w) mine[w] |= theirs[w];
      set_bit(mine, q);
    }
  }
  for (std::size_t p = n; p-- > 0;) {
    std::uint64_t* mine = below(p);
    for (auto s : g.successors(topo[p])) {
      const std::size_t q = position[s];
      const std::uint64_t* theirs = below(q);
      for (std::size_t w = q / 64; w < words; ++w) mine[w] |= theirs[w];
      set_bit(mine, q);
    }
  }
  // extra[p]: the bytes of such ancestors of the vertex at position p; step[p]: what a range
  // starting (ending) at p adds to (takes from) every position from p on. The positions a value
  // at position pa spans are its strict descendants that are strict ancestors of one of its
  // readers (every descendant when it is an output), less its readers (for them it is an input,
  // counted already): all within [pa + 1, end), end = its last reader's position (n for outputs).
  std::vector<std::int64_t> extra(n, 0), step(n + 1, 0);
  std::vector<std::uint64_t> spanned(words);
  for (std::size_t pa = 0; pa + 1 < n; ++pa) {
    const std::size_t a = topo[pa];
    if (g.bytes(a) <= 0 || memory_model::dies_unread(g, a)) continue;
    const std::size_t lo = pa + 1;
    std::size_t end = n;
    if (!g.is_output(a)) {
      end = 0;
      for (auto s : g.successors(a)) end = std::max(end, position[s]);
    }
    const std::size_t first = lo / 64, last = (end - 1) / 64;  // the words of [lo, end)
    const std::uint64_t* after = below(pa);
    if (g.is_output(a)) {
      std::copy(after + first, after + last + 1, spanned.begin() + first);
    } else {
      std::fill(spanned.begin() + first, spanned.begin() + last + 1, 0);
      for (auto s : g.successors(a)) {
        const std::uint64_t* theirs = above(position[s]);
        for (std::size_t w = first; w <= position[s] / 64; ++w) spanned[w] |= theirs[w];
      }
      for (std::size_t w = first; w <= last; ++w) spanned[w] &= after[w];
    }
    for (auto s : g.successors(a)) clear_bit(spanned.data(), position[s]);
    std::size_t count = 0;
    for (std::size_t w = first; w <= last; ++w) count += static_cast<std::size_t>(std::popcount(spanned[w]));
    const bool dense = 2 * count > end - lo;
    std::int64_t b = g.bytes(a);
    if (dense) {  // add b over [lo, end), then take it back where the range has a gap
      step[lo] += b;
      step[end] -= b;
      b = -b;
    }
    for (std::size_t w = first; w <= last; ++w) {
      std::uint64_t bits = spanned[w];
      if (dense) {
        bits = ~bits;
        if (w == first) bits &= ~std::uint64_t{0} << (lo % 64);
        if (w == last && end % 64 != 0) bits &= (std::uint64_t{1} << (end % 64)) - 1;
      }
      for (; bits != 0; bits &= bits - 1) extra[w * 64 + static_cast<std::size_t>(std::countr_zero(bits))] += b;
    }
  }
  std::int64_t running = 0;
  for (std::size_t p = 0; p < n; ++p) {
    running += step[p];
    bound = std::max(bound, memory_model::min_running_bytes(g, topo[p]) + extra[p] + running);
  }
  return bound;
}

}  // namespace memsched::detail
