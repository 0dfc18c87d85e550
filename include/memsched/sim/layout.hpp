#pragma once
// Exact static memory layout of buffers with known lifetimes (the "dynamic storage allocation"
// problem): an offset for every buffer so that buffers live at the same time never overlap, in an
// arena of a given capacity (decision) or of the least size (minimisation).
//
// The search is a branch and bound over canonical layouts in the manner of MiniMalloc (Moffitt,
// "MiniMalloc: A Lightweight Memory Allocator for Hardware-Accelerated Machine Learning",
// ASPLOS 2023): buffers are placed in non-decreasing order of offset, each at the lowest offset
// above the buffers placed beneath it (every layout can be pushed down into such a one), with
// inference on the time sections (the bytes still to place in a section must fit above its
// floor), dominance (no buffer is placed above a gap that another unplaced buffer would fill),
// decomposition into independent time sections once the placed buffers separate them, and a table
// of the states already searched through without a layout.
// See docs/layout.md.

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/order/detail/deadline_clock.hpp>
#include <memsched/sim/detail/arena_placement.hpp>
#include <memsched/sim/detail/layout_search.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace memsched {

/// One buffer to place. Its lifetime is half-open: live at the times t with first <= t < last
/// (a buffer with first == last is never live and may go anywhere).
struct layout_buffer {
  std::int64_t first = 0;                ///< First time the buffer is live.
  std::int64_t last = 0;                 ///< First time after `first` at which it is no longer live.
  std::int64_t size = 0;                 ///< Bytes (>= 0; 0 takes no room).
  std::int64_t alignment = 1;            ///< Its offset must be a multiple of this (>= 1).
  std::optional<std::int64_t> offset;    ///< A fixed offset (a multiple of alignment), or free.
};

/// Options of solve_layout.
struct layout_options {
  /// Arena capacity in bytes: find any layout within it (decision). None: the smallest arena.
  std::optional<std::int64_t> capacity;
  /// Wall-clock limit of the whole call; the best layout found is returned, not proven.
  std::optional<std::chrono::duration<double>> time_limit;
  /// Search nodes (placements tried) over the whole call: a counted limit, so that the result
  /// does not depend on the machine. None: no limit.
  std::optional<std::uint64_t> node_limit;
  /// Cap on the memory the exact search may hold; above it only the greedy layouts are tried.
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
};

/// Counters of a solve_layout call.
struct layout_stats {
  std::uint64_t nodes = 0;            ///< Placements tried by the exact search.
  std::size_t decisions = 0;          ///< Capacities the exact search was run at.
  std::int64_t max_load = 0;          ///< Most bytes live at one time (a lower bound on the arena).
  std::int64_t greedy_bytes = 0;      ///< Arena of the best greedy layout (the search's start).
  bool searched = false;              ///< The exact search ran (not needed, or the memory cap left only the greedy layouts: false).
};

/// The result of solve_layout.
struct [[nodiscard]] layout_result {
  std::vector<std::int64_t> offsets;  ///< Per buffer (empty when no layout was found).
  std::int64_t arena_bytes = 0;       ///< max over buffers of offset + size (0 when none found).
  std::int64_t lower_bound = 0;       ///< Proven: no layout has a smaller arena.
  /// optimal: arena_bytes is the least arena (minimisation), or a layout within the capacity was
  /// found whose arena equals the bound (decision); feasible: a layout (within the capacity, when
  /// one was given) that a limit or the method stopped short of proving least; infeasible: proven
  /// that no layout fits the capacity; time_limit: a limit stopped the search before any layout
  /// within the capacity was found.
  solve_status status = solve_status::time_limit;
  layout_stats stats;
};

/// The verdict of check_layout.
struct layout_check {
  bool valid = true;
  std::string error;  ///< Empty when valid; otherwise names the buffer(s) at fault.
};

namespace detail {

inline void check_layout_buffers(std::span<const layout_buffer> buffers, const char* function) {
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const auto& b = buffers[i];
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(std::string(function) + ": buffer " + std::to_string(i) + " " + what);
    };
    if (b.first > b.last) fail("ends (" + std::to_string(b.last) + ") before it starts (" + std::to_string(b.first) + ")");
    if (b.size < 0) fail("has a negative size");
    if (b.alignment < 1) fail("has alignment " + std::to_string(b.alignment) + " (must be >= 1)");
    if (b.offset && *b.offset < 0) fail("has a negative fixed offset");
    if (b.offset && *b.offset % b.alignment != 0) fail("has a fixed offset that is not a multiple of its alignment");
    if (b.offset && *b.offset > std::numeric_limits<std::int64_t>::max() - b.size) fail("ends past 2^63 bytes");
  }
  // Every arena the solver builds (buffers stacked, each rounded up to its alignment, above the
  // highest fixed buffer) is at most this total, so no sum of offsets and sizes overflows.
  constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
  std::int64_t total = 0, highest_fixed = 0;
  auto add = [&](std::int64_t bytes) {
    if (bytes > most - total) throw std::invalid_argument(std::string(function) + ": the buffers total more than 2^63 - 1 bytes");
    total += bytes;
  };
  for (const auto& b : buffers) {
    add(b.size);
    add(b.alignment - 1);
    if (b.offset) highest_fixed = std::max(highest_fixed, *b.offset + b.size);
  }
  add(highest_fixed);
}

}  // namespace detail

/// Checks a layout: one offset per buffer, each >= 0, a multiple of its alignment, equal to the
/// fixed offset where one is given, within `capacity` (when given), and no two buffers of
/// positive size live at the same time overlapping. O(B log B). Never throws for a bad layout;
/// throws std::invalid_argument for bad buffers (as solve_layout).
[[nodiscard]] inline layout_check check_layout(std::span<const layout_buffer> buffers, std::span<const std::int64_t> offsets,
                                               std::optional<std::int64_t> capacity = std::nullopt) {
  detail::check_layout_buffers(buffers, "check_layout");
  if (offsets.size() != buffers.size())
    return {false, std::to_string(offsets.size()) + " offsets for " + std::to_string(buffers.size()) + " buffers"};
  auto name = [&](std::size_t i) { return "buffer " + std::to_string(i) + " at offset " + std::to_string(offsets[i]); };
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const auto& b = buffers[i];
    if (offsets[i] < 0) return {false, name(i) + " is below 0"};
    if (offsets[i] % b.alignment != 0) return {false, name(i) + " is not a multiple of its alignment " + std::to_string(b.alignment)};
    if (b.offset && offsets[i] != *b.offset) return {false, name(i) + " is not at its fixed offset " + std::to_string(*b.offset)};
    if (capacity && b.size > 0 && b.first < b.last && offsets[i] > *capacity - b.size)
      return {false, name(i) + " (" + std::to_string(b.size) + " bytes) ends past the capacity " + std::to_string(*capacity)};
  }
  // Sweep over time: ends before starts at equal times (half-open lifetimes); live buffers by offset.
  std::vector<std::pair<std::int64_t, std::size_t>> events;  // (time, 2 * buffer + starts)
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].size > 0 && buffers[i].first < buffers[i].last) {
      events.emplace_back(buffers[i].first, 2 * i + 1);
      events.emplace_back(buffers[i].last, 2 * i);
    }
  std::sort(events.begin(), events.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : (x.second & 1) < (y.second & 1);
  });
  std::multimap<std::int64_t, std::size_t> live;  // offset -> buffer
  for (auto [t, e] : events) {
    const std::size_t i = e / 2;
    const std::int64_t at = offsets[i];
    if ((e & 1) == 0) {
      for (auto it = live.find(at); it != live.end() && it->first == at; ++it)
        if (it->second == i) {
          live.erase(it);
          break;
        }
      continue;
    }
    auto clash = [&](std::size_t j) {
      return layout_check{false, name(i) + " overlaps " + name(j) + " at time " + std::to_string(t)};
    };
    auto above = live.lower_bound(at);
    if (above != live.end() && above->first < at + buffers[i].size) return clash(above->second);
    if (above != live.begin()) {
      auto below = std::prev(above);
      if (below->first + buffers[below->second].size > at) return clash(below->second);
    }
    live.emplace(at, i);
  }
  return {};
}

namespace detail {

/// The bytes of the exact search's own tables for n buffers with `pairs` overlapping pairs: the
/// candidate orders of every depth (at worst n^2 entries); the parts a placement splits off, kept
/// per depth with their buffers, preorders and start orders (as many again); the overlap lists
/// and the sections' member lists.
inline std::uint64_t layout_search_table_bytes(std::uint64_t n, std::uint64_t pairs) {
  return (16 + 24) * n * (n + 2) + 8 * pairs + 4 * (pairs + n) + 64 * n;
}

/// Nodes of minimisation's decision at the bound before its rounds.
inline constexpr std::uint64_t layout_bound_first_nodes = 200000;

/// solve_layout after its checks: the greedy starts, the bound, then the exact search (layout_solver,
/// sim/impl/layout.ipp), until `deadline`.
MEMSCHED_DECL layout_result solve_layout_until(std::span<const layout_buffer> buffers, const layout_options& options,
                                               std::chrono::steady_clock::time_point deadline);

}  // namespace detail

/// Offsets for `buffers` in one arena: within options.capacity when given (decision), else of the
/// least arena (minimisation). Greedy layouts first (greedy by size, first fit), then the exact
/// search, anytime: with limits it returns the best layout found and a proven lower bound (the
/// most bytes live at once, raised by every capacity the search proves too small, to the next
/// multiple of the grain of the sizes: docs/layout.md).
/// Deterministic without a time limit.
/// Complexity: exponential in the worst case (the problem is NP-hard); the greedy starts are
/// O(B log B + B L log B) for B buffers, at most L live at once; the search's memory is
/// O(B^2 + sum of pairwise overlaps), checked against options.max_bytes.
/// Throws: std::invalid_argument naming the buffer for a bad buffer (first > last, negative size,
/// alignment < 1, bad fixed offset); option_error for a negative capacity or time limit.
[[nodiscard]] inline layout_result solve_layout(std::span<const layout_buffer> buffers, const layout_options& options = {}) {
  const auto start = std::chrono::steady_clock::now();
  detail::check_layout_buffers(buffers, "solve_layout");
  if (options.capacity && *options.capacity < 0) throw option_error("solve_layout", "capacity", "must be >= 0");
  if (options.time_limit && !(options.time_limit->count() >= 0)) throw option_error("solve_layout", "time_limit", "must be >= 0");
  const auto deadline = options.time_limit ? detail::deadline_after(start, *options.time_limit)
                                           : std::chrono::steady_clock::time_point::max();
  return detail::solve_layout_until(buffers, options, deadline);
}

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/sim/impl/layout.ipp>
#endif
