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
#include <numeric>
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

/// Lowest fit in a given order, with alignments and fixed offsets: fixed buffers first at their
/// offsets, then each other buffer at the lowest aligned offset clear of the placed buffers that
/// overlap it in time. `buffers` are listed by `first` (placed_by_lifetime). O(B k log k).
inline void place_lowest_fit(const std::vector<arena_buffer>& buffers, std::span<const std::int64_t> align,
                             std::span<const std::int64_t> fixed, std::span<const std::size_t> order,
                             std::vector<std::int64_t>& offsets) {
  offsets.assign(buffers.size(), 0);
  placed_by_lifetime placed(buffers);
  std::vector<std::size_t> overlapping;
  auto put = [&](std::size_t i) {
    const auto& b = buffers[i];
    if (fixed[b.node] >= 0) {
      offsets[i] = fixed[b.node];
    } else {
      overlapping.clear();
      placed.overlapping(b.first, b.last, overlapping);
      std::sort(overlapping.begin(), overlapping.end(), [&](std::size_t x, std::size_t y) { return offsets[x] < offsets[y]; });
      const std::int64_t a = align[b.node];
      std::int64_t at = 0;
      for (std::size_t j : overlapping) {
        if (offsets[j] >= at + b.size) break;
        at = std::max(at, (offsets[j] + buffers[j].size + a - 1) / a * a);
      }
      offsets[i] = at;
    }
    placed.place(i);
  };
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (fixed[buffers[i].node] >= 0) put(i);
  for (std::size_t i : order)
    if (fixed[buffers[i].node] < 0) put(i);
}

/// The bytes of the exact search's own tables for n buffers with `pairs` overlapping pairs: the
/// candidate orders of every depth (at worst n^2 entries); the parts a placement splits off, kept
/// per depth with their buffers, preorders and start orders (as many again); the overlap lists
/// and the sections' member lists.
inline std::uint64_t layout_search_table_bytes(std::uint64_t n, std::uint64_t pairs) {
  return (16 + 24) * n * (n + 2) + 8 * pairs + 4 * (pairs + n) + 64 * n;
}

/// Nodes of minimisation's decision at the bound before its rounds.
inline constexpr std::uint64_t layout_bound_first_nodes = 200000;

/// solve_layout's work: the greedy starts, the bound, then the exact search.
class layout_solver {
 public:
  layout_solver(std::span<const layout_buffer> buffers, std::optional<std::int64_t> capacity,
                std::chrono::steady_clock::time_point deadline, std::optional<std::uint64_t> node_limit, std::uint64_t max_bytes)
      : buffers_(buffers), capacity_(capacity), clock_(deadline),
        node_limit_(node_limit.value_or(std::numeric_limits<std::uint64_t>::max())), max_bytes_(max_bytes) {}

  layout_result run() {
    collect();
    layout_result r;
    r.stats.max_load = max_load();
    r.lower_bound = r.stats.max_load;
    for (std::size_t i = 0; i < in_.size_n(); ++i)
      if (in_.fixed[i] >= 0) r.lower_bound = std::max(r.lower_bound, in_.fixed[i] + in_.size[i]);
    if (fixed_clash()) {
      r.status = solve_status::infeasible;  // two fixed buffers overlap: no layout at all
      return r;
    }
    std::vector<std::int64_t> best = greedy();
    std::int64_t best_bytes = height(best);
    r.stats.greedy_bytes = best_bytes;
    const std::int64_t want = capacity_.value_or(std::numeric_limits<std::int64_t>::max());
    // The search's index (overlap lists, sections) is built only when a search follows.
    const bool decide = best_bytes > want && r.lower_bound <= want;
    const bool minimise_bytes = !capacity_ && best_bytes > r.lower_bound;
    r.stats.searched = (decide || minimise_bytes) && fits_memory();
    if (decide && r.stats.searched) {
      // Decision: only the capacity asked for.
      layout_search search(in_, clock_, node_limit_, memo_bytes_);
      const layout_outcome o = search.decide(want);
      r.stats.decisions = 1;
      r.stats.nodes = search.nodes();
      if (o == layout_outcome::found) {
        best = search.solution();
        best_bytes = height(best);
      } else if (o == layout_outcome::exhausted) {
        r.lower_bound = above(want);
      }
    } else if (minimise_bytes && r.stats.searched) {
      minimise(r, best, best_bytes);
    }
    if (capacity_ && (best_bytes > want || r.lower_bound > want)) {
      r.status = r.lower_bound > want ? solve_status::infeasible : solve_status::time_limit;
      return r;
    }
    r.offsets = expand(best);
    r.arena_bytes = best_bytes;
    r.lower_bound = std::min(r.lower_bound, best_bytes);
    r.status = best_bytes == r.lower_bound ? solve_status::optimal : solve_status::feasible;
    return r;
  }

 private:
  /// The buffers that take room, in the search's numbering.
  void collect() {
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      const auto& b = buffers_[i];
      if (b.size == 0 || b.first == b.last) continue;
      id_.push_back(i);
      in_.size.push_back(b.size);
      in_.align.push_back(b.alignment);
      in_.fixed.push_back(b.offset.value_or(-1));
      in_.first.push_back(b.first);
      in_.last.push_back(b.last);
      grain_ = std::gcd(grain_, std::gcd(b.size, b.offset.value_or(0)));
    }
    grain_ = std::max<std::int64_t>(grain_, 1);
    // An alignment keeps tops on multiples of the grain when it divides the grain (no rounding)
    // or the grain divides it; any other one lowers the grain to their gcd.
    for (bool lowered = true; lowered;) {
      lowered = false;
      for (const std::int64_t a : in_.align)
        if (grain_ % a != 0 && a % grain_ != 0) {
          grain_ = std::gcd(grain_, a);
          lowered = true;
        }
    }
  }

  /// The least arena that a capacity `c` proven too small leaves possible. Every least arena is
  /// a multiple of grain_ (a divisor of every size and fixed offset that takes room, compatible
  /// with every alignment): each buffer of a canonical layout sits at 0, at its fixed offset or
  /// at the top of another rounded up to its alignment, all multiples of it, and every layout
  /// pushes down into a canonical one no higher.
  std::int64_t above(std::int64_t c) const { return (c / grain_ + 1) * grain_; }

  /// Whether two fixed buffers live at the same time overlap. O(F log F) for F fixed buffers.
  bool fixed_clash() const {
    std::vector<layout_buffer> fixed;
    std::vector<std::int64_t> at;
    for (std::size_t i = 0; i < in_.size_n(); ++i)
      if (in_.fixed[i] >= 0) {
        fixed.push_back({.first = in_.first[i], .last = in_.last[i], .size = in_.size[i], .alignment = 1, .offset = std::nullopt});
        at.push_back(in_.fixed[i]);
      }
    return !check_layout(fixed, at).valid;
  }

  std::int64_t max_load() {
    // Loads at every start, ends first at equal times.
    std::vector<std::pair<std::int64_t, std::int64_t>> events;
    for (std::size_t i = 0; i < in_.size_n(); ++i) {
      events.emplace_back(in_.first[i], in_.size[i]);
      events.emplace_back(in_.last[i], -in_.size[i]);
    }
    std::sort(events.begin(), events.end());
    std::int64_t load = 0, most = 0;
    for (auto [t, d] : events) most = std::max(most, load += d);
    return most;
  }

  std::int64_t height(const std::vector<std::int64_t>& offsets) const {
    std::int64_t h = 0;
    for (std::size_t i = 0; i < offsets.size(); ++i) h = std::max(h, offsets[i] + in_.size[i]);
    return h;
  }

  /// The best of the greedy layouts, in the search's numbering.
  std::vector<std::int64_t> greedy() {
    const std::size_t n = in_.size_n();
    stepped_buffers stepped = arena_buffers_over_times(in_.first, in_.last, in_.size);
    const std::vector<arena_buffer>& steps = stepped.buffers;
    const bool plain = std::all_of(in_.align.begin(), in_.align.end(), [](std::int64_t a) { return a == 1; }) &&
                       std::all_of(in_.fixed.begin(), in_.fixed.end(), [](std::int64_t f) { return f < 0; });
    std::vector<std::vector<std::int64_t>> tries(plain ? 1 : 2);
    if (plain) {
      place_least_greedy(steps, stepped.steps, tries[0]);
    } else {
      std::vector<std::size_t> by_size(n), by_start(n);
      for (std::size_t i = 0; i < n; ++i) by_size[i] = by_start[i] = i;
      std::stable_sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) { return steps[a].size > steps[b].size; });
      place_lowest_fit(steps, in_.align, in_.fixed, by_size, tries[0]);
      place_lowest_fit(steps, in_.align, in_.fixed, by_start, tries[1]);
    }
    std::vector<std::int64_t> best;
    std::int64_t best_bytes = std::numeric_limits<std::int64_t>::max();
    for (const auto& t : tries) {
      std::vector<std::int64_t> offsets(n);
      for (std::size_t k = 0; k < n; ++k) offsets[steps[k].node] = t[k];
      if (const std::int64_t h = height(offsets); best.empty() || h < best_bytes) {  // an arena may be 2^63 - 1
        best_bytes = h;
        best = std::move(offsets);
      }
    }
    return best;
  }

  /// Whether the search's tables fit max_bytes; builds them when they do.
  bool fits_memory() {
    const std::uint64_t bytes = layout_search_table_bytes(in_.size_n(), layout_instance::count_overlaps(in_.first, in_.last));
    if (bytes > max_bytes_) return false;
    memo_bytes_ = (max_bytes_ - bytes) / 4;
    in_.build();
    return true;
  }

  /// Nodes a decision may take in the first round of minimise; each later round doubles it.
  static constexpr std::uint64_t first_round_nodes = 50000;

  /// The decision at the bound first (decide_bound_first), then rounds of binary search on the
  /// capacity, each giving every decision a node allowance twice the last round's. A capacity that neither a layout nor a proof settles within the allowance is
  /// left unresolved: the round looks above it (the anytime answer improves) and the next round
  /// comes back to it. Tight capacities are often far harder to decide than loose ones, in both
  /// directions, so no single decision may hold the whole call. Ends when a round resolves every
  /// capacity it probed (the bound is then proven) or a limit stops it.
  void minimise(layout_result& r, std::vector<std::int64_t>& best, std::int64_t& best_bytes) {
    layout_search search(in_, clock_, node_limit_, memo_bytes_);
    std::int64_t lo = r.lower_bound;  // proven: nothing below lo fits
    if (!decide_bound_first(search, lo, best, best_bytes, r.stats.decisions)) {
      r.stats.nodes = search.nodes();
      r.lower_bound = lo;
      return;
    }
    // Capped so that doubling never wraps around.
    constexpr std::uint64_t most_nodes = std::numeric_limits<std::uint64_t>::max() / 2;
    for (std::uint64_t allowance = first_round_nodes; lo < best_bytes; allowance = std::min(2 * allowance, most_nodes)) {
      const round_end end = minimise_round(search, allowance, lo, best, best_bytes, r.stats.decisions);
      if (end != round_end::unresolved) break;
    }
    r.stats.nodes = search.nodes();
    r.lower_bound = lo;
  }

  /// The decision at the bound lo first, with layout_bound_first_nodes: a layout there is the least and
  /// ends the call with its proof, and the rounds would spread their nodes over many capacities
  /// before giving the tight one, often the hardest, enough. False when a limit stopped it.
  bool decide_bound_first(layout_search& search, std::int64_t& lo, std::vector<std::int64_t>& best, std::int64_t& best_bytes,
                          std::size_t& decisions) {
    if (lo >= best_bytes) return true;
    const layout_outcome o = search.decide(lo, layout_bound_first_nodes);
    ++decisions;
    if (o == layout_outcome::found) {
      best = search.solution();
      best_bytes = height(best);
    } else if (o == layout_outcome::exhausted) {
      lo = above(lo);
    }
    return o != layout_outcome::stopped;
  }

  enum class round_end { settled, unresolved, stopped };

  /// One round of minimise: the bound first, then halving between the lowest capacity not yet
  /// tried this round and the best arena found.
  round_end minimise_round(layout_search& search, std::uint64_t allowance, std::int64_t& lo, std::vector<std::int64_t>& best,
                           std::int64_t& best_bytes, std::size_t& decisions) {
    std::int64_t probe_lo = lo;  // below it, this round has nothing left to try
    bool unresolved = false, first = true;
    while (probe_lo < best_bytes) {
      // Only multiples of grain_ are probed (lo and probe_lo are such): another capacity decides
      // as the multiple below it.
      const std::int64_t c = first ? lo : probe_lo + (best_bytes - 1 - probe_lo) / 2 / grain_ * grain_;
      first = false;
      const layout_outcome o = search.decide(c, allowance);
      ++decisions;
      if (o == layout_outcome::call_budget) {
        unresolved = true;
        probe_lo = above(c);
      } else if (o == layout_outcome::found) {
        best = search.solution();
        best_bytes = height(best);
      } else if (o == layout_outcome::exhausted) {
        lo = std::max(lo, above(c));
        probe_lo = std::max(probe_lo, above(c));
      } else {
        return round_end::stopped;
      }
    }
    return unresolved ? round_end::unresolved : round_end::settled;
  }

  /// Offsets for every buffer: the search's for those that take room, fixed or 0 for the rest.
  std::vector<std::int64_t> expand(const std::vector<std::int64_t>& offsets) const {
    std::vector<std::int64_t> out(buffers_.size(), 0);
    for (std::size_t i = 0; i < buffers_.size(); ++i) out[i] = buffers_[i].offset.value_or(0);
    for (std::size_t k = 0; k < id_.size(); ++k) out[id_[k]] = offsets[k];
    return out;
  }

  std::span<const layout_buffer> buffers_;
  std::optional<std::int64_t> capacity_;
  deadline_clock clock_;
  std::uint64_t node_limit_;
  std::uint64_t max_bytes_;
  std::uint64_t memo_bytes_ = 0;  // for the states the search proved empty
  std::int64_t grain_ = 0;        // every arena is a multiple of it (collect)
  layout_instance in_;
  std::vector<std::size_t> id_;
};

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
  return detail::layout_solver(buffers, options.capacity, deadline, options.node_limit, options.max_bytes).run();
}

}  // namespace memsched
