#pragma once
// The definitions of sim/layout.hpp's functions declared MEMSCHED_DECL there, and solve_layout's
// solver. Header-only mode: that header includes this file at its end and they are compiled in the
// TUs that call them (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp
// includes it.

#include <memsched/sim/layout.hpp>
#include <memsched/sim/detail/arena_placement.hpp>

#include <algorithm>
#include <numeric>

namespace memsched::detail {

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

MEMSCHED_DEF layout_result solve_layout_until(std::span<const layout_buffer> buffers, const layout_options& options,
                                              std::chrono::steady_clock::time_point deadline) {
  return layout_solver(buffers, options.capacity, deadline, options.node_limit, options.max_bytes).run();
}

}  // namespace memsched::detail
