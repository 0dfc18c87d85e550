#pragma once
// Internals of remat/moccasin.hpp: building the retention-interval CP model (the type is in
// remat/moccasin_model.hpp), and the conversions between schedules (compute events), CP assignments
// and execution plans.

#include <memsched/core/config.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/moccasin_model.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/solver/cp_model.hpp>
#include <memsched/solver/model_size.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace memsched {

namespace detail {

/// Compute events (slot, vertex), sorted by slot.
using moccasin_schedule = std::vector<std::pair<std::int64_t, std::size_t>>;

inline std::vector<std::size_t> moccasin_positions(std::size_t n, const std::vector<std::size_t>& order) {
  std::vector<std::size_t> pos(n);
  for (std::size_t k = 0; k < order.size(); ++k) pos[order[k]] = k;
  return pos;
}

/// The largest memory value a Moccasin model may hold: Gecode's integer limit (Int::Limits::max,
/// 2^31 - 2), the narrowest of the CP backends.
inline constexpr std::int64_t moccasin_value_limit = 2'147'483'646;

/// Gecode's cumulative also refuses ("Number out of limits") a capacity c with
/// c x (sum over tasks of the width of their start domains) x tasks beyond 2^53 - 1 (its
/// double_check of the energy reasoning). The largest capacity the model's tasks allow: for the
/// start domains build_moccasin_model makes (a first interval starts at one slot, a later one
/// anywhere in the later stages), and one task per interval with bytes, one per workspace.
inline std::int64_t moccasin_capacity_limit(const memory_graph& g, const std::vector<std::size_t>& order,
                                            const std::vector<unsigned>& counts) {
  const std::size_t n = g.size();
  double width = 0, tasks = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = order[k];
    const std::size_t later_stages = n - 1 - k;
    const std::size_t count = std::min<std::size_t>(std::max(1u, counts[v]), 1 + later_stages);
    const double per_task = (g.bytes(v) > 0) + (g.workspace(v) > 0);
    // A later interval starts at slot(j, k), j in (k, n): a width of slot(n-1, k) - slot(k+1, k) + 1.
    const double later = later_stages == 0 ? 1.0 : static_cast<double>(moccasin_model::slot(n - 1, k) - moccasin_model::slot(k + 1, k) + 1);
    width += per_task * (1.0 + static_cast<double>(count - 1) * later);
    tasks += per_task * static_cast<double>(count);
  }
  const double limit = 9007199254740991.0 / std::max(1.0, width * tasks);
  return limit >= static_cast<double>(moccasin_value_limit) ? moccasin_value_limit : static_cast<std::int64_t>(limit);
}

/// Builds the model. `counts[v]` >= 1 intervals per vertex (clamped to the stages after v's own).
/// `capacity_upper` bounds the phase-1 capacity variable (units). Memory values stay within
/// `value_limit` (default: moccasin_capacity_limit, what Gecode accepts; see moccasin_model::rounded).
MEMSCHED_DECL moccasin_model build_moccasin_model(const memory_graph& g, const std::vector<std::size_t>& order, std::int64_t budget,
                                                  moccasin_phase phase, std::vector<unsigned> counts, std::int64_t capacity_upper_bytes,
                                                  std::int64_t value_limit = -1);

/// The size of the model build_moccasin_model makes for these interval counts, counted without
/// building it: variables, constraints and their terms (tight-end helpers per pair of intervals
/// of a producer and a consumer), and the values of the explicit end and start domains (the
/// largest part on big graphs: O(n m) values). Constraint counts are upper bounds of the
/// builder's (it skips some clauses). O(n + m).
inline model_size_estimate moccasin_model_size(const memory_graph& g, const std::vector<std::size_t>& order,
                                               const std::vector<unsigned>& counts, std::string_view backend) {
  const std::size_t n = g.size();
  const auto pos = moccasin_positions(n, order);
  std::vector<std::uint64_t> c(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = order[k];
    c[v] = std::min<std::uint64_t>(std::max(1u, counts[v]), n - k);
  }
  model_size_estimate e;
  std::uint64_t intervals = 0, pairs = 0, covers = 0, cover_terms = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = order[k];
    std::uint64_t ends = 1 + (n - k);
    for (auto w : g.successors(v)) {
      ends += n - pos[w];
      pairs += c[v] * c[w];
    }
    for (auto u : g.predecessors(v)) {
      covers += c[v];
      cover_terms += c[v] * (c[u] + 1);
    }
    e.domain_values += c[v] * ends + (c[v] - 1) * (n - k - 1);
    intervals += c[v] * (1 + (g.workspace(v) > 0));
  }
  // Per interval: presence, start, end, length, the tight-end boolean (+ workspace end); per pair:
  // h, gt and up to three helper booleans, about 14 rows of 2-3 terms.
  e.variables = 5 * intervals + 5 * pairs + 2;
  e.constraints = 8 * intervals + 14 * pairs + covers + 2;
  e.nonzeros = 3 * e.constraints + cover_terms + 2 * intervals;
  e.model_bytes = e.variables * sizeof(cp_variable) + e.constraints * 64 + e.nonzeros * 16 + e.domain_values * sizeof(std::int64_t);
  add_backend_bytes(e, backend);
  return e;
}

/// The schedule of a CP assignment: present intervals' (start, vertex), sorted.
template <class Values>
moccasin_schedule decode_moccasin(const moccasin_model& mm, const Values& values) {
  moccasin_schedule s;
  for (std::size_t v = 0; v < mm.intervals.size(); ++v)
    for (const auto& iv : mm.intervals[v])
      if (values[iv.presence] != 0) s.emplace_back(static_cast<std::int64_t>(values[iv.start]), v);
  std::sort(s.begin(), s.end());
  return s;
}

/// The vertices of a schedule, in time order (for plan_from_computes).
inline std::vector<std::size_t> schedule_computes(const moccasin_schedule& s) {
  std::vector<std::size_t> c;
  c.reserve(s.size());
  for (const auto& e : s) c.push_back(e.second);
  return c;
}

/// The CP assignment of a schedule (tight ends: just after the last use), and its peak in units.
/// Presences, starts, ends, lengths, workspace ends and the capacity are set; helper variables
/// are cp_model::unset.
/// nullopt when the schedule does not fit the model (a slot outside the domain, too many
/// intervals, an input not resident).
MEMSCHED_DECL std::optional<std::pair<std::vector<std::int64_t>, std::int64_t>> encode_moccasin(const memory_graph& g, const moccasin_model& mm,
                                                                                               const moccasin_schedule& s);

/// The staged schedule of a plan whose first computations follow `order`: recomputations between
/// two first computations go to that stage, sorted by input position (which may change its
/// memory: callers check the peak). nullopt when the first computations do not follow the order
/// or a vertex is recomputed twice in a stage.
inline std::optional<moccasin_schedule> moccasin_schedule_of_plan(const memory_graph& g, const std::vector<std::size_t>& order,
                                                                  const execution_plan& plan) {
  const std::size_t n = g.size();
  const auto pos = moccasin_positions(n, order);
  std::vector<char> computed(n, 0);
  moccasin_schedule s;
  std::vector<std::size_t> pending;  // recomputations waiting for the next first computation
  std::size_t next = 0;              // stage of the next first computation
  for (const auto& step : plan.steps) {
    if (step.op != plan_op::compute || step.node >= n) continue;
    const std::size_t v = step.node;
    if (computed[v]) {
      pending.push_back(v);
      continue;
    }
    if (next >= n || order[next] != v) return std::nullopt;
    // Recomputations of the stage go in input-order position order (still topological).
    std::vector<std::size_t> seen;
    for (auto u : pending) seen.push_back(pos[u]);
    std::sort(seen.begin(), seen.end());
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return std::nullopt;
    for (auto p : seen) s.emplace_back(moccasin_model::slot(next, p), order[p]);
    s.emplace_back(moccasin_model::slot(next, next), v);
    pending.clear();
    computed[v] = 1;
    ++next;
  }
  if (next != n) return std::nullopt;
  return s;  // recomputations after the last first computation are dropped (they cannot help)
}

}  // namespace detail
}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/remat/impl/moccasin_model.ipp>
#endif
