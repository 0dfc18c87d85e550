#pragma once
// The covering relaxation of rematerialization along an order, and a bound from its Lagrangian
// dual (remat_cost_lower_bound along an order).
//
// Why it holds: a plan whose first computations follow the order holds, at each step above the
// budget, at least `need` bytes fewer of the values live there without recomputation (the step's
// inputs excluded). A value it does not hold at step t is read again later: by the first
// computation of its next reader in the order (or at the end, an output), so the plan computes it
// again between t and that reader. Call (value, next reader) a gap. Drops in one gap may share a
// recomputation; drops in two gaps of one value may not (the first gap's recomputation comes
// before its reader, which comes before the second gap starts). So with y_gap = 1 when the plan
// drops the value somewhere in the gap, every plan's extra cost is at least sum cost(value) y_gap
// over a y that covers every step's need with the bytes of its gaps: the covering program, whose
// LP relaxation (0 <= y <= 1) is the bound. The per-step fractional cover is its relaxation to
// one row at a time.
//
// Its Lagrangian dual is solved by subgradient ascent: for any multipliers w >= 0 (a cost per
// byte per row), sum_rows need w - sum_gaps max(0, bytes * (sum of w over the gap's rows) - cost)
// is at most the LP's optimum (weak duality; the max terms are the duals of y <= 1). Every w
// gives a valid bound, so the ascent may stop anywhere: it is counted, hence deterministic.

#include <memsched/sim/memory_model.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

namespace memsched::detail {

/// The steps above the budget as rows of the covering program.
struct drop_cover_rows {
  std::vector<std::int64_t> need;     ///< Per row: the bytes the step must drop.
  std::vector<std::size_t> first{0};  ///< Row r's gaps: gap[first[r], first[r + 1]).
  std::vector<std::uint32_t> gap;
  std::vector<std::int64_t> bytes;  ///< Per gap: the value's bytes.
  std::vector<double> cost;         ///< Per gap: the value's cost.
  [[nodiscard]] std::size_t rows() const noexcept { return need.size(); }
  [[nodiscard]] std::size_t gaps() const noexcept { return bytes.size(); }
};

/// The live values of a walk along an order that a step may drop (positive bytes, read later),
/// and the gap each is in at a given step: gap ids are dense over the gaps met.
class drop_cover_builder {
 public:
  drop_cover_builder(const memory_graph& g, std::span<const std::size_t> order, std::size_t max_entries)
      : g_(g), max_entries_(max_entries), pos_(g.size()), where_(g.size(), none), readers_(g.size()), base_(g.size() + 1, 0),
        input_(g.size(), 0) {
    for (std::size_t k = 0; k < order.size(); ++k) pos_[order[k]] = k;
    for (std::size_t u = 0; u < g.size(); ++u) {
      for (auto r : g.successors(u)) readers_[u].push_back(pos_[r]);
      std::sort(readers_[u].begin(), readers_[u].end());
      base_[u + 1] = base_[u] + readers_[u].size() + 1;  // one gap before each reader, one before the end
    }
    compact_.assign(base_.back(), none);
  }

  void set_live(std::size_t u, bool in) {
    if (in == (where_[u] != none) || (in && g_.bytes(u) <= 0)) return;
    if (in) {
      where_[u] = live_.size();
      live_.push_back(u);
      return;
    }
    const std::size_t at = where_[u];
    live_[at] = live_.back();
    where_[live_[at]] = at;
    live_.pop_back();
    where_[u] = none;
  }

  /// Adds the row of the step at `position` (vertex v) that must drop `need` bytes; nothing once
  /// the rows hold max_entries gaps in all (fewer rows: a weaker bound, still a bound).
  void add_row(std::size_t v, std::size_t position, std::int64_t need) {
    if (rows_.gap.size() + live_.size() > max_entries_) return;
    for (auto p : g_.predecessors(v)) input_[p] = 1;
    for (std::size_t u : live_)
      if (!input_[u]) rows_.gap.push_back(gap_of(u, position));
    for (auto p : g_.predecessors(v)) input_[p] = 0;
    rows_.need.push_back(need);
    rows_.first.push_back(rows_.gap.size());
  }

  /// The rows, each row's gaps cheapest per byte first (ties: the order met), the order the
  /// primal covers take them in.
  [[nodiscard]] drop_cover_rows take() {
    for (std::size_t r = 0; r < rows_.rows(); ++r)
      std::stable_sort(rows_.gap.begin() + static_cast<std::ptrdiff_t>(rows_.first[r]),
                       rows_.gap.begin() + static_cast<std::ptrdiff_t>(rows_.first[r + 1]), [&](std::uint32_t a, std::uint32_t b) {
                         return rows_.cost[a] * static_cast<double>(rows_.bytes[b]) < rows_.cost[b] * static_cast<double>(rows_.bytes[a]);
                       });
    return std::move(rows_);
  }

 private:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

  std::uint32_t gap_of(std::size_t u, std::size_t position) {
    const auto k = static_cast<std::size_t>(std::upper_bound(readers_[u].begin(), readers_[u].end(), position) - readers_[u].begin());
    std::size_t& id = compact_[base_[u] + k];
    if (id == none) {
      id = rows_.bytes.size();
      rows_.bytes.push_back(g_.bytes(u));
      rows_.cost.push_back(g_.cost(u));
    }
    return static_cast<std::uint32_t>(id);
  }

  const memory_graph& g_;
  std::size_t max_entries_;
  std::vector<std::size_t> pos_, where_, live_;
  std::vector<std::vector<std::size_t>> readers_;  // positions of each value's readers, ascending
  std::vector<std::size_t> base_, compact_;
  std::vector<char> input_;
  drop_cover_rows rows_;
};

/// Row r's fractional cover on top of what `y` already covers: its gaps in order (cheapest per
/// byte first), each raised towards 1 until the need is met; adds to y.
struct row_cover {
  double cost = 0;   ///< Of what this row added.
  double ratio = 0;  ///< Cost per byte of the last gap raised: the row's marginal price.
  bool covered = false;
};

inline row_cover top_up_row(const drop_cover_rows& rows, std::size_t r, std::vector<double>& y) {
  row_cover c;
  const double need = static_cast<double>(rows.need[r]);
  double held = 0;
  for (std::size_t e = rows.first[r]; e < rows.first[r + 1]; ++e) held += y[rows.gap[e]] * static_cast<double>(rows.bytes[rows.gap[e]]);
  for (std::size_t e = rows.first[r]; e < rows.first[r + 1] && held < need; ++e) {
    const std::uint32_t k = rows.gap[e];
    const double add = std::min(1.0 - y[k], (need - held) / static_cast<double>(rows.bytes[k]));
    if (add <= 0) continue;
    y[k] += add;
    held += add * static_cast<double>(rows.bytes[k]);
    c.cost += add * rows.cost[k];
    c.ratio = rows.cost[k] / static_cast<double>(rows.bytes[k]);
  }
  c.covered = held >= need * (1 - 1e-12);
  return c;
}

/// A primal solution of the covering LP: rows in order, each topped up with its cheapest gaps
/// per byte. Its cost bounds the LP's optimum from above (the ascent's target); infinity when a
/// row's gaps cannot cover its need.
inline double drop_cover_greedy_cost(const drop_cover_rows& rows) {
  std::vector<double> y(rows.gaps(), 0.0);
  double total = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const row_cover c = top_up_row(rows, r, y);
    if (!c.covered) return std::numeric_limits<double>::infinity();
    total += c.cost;
  }
  return total;
}

/// The dual value at multipliers w (see the file's comment), and its subgradient in `grad`;
/// `per_gap` and `taken` are the caller's buffers.
inline double drop_cover_dual(const drop_cover_rows& rows, const std::vector<double>& w, std::vector<double>& grad,
                              std::vector<double>& per_gap, std::vector<char>& taken) {
  per_gap.assign(rows.gaps(), 0.0);
  long double value = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    value += static_cast<long double>(rows.need[r]) * w[r];
    for (std::size_t e = rows.first[r]; e < rows.first[r + 1]; ++e) per_gap[rows.gap[e]] += w[r];
  }
  taken.assign(rows.gaps(), 0);
  for (std::size_t k = 0; k < rows.gaps(); ++k) {
    const long double over = static_cast<long double>(rows.bytes[k]) * per_gap[k] - rows.cost[k];
    if (over > 0) {
      value -= over;
      taken[k] = 1;
    }
  }
  grad.assign(rows.rows(), 0.0);
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    double dropped = 0;
    for (std::size_t e = rows.first[r]; e < rows.first[r + 1]; ++e)
      if (taken[rows.gap[e]]) dropped += static_cast<double>(rows.bytes[rows.gap[e]]);
    grad[r] = static_cast<double>(rows.need[r]) - dropped;
  }
  return static_cast<double>(value);
}

/// The multipliers of the best single row: its marginal price (the most expensive gap its
/// fractional cover uses), 0 elsewhere. Their dual value is that row's fractional cover, so the
/// ascent starts at the per-step bound.
inline std::vector<double> drop_cover_start(const drop_cover_rows& rows) {
  std::vector<double> w(rows.rows(), 0.0), y(rows.gaps(), 0.0);
  double best = -1;
  std::size_t best_row = 0;
  double best_ratio = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const row_cover c = top_up_row(rows, r, y);
    for (std::size_t e = rows.first[r]; e < rows.first[r + 1]; ++e) y[rows.gap[e]] = 0;  // rows alone, not on top of each other
    if (c.covered && c.cost > best) {
      best = c.cost;
      best_row = r;
      best_ratio = c.ratio;
    }
  }
  if (best >= 0) w[best_row] = best_ratio;
  return w;
}

/// The best dual value found by projected subgradient ascent with Polyak steps towards the greedy
/// primal's cost, within `max_work` row entries visited; 0 without rows, infinity when a row
/// cannot be covered.
inline double drop_cover_bound(const drop_cover_rows& rows, std::size_t max_work) {
  if (rows.rows() == 0) return 0;
  const double target = drop_cover_greedy_cost(rows);
  if (target == std::numeric_limits<double>::infinity()) return target;
  std::vector<double> w = drop_cover_start(rows), grad, per_gap;
  std::vector<char> taken;
  double value = drop_cover_dual(rows, w, grad, per_gap, taken), best = std::max(0.0, value);
  const std::size_t per_round = rows.gap.size() + rows.gaps() + rows.rows() + 1;
  double step = 1.0;
  std::size_t since_better = 0;
  for (std::size_t work = per_round; work + per_round <= max_work && step > 1e-4; work += per_round) {
    if (target - value <= 1e-9 * std::max(1.0, target)) break;  // at the primal's cost: the LP's optimum
    for (std::size_t r = 0; r < w.size(); ++r)
      if (w[r] <= 0 && grad[r] < 0) grad[r] = 0;  // projected: w stays at 0 there
    double norm = 0;
    for (double d : grad) norm += d * d;
    if (norm == 0) break;  // no row gains: w is optimal
    const double t = step * (target - value) / norm;
    for (std::size_t r = 0; r < w.size(); ++r) w[r] = std::max(0.0, w[r] + t * grad[r]);
    value = drop_cover_dual(rows, w, grad, per_gap, taken);
    if (value > best * (1 + 1e-12)) {
      best = value;
      since_better = 0;
    } else if (++since_better >= 10) {
      step /= 2;
      since_better = 0;
    }
  }
  return best;
}

}  // namespace memsched::detail
