#pragma once
// The fast arena strategies (greedy by size, first fit) on buffers with inclusive step lifetimes.
// Internal: used by plan_arena (sim/arena.hpp) and as the starts of solve_layout (sim/layout.hpp).

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace memsched::detail {

/// One buffer to place: a vertex's output tensor or its workspace. An output buffer taken over in
/// place holds the outputs of `node` and then of every vertex that reused it, the last `holder`.
struct arena_buffer {
  std::size_t node = 0;
  bool workspace = false;
  std::int64_t size = 0;
  std::size_t first = 0, last = 0;  // inclusive steps; buffers are listed by `first`
  std::size_t holder = static_cast<std::size_t>(-1);  // the last vertex whose output took it over in place, or none
};

/// The placed buffers, queried by lifetime: a segment tree over allocation steps (buffers are
/// listed by `first`, so the buffers of one step are a contiguous range) holding the largest `last`
/// among the placed buffers below each node. A query returns the placed buffers that overlap
/// [first, last] in O((k + 1) log T) for k answers, instead of a scan over every placed buffer.
class placed_by_lifetime {
 public:
  explicit placed_by_lifetime(const std::vector<arena_buffer>& buffers) : buffers_(buffers) {
    const std::size_t steps = buffers.empty() ? 0 : buffers.back().first + 1;
    while (leaves_ < steps) leaves_ *= 2;
    max_last_.assign(2 * leaves_, none);
    begin_.assign(steps + 1, 0);
    for (const auto& b : buffers) ++begin_[b.first + 1];
    for (std::size_t k = 0; k < steps; ++k) begin_[k + 1] += begin_[k];
    placed_.assign(buffers.size(), 0);
  }

  void place(std::size_t i) {
    placed_[i] = 1;
    const auto last = static_cast<std::int64_t>(buffers_[i].last);
    for (std::size_t node = leaves_ + buffers_[i].first; node >= 1 && max_last_[node] < last; node /= 2) max_last_[node] = last;
  }

  /// Appends to `out` every placed buffer j with first_j <= last and last_j >= first.
  void overlapping(std::size_t first, std::size_t last, std::vector<std::size_t>& out) {
    const auto lo = static_cast<std::int64_t>(first);
    stack_.assign(1, 1);
    while (!stack_.empty()) {
      const std::size_t node = stack_.back();
      stack_.pop_back();
      if (max_last_[node] < lo) continue;
      // The steps below `node`: [begin, begin + width).
      const std::size_t level = std::size_t{1} << (std::bit_width(node) - 1);
      const std::size_t width = leaves_ / level, begin = (node - level) * width;
      if (begin > last) continue;
      if (width == 1) {
        for (std::size_t j = begin_[begin]; j < begin_[begin + 1]; ++j)
          if (placed_[j] && static_cast<std::int64_t>(buffers_[j].last) >= lo) out.push_back(j);
        continue;
      }
      stack_.push_back(2 * node + 1);
      stack_.push_back(2 * node);
    }
  }

 private:
  static constexpr std::int64_t none = -1;
  const std::vector<arena_buffer>& buffers_;
  std::size_t leaves_ = 1;
  std::vector<std::int64_t> max_last_;  // per tree node; `none` when nothing placed below
  std::vector<std::size_t> begin_;      // per step: index of its first buffer
  std::vector<char> placed_;
  std::vector<std::size_t> stack_;
};

/// Greedy by size: largest first (ties: earlier allocation, output before workspace, smaller
/// index); each goes into the smallest gap, among the already placed buffers whose lifetime
/// overlaps its own, that fits it, or above them all (lowest offset among equal gaps).
/// O(B log B + sum over buffers of k log(k T)), k = placed buffers overlapping it in time: near
/// linear when few tensors live at once (a chain), O(B^2 log B) when all of them do.
inline void place_greedy_by_size(const std::vector<arena_buffer>& buffers, std::vector<std::int64_t>& offsets) {
  std::vector<std::size_t> by_size(buffers.size());
  for (std::size_t i = 0; i < by_size.size(); ++i) by_size[i] = i;
  std::sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = buffers[a];
    const auto& y = buffers[b];
    if (x.size != y.size) return x.size > y.size;
    if (x.first != y.first) return x.first < y.first;
    if (x.workspace != y.workspace) return !x.workspace;
    return x.node < y.node;
  });
  offsets.assign(buffers.size(), 0);
  placed_by_lifetime placed(buffers);
  std::vector<std::size_t> overlapping;
  for (std::size_t i : by_size) {
    const auto& b = buffers[i];
    overlapping.clear();
    placed.overlapping(b.first, b.last, overlapping);
    // Sizes are positive, so buffers at equal offsets give the same gaps in any order.
    std::sort(overlapping.begin(), overlapping.end(), [&](std::size_t x, std::size_t y) { return offsets[x] < offsets[y]; });
    std::int64_t current = 0, best = -1, best_gap = std::numeric_limits<std::int64_t>::max();
    for (std::size_t j : overlapping) {
      if (offsets[j] >= current) {
        const std::int64_t gap = offsets[j] - current;
        if (gap >= b.size && gap < best_gap) {
          best = current;
          best_gap = gap;
        }
      }
      current = std::max(current, offsets[j] + buffers[j].size);
    }
    offsets[i] = best >= 0 ? best : current;
    placed.place(i);
  }
}

/// First fit in order of allocation: step by step, release the buffers whose life ended at the
/// previous step, then place the step's output and then its workspace at the lowest offset where
/// they fit. O(B * L) for B buffers and at most L live at once.
inline void place_first_fit(const std::vector<arena_buffer>& buffers, std::size_t steps, std::vector<std::int64_t>& offsets) {
  offsets.assign(buffers.size(), 0);
  std::vector<std::vector<std::size_t>> ending(steps + 1);
  std::map<std::int64_t, std::int64_t> live;  // offset -> end of the live buffers
  std::size_t next = 0;
  for (std::size_t k = 0; k < steps; ++k) {
    if (k > 0)
      for (std::size_t i : ending[k - 1]) live.erase(offsets[i]);
    for (; next < buffers.size() && buffers[next].first == k; ++next) {
      const auto& b = buffers[next];
      std::int64_t at = 0;
      for (auto [start, end] : live) {
        if (start - at >= b.size) break;
        at = std::max(at, end);
      }
      offsets[next] = at;
      live.emplace(at, at + b.size);
      ending[b.last].push_back(next);
    }
  }
}

}  // namespace memsched::detail
