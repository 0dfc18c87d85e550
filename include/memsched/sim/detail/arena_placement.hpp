#pragma once
// The fast arena strategies (greedy by size, first fit) on buffers with inclusive step lifetimes.
// Internal: used by plan_arena (sim/arena.hpp), as the starts of solve_layout (sim/layout.hpp) and
// as the guide of arena_order (order/arena_order.hpp).

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
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

/// The pairs of buffers whose lifetimes intersect: greedy by size compares each buffer with every
/// placed one that lives at the same time as it, so its work grows with this count (quadratic when
/// all of them live at once). Buffers are listed by `first`. O(B log T), T = steps.
inline std::uint64_t overlapping_pairs(const std::vector<arena_buffer>& buffers) {
  if (buffers.empty()) return 0;
  std::size_t steps = 0;
  for (const auto& b : buffers) steps = std::max(steps, b.last + 1);
  std::vector<std::uint64_t> ended(steps + 1, 0);  // Fenwick tree: earlier buffers by last step
  std::uint64_t pairs = 0;
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    std::uint64_t ended_before = 0;  // earlier buffers whose last step is below this first step
    for (std::size_t k = buffers[i].first; k > 0; k -= k & (~k + 1)) ended_before += ended[k];
    pairs += i - ended_before;
    for (std::size_t k = buffers[i].last + 1; k <= steps; k += k & (~k + 1)) ++ended[k];
  }
  return pairs;
}

/// Whether greedy by size stays fast on `buffers`: at most 2^24 pairs of them live at once (each
/// pair costs it a comparison and a share of a sort); beyond, first fit (O(B log L)) is used
/// where the caller lets the library choose.
inline bool greedy_by_size_affordable(const std::vector<arena_buffer>& buffers) {
  return overlapping_pairs(buffers) <= (std::uint64_t{1} << 24);
}

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

/// The live buffers of first fit, by offset, each with the gap below it (from the end of the live
/// buffer below it, or from 0): a treap whose nodes hold the largest gap of their subtree, so that
/// the lowest gap of at least s bytes is found in O(log L) expected instead of by a scan over the
/// L live buffers (a wide graph keeps tens of thousands live at once). Live buffers are disjoint.
class first_fit_gaps {
 public:
  /// The lowest offset where `size` bytes fit: the start of the lowest gap that holds them, or the
  /// end of the highest live buffer.
  [[nodiscard]] std::int64_t lowest_fit(std::int64_t size) const {
    for (int t = root_; t != nil;) {
      const node& n = nodes_[t];
      if (n.left != nil && nodes_[n.left].max_gap >= size) {
        t = n.left;
      } else if (n.gap >= size) {
        return n.start - n.gap;
      } else {
        t = n.right;
      }
    }
    return top_end(root_);
  }

  /// Adds a live buffer [start, end) disjoint from the others.
  void insert(std::int64_t start, std::int64_t end) {
    auto [below, above] = split(root_, start);
    const int added = make(start, end, start - top_end(below));
    above = with_gap_of_lowest(above, end);
    root_ = merge(merge(below, added), above);
  }

  /// Removes the live buffer that starts at `start`.
  void erase(std::int64_t start) {
    auto [below, rest] = split(root_, start);
    auto [removed, above] = split(rest, start + 1);
    free_.push_back(removed);
    above = with_gap_of_lowest(above, top_end(below));
    root_ = merge(below, above);
  }

 private:
  static constexpr int nil = -1;
  struct node {
    std::int64_t start = 0, end = 0, gap = 0, max_gap = 0;
    std::uint64_t priority = 0;
    int left = nil, right = nil;
  };

  int make(std::int64_t start, std::int64_t end, std::int64_t gap) {
    seed_ = seed_ * 6364136223846793005ULL + 1442695040888963407ULL;  // deterministic priorities
    const node n{start, end, gap, gap, seed_ ^ (seed_ >> 29), nil, nil};
    if (!free_.empty()) {
      const int t = free_.back();
      free_.pop_back();
      nodes_[t] = n;
      return t;
    }
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size()) - 1;
  }

  void pull(int t) {
    node& n = nodes_[t];
    n.max_gap = n.gap;
    if (n.left != nil) n.max_gap = std::max(n.max_gap, nodes_[n.left].max_gap);
    if (n.right != nil) n.max_gap = std::max(n.max_gap, nodes_[n.right].max_gap);
  }

  /// (buffers starting below `key`, the others).
  std::pair<int, int> split(int t, std::int64_t key) {
    if (t == nil) return {nil, nil};
    if (nodes_[t].start < key) {
      auto [a, b] = split(nodes_[t].right, key);
      nodes_[t].right = a;
      pull(t);
      return {t, b};
    }
    auto [a, b] = split(nodes_[t].left, key);
    nodes_[t].left = b;
    pull(t);
    return {a, t};
  }

  int merge(int a, int b) {
    if (a == nil) return b;
    if (b == nil) return a;
    if (nodes_[a].priority > nodes_[b].priority) {
      nodes_[a].right = merge(nodes_[a].right, b);
      pull(a);
      return a;
    }
    nodes_[b].left = merge(a, nodes_[b].left);
    pull(b);
    return b;
  }

  /// The end of the highest buffer of subtree t (0 when empty): the rightmost one, as they are disjoint.
  std::int64_t top_end(int t) const {
    std::int64_t end = 0;
    for (; t != nil; t = nodes_[t].right) end = nodes_[t].end;
    return end;
  }

  /// Subtree t with the gap of its lowest buffer measured from `below_end`.
  int with_gap_of_lowest(int t, std::int64_t below_end) {
    if (t == nil) return t;
    std::int64_t lowest_start = nodes_[t].start;
    for (int u = t; u != nil; u = nodes_[u].left) lowest_start = nodes_[u].start;
    auto [lowest, rest] = split(t, lowest_start + 1);
    nodes_[lowest].gap = nodes_[lowest].max_gap = lowest_start - below_end;
    return merge(lowest, rest);
  }

  std::vector<node> nodes_;
  std::vector<int> free_;
  int root_ = nil;
  std::uint64_t seed_ = 0x9e3779b97f4a7c15ULL;
};

/// First fit in order of allocation: step by step, release the buffers whose life ended at the
/// previous step, then place the step's output and then its workspace at the lowest offset where
/// they fit. O(B log L) expected for B buffers and at most L live at once.
inline void place_first_fit(const std::vector<arena_buffer>& buffers, std::size_t steps, std::vector<std::int64_t>& offsets) {
  offsets.assign(buffers.size(), 0);
  std::vector<std::vector<std::size_t>> ending(steps + 1);
  first_fit_gaps live;
  std::size_t next = 0;
  for (std::size_t k = 0; k < steps; ++k) {
    if (k > 0)
      for (std::size_t i : ending[k - 1]) live.erase(offsets[i]);
    for (; next < buffers.size() && buffers[next].first == k; ++next) {
      const auto& b = buffers[next];
      offsets[next] = live.lowest_fit(b.size);
      live.insert(offsets[next], offsets[next] + b.size);
      ending[b.last].push_back(next);
    }
  }
}

/// Buffers with half-open lifetimes [first[i], last[i]) over arbitrary times (first < last) as
/// arena buffers over steps, the distinct times: [first, last) becomes the inclusive steps
/// [rank(first), rank(last) - 1]. Listed by `first` (stable: buffer i is `node` i); `steps` is the
/// number of distinct times. O(B log B).
struct stepped_buffers {
  std::vector<arena_buffer> buffers;
  std::size_t steps = 0;
};
inline stepped_buffers arena_buffers_over_times(const std::vector<std::int64_t>& first, const std::vector<std::int64_t>& last,
                                                const std::vector<std::int64_t>& size) {
  std::vector<std::int64_t> times(first);
  times.insert(times.end(), last.begin(), last.end());
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  auto rank = [&](std::int64_t t) { return static_cast<std::size_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin()); };
  stepped_buffers r{std::vector<arena_buffer>(first.size()), times.size()};
  for (std::size_t i = 0; i < first.size(); ++i) r.buffers[i] = {i, false, size[i], rank(first[i]), rank(last[i]) - 1};
  std::stable_sort(r.buffers.begin(), r.buffers.end(), [](const arena_buffer& a, const arena_buffer& b) { return a.first < b.first; });
  return r;
}

/// The arena of a layout of `buffers`: the highest offset + size (0 without buffers). O(B).
inline std::int64_t arena_height(const std::vector<arena_buffer>& buffers, const std::vector<std::int64_t>& offsets) {
  std::int64_t h = 0;
  for (std::size_t i = 0; i < buffers.size(); ++i) h = std::max(h, offsets[i] + buffers[i].size);
  return h;
}

/// The lower of the two greedy layouts into `offsets`, and its arena: greedy by size where it is
/// affordable, unless first fit (over `steps` steps) is strictly lower. solve_layout starts from
/// it and arena_order's walk is guided by its arena.
inline std::int64_t place_least_greedy(const std::vector<arena_buffer>& buffers, std::size_t steps, std::vector<std::int64_t>& offsets) {
  std::vector<std::int64_t> first_fit;
  place_first_fit(buffers, steps, first_fit);
  const std::int64_t fit = arena_height(buffers, first_fit);
  if (greedy_by_size_affordable(buffers)) {
    place_greedy_by_size(buffers, offsets);
    if (const std::int64_t by_size = arena_height(buffers, offsets); by_size <= fit) return by_size;
  }
  offsets = std::move(first_fit);
  return fit;
}

}  // namespace memsched::detail
