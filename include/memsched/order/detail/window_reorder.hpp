#pragma once
// Local search over orders for serenity_order's upper bound: windows of consecutive vertices
// around the peak step re-ordered by a small dynamic program, and single vertices moved next to
// their producers or consumers. Internal; see docs/serenity.md ("Local search over orders").
//
// Why: on large dense graphs (1,000-vertex random layered graphs) the exact searches cannot finish
// and the incumbent stays at the beam seed, a few percent below Kahn. The peak of an order is one
// step; re-ordering the few dozen vertices around it (the rest of the order fixed) can only change
// the steps inside the window, since the resident bytes after the window depend on the set of
// vertices run, not on their order. So a window whose best order keeps every step below the peak
// removes one peak step, and repeating that lowers the peak.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/deadline_clock.hpp>
#include <memsched/order/detail/serenity_memory_pool.hpp>
#include <memsched/order/detail/signature_tables.hpp>
#include <memsched/sim/memory_model.hpp>

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace memsched::detail {

struct window_reorder_request {
  /// Vertices per window at most (<= 64): windows of 12, 24 and this many are tried.
  std::size_t max_window = 32;
  /// States kept per layer of a window's dynamic program (smallest peak, then fewest live bytes);
  /// a window with fewer states per layer is solved exactly.
  std::size_t beam = 256;
  /// Window searches and vertex moves tried in all: a counted limit, so that the result does not
  /// depend on the machine.
  std::uint64_t max_attempts = 4096;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  serenity_memory_pool* pool = nullptr;  ///< Required.
};

struct window_reorder_answer {
  std::vector<std::size_t> order;
  std::int64_t peak = 0;
  std::uint64_t attempts = 0;      ///< windows and moves tried
  std::uint64_t improvements = 0;  ///< accepted changes (each removes a peak step or lowers the peak)
  std::uint64_t states_expanded = 0;
};

/// Improves `order` (a topological order of g) by windows and moves until none removes a step at
/// the peak, the attempts are spent, the deadline passes or the pool refuses memory. Returns an
/// order whose peak is at most the given one. O(attempts * (n + m + beam * window^2 * (words +
/// in-degree * words))) for n vertices and m edges.
class window_reorder {
 public:
  window_reorder(const memory_graph& g, const window_reorder_request& req)
      : g_(g), req_(req), t_(g), w_(t_.words), mem_(*req.pool), clock_(req.deadline), local_(g.size(), none) {
    assert(req.max_window >= 2 && req.max_window <= 64);
  }

  window_reorder_answer run(std::vector<std::size_t> order) {
    window_reorder_answer ans;
    order_ = std::move(order);
    profile();
    while (!out_of_attempts(ans) && improve_once(ans)) ++ans.improvements;
    ans.order = std::move(order_);
    ans.peak = peak_;
    ans.states_expanded = expanded_;
    return ans;
  }

 private:
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  struct state {
    std::uint64_t mask;    // window vertices run (bit i: the window's i-th vertex)
    std::int64_t live;     // resident bytes after them
    std::int64_t peak;     // the largest step so far in the window
    std::uint32_t parent;  // index in the previous layer
    std::uint32_t vertex;  // window index of the vertex run last
  };

  // The steps of the current order (the memory model's), its peak and the positions at the peak.
  void profile() {
    steps_ = simulate_sequence(g_, order_);
    peak_ = 0;
    for (const memory_step& st : steps_) peak_ = std::max(peak_, st.transient);
    peak_positions_.clear();
    for (std::size_t i = 0; i < steps_.size(); ++i)
      if (steps_[i].transient == peak_) peak_positions_.push_back(i);
  }

  // Whether the attempts are spent or the deadline has passed (then stopped_).
  bool out_of_attempts(const window_reorder_answer& ans) {
    if (clock_.expired()) stopped_ = true;
    return stopped_ || ans.attempts >= req_.max_attempts;
  }

  // One accepted change, or false when no window or move around a peak step removes it.
  bool improve_once(window_reorder_answer& ans) {
    const std::size_t n = order_.size();
    // A few peak steps suffice: removing any one of them is progress.
    const std::size_t tried = std::min<std::size_t>(peak_positions_.size(), 4);
    const std::vector<std::size_t> peaks(peak_positions_.begin(), peak_positions_.begin() + tried);
    for (std::size_t p : peaks) {
      if (try_moves(p, ans)) return true;
      if (out_of_attempts(ans)) return false;
    }
    for (std::size_t size : {std::size_t{12}, std::size_t{24}, req_.max_window}) {
      size = std::min(size, std::min(req_.max_window, n));
      if (size < 2) continue;
      for (std::size_t p : peaks) {
        // The window centred on the peak step, ending at it and starting at it.
        const std::size_t starts[] = {p >= size / 2 ? p - size / 2 : 0, p + 1 >= size ? p + 1 - size : 0, p};
        for (std::size_t k = 0; k < 3; ++k) {
          const std::size_t s = std::min(starts[k], n - size);
          if (k > 0 && s == std::min(starts[k - 1], n - size)) continue;
          if (out_of_attempts(ans)) return false;
          ++ans.attempts;
          if (solve_window(s, s + size)) return true;
          if (stopped_) return false;
        }
      }
      if (size == n) break;
    }
    return false;
  }

  // Moves of one vertex resident during peak step p: a vertex run before p whose output is read
  // only after p goes to just before its first reader; a vertex run after p that frees inputs
  // resident at p goes to just after its last producer. Accepted when the peak falls or loses a
  // step. O(candidates * (n + m)).
  bool try_moves(std::size_t p, window_reorder_answer& ans) {
    const std::size_t n = order_.size();
    position_.assign(g_.size(), 0);
    for (std::size_t i = 0; i < n; ++i) position_[order_[i]] = i;
    // A rejected move restores these instead of simulating the order again.
    const std::vector<memory_step> old_steps = steps_;
    const std::vector<std::size_t> old_positions = peak_positions_;
    const std::int64_t old_peak = peak_;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t v = order_[i];
      std::size_t to = i;
      if (i < p) {
        std::size_t first = n;
        for (auto s : g_.successors(v)) first = std::min(first, position_[s]);
        if (first <= p || first == n) continue;
        to = first - 1;  // v runs just before its first reader
      } else if (i > p) {
        std::size_t after_producers = 0;
        for (auto q : g_.predecessors(v)) after_producers = std::max(after_producers, position_[q] + 1);
        if (after_producers > p) continue;
        to = after_producers;  // v runs just after its last producer
      } else {
        continue;
      }
      if (out_of_attempts(ans)) return false;
      ++ans.attempts;
      move_vertex(i, to);
      profile();
      if (peak_ < old_peak || (peak_ == old_peak && peak_positions_.size() < old_positions.size())) return true;
      move_vertex(to, i);
      steps_ = old_steps;
      peak_positions_ = old_positions;
      peak_ = old_peak;
    }
    return false;
  }

  void move_vertex(std::size_t from, std::size_t to) {
    if (from < to) std::rotate(order_.begin() + from, order_.begin() + from + 1, order_.begin() + to + 1);
    else std::rotate(order_.begin() + to, order_.begin() + from, order_.begin() + from + 1);
  }

  // The best order of order_[s, e) with the rest fixed, by a layered dynamic program over the
  // subsets of the window run so far (kept per layer: the `beam` smallest (peak, live)). Replaces
  // the window and returns true when every step of the new order is below the peak.
  bool solve_window(std::size_t s, std::size_t e) {
    const std::size_t k = e - s;
    for (std::size_t i = 0; i < k; ++i) local_[order_[s + i]] = static_cast<std::uint32_t>(i);
    local_preds_.assign(k, 0);
    for (std::size_t i = 0; i < k; ++i)
      for (auto q : g_.predecessors(order_[s + i]))
        if (local_[q] != none) local_preds_[i] |= std::uint64_t{1} << local_[q];
    prefix_.assign(w_, 0);
    for (std::size_t i = 0; i < s; ++i) set_bit(prefix_.data(), order_[i]);
    const std::int64_t start_live = s > 0 ? steps_[s - 1].live_after : 0;
    const bool ok = run_layers(s, k, start_live);
    for (std::size_t i = 0; i < k; ++i) local_[order_[s + i]] = none;
    if (!ok) return false;
    // Rebuild the window's order from the parent links, back to front.
    std::vector<std::size_t> window(k);
    std::uint32_t idx = 0;
    for (std::size_t layer = k; layer > 0; --layer) {
      const state& st = layers_[layer][idx];
      window[layer - 1] = order_[s + st.vertex];
      idx = st.parent;
    }
    std::copy(window.begin(), window.end(), order_.begin() + static_cast<std::ptrdiff_t>(s));
    profile();
    return true;
  }

  // Layers 1..k of the window's dynamic program into layers_; true when the last layer has a state
  // (peak below peak_). False also when the pool refuses memory (stopped_).
  bool run_layers(std::size_t s, std::size_t k, std::int64_t start_live) {
    if (layers_.size() < k + 1) layers_.resize(k + 1);
    std::vector<state>& first = layers_[0];
    if (!mem_.grow(first, 1)) return stop();
    first.clear();
    first.push_back({0, start_live, 0, none, none});
    std::vector<std::uint64_t> sig(w_);
    for (std::size_t layer = 0; layer < k; ++layer) {
      std::vector<state>& from = layers_[layer];
      std::vector<state>& next = layers_[layer + 1];
      next.clear();
      for (std::uint32_t si = 0; si < from.size(); ++si) {
        const state cur = from[si];
        copy_bits(sig.data(), prefix_.data(), w_);
        for (std::uint64_t bits = cur.mask; bits != 0; bits &= bits - 1)
          set_bit(sig.data(), order_[s + static_cast<std::size_t>(std::countr_zero(bits))]);
        for (std::size_t i = 0; i < k; ++i) {
          const std::uint64_t bit = std::uint64_t{1} << i;
          if ((cur.mask & bit) != 0 || (local_preds_[i] & ~cur.mask) != 0) continue;
          const std::size_t v = order_[s + i];
          set_bit(sig.data(), v);
          const auto step = forward_step(g_, t_, v, sig.data(), cur.live);
          clear_bit(sig.data(), v);
          ++expanded_;
          const std::int64_t peak = std::max(cur.peak, step.transient);
          if (peak >= peak_) continue;
          if (!mem_.grow(next, next.size() + 1)) return stop();
          next.push_back({cur.mask | bit, step.live, peak, si, static_cast<std::uint32_t>(i)});
        }
        if (clock_.expired(k)) return stop();
      }
      // One state per subset (the smallest peak; live depends on the subset only), then the beam.
      std::sort(next.begin(), next.end(), [](const state& a, const state& b) {
        return a.mask != b.mask ? a.mask < b.mask : a.peak < b.peak;
      });
      next.erase(std::unique(next.begin(), next.end(), [](const state& a, const state& b) { return a.mask == b.mask; }),
                 next.end());
      if (next.size() > req_.beam) {
        std::nth_element(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(req_.beam), next.end(),
                         [](const state& a, const state& b) { return a.peak != b.peak ? a.peak < b.peak : a.live < b.live; });
        next.resize(req_.beam);
      }
      if (next.empty()) return false;
    }
    return true;
  }

  bool stop() {
    stopped_ = true;
    return false;
  }

  const memory_graph& g_;
  window_reorder_request req_;  // a copy: the caller's request may be a temporary
  signature_tables t_;
  std::size_t w_;
  pool_accountant mem_;
  deadline_clock clock_;
  std::vector<std::size_t> order_, position_, peak_positions_;
  std::vector<memory_step> steps_;
  std::vector<std::uint32_t> local_;
  std::vector<std::uint64_t> local_preds_, prefix_;
  std::vector<std::vector<state>> layers_;
  std::int64_t peak_ = 0;
  std::uint64_t expanded_ = 0;
  bool stopped_ = false;
};

}  // namespace memsched::detail
