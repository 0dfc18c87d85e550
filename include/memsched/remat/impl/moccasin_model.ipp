#pragma once
// The definitions of remat/detail/moccasin_model.hpp's functions declared MEMSCHED_DECL there.
// Header-only mode: that header includes this file at its end and they are compiled in the TUs that
// call them (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/remat/detail/moccasin_model.hpp>

namespace memsched::detail {

/// The most intervals any vertex has (at least 1).
MEMSCHED_DECL unsigned moccasin_most_intervals(const std::vector<unsigned>& counts) {
  unsigned most = 1;
  for (auto c : counts) most = std::max(most, c);
  return most;
}

/// Sets mm.byte_unit (and mm.rounded): the gcd of all sizes and workspaces, or a coarser unit when
/// that gcd would let a load of the cumulative exceed value_limit.
MEMSCHED_DECL void set_moccasin_byte_unit(moccasin_model& mm, const memory_graph& g, const std::vector<unsigned>& counts,
                                          std::int64_t value_limit) {
  const std::size_t n = g.size();
  std::int64_t unit = 0;
  for (std::size_t v = 0; v < n; ++v) unit = std::gcd(unit, std::gcd(g.bytes(v), g.workspace(v)));
  mm.byte_unit = unit == 0 ? 1 : unit;
  // Every load of the cumulative (a sum of sizes and workspaces, each rounded up by less than a
  // unit) must stay within value_limit: when the gcd unit does not ensure it, a coarser unit.
  double all = 0;
  const unsigned most = moccasin_most_intervals(counts);
  for (std::size_t v = 0; v < n; ++v) all += static_cast<double>(g.bytes(v)) + static_cast<double>(g.workspace(v));
  const double room = static_cast<double>(value_limit) - 2.0 * static_cast<double>(n) * most - 2.0;
  if (all / static_cast<double>(mm.byte_unit) > room && room > 1) {
    mm.byte_unit = static_cast<std::int64_t>(std::ceil(all / room));
    mm.rounded = true;
  }
}

/// Sets mm.cost_unit: costs stay the integers they are when small enough, otherwise they are scaled
/// to a resolution whose objective fits the backend's integers.
MEMSCHED_DECL void set_moccasin_cost_unit(moccasin_model& mm, const memory_graph& g, const std::vector<unsigned>& counts) {
  const std::size_t n = g.size();
  double max_cost = 0;
  bool integral = true;
  const unsigned max_count = moccasin_most_intervals(counts);
  for (std::size_t v = 0; v < n; ++v) {
    max_cost = std::max(max_cost, g.cost(v));
    integral = integral && g.cost(v) == std::floor(g.cost(v));
  }
  const double room = 1e9 / std::max<double>(1.0, static_cast<double>(n) * max_count);
  mm.cost_unit = (integral && max_cost <= room) ? 1.0 : std::max(max_cost, 1e-300) / std::min(1e6, room);
}

/// The cost of computing v once in the model's units: 0 only for a free vertex, so that every
/// recomputation of a costly one counts.
MEMSCHED_DECL std::int64_t moccasin_cost_units(const moccasin_model& mm, const memory_graph& g, std::size_t v) {
  if (g.cost(v) <= 0) return 0;
  return std::max<std::int64_t>(1, std::llround(g.cost(v) / mm.cost_unit));
}

/// What the steps of build_moccasin_model share: the model being built and the constraints that
/// collect every interval before they are added (the memory cumulative, distinct starts).
struct moccasin_builder {
  const memory_graph& g;
  moccasin_model& mm;
  std::int64_t horizon = 0;  ///< The end of time: the number of slots.
  std::size_t one = 0;       ///< The constant 1 (first intervals' presence, workspace lengths).
  cp_cumulative memory{};
  cp_all_different distinct_starts{};
  std::vector<std::size_t> lengths{};  ///< Length and workspace-end variables, branched on last.

  [[nodiscard]] cp_model& model() { return mm.model; }
};

/// The ends an interval of the vertex at position k may take: just after a slot of v or of a
/// consumer, or the end of time.
MEMSCHED_DECL std::vector<std::int64_t> moccasin_end_domain(const moccasin_builder& b, std::size_t k) {
  const std::size_t n = b.g.size();
  const std::size_t v = b.mm.order[k];
  std::vector<std::int64_t> ends{b.horizon};
  for (std::size_t j = k; j < n; ++j) ends.push_back(moccasin_model::slot(j, k) + 1);
  for (auto w : b.g.successors(v))
    for (std::size_t j = b.mm.position[w]; j < n; ++j) ends.push_back(moccasin_model::slot(j, b.mm.position[w]) + 1);
  return ends;
}

/// Interval c of v's workspace: one slot from the interval's start, present with it.
MEMSCHED_DECL void add_moccasin_workspace(moccasin_builder& b, std::size_t v, unsigned c, moccasin_model::interval_vars& iv,
                                          const std::string& name) {
  cp_model& m = b.model();
  const std::size_t we = m.add_variable(1, b.horizon, "w_" + name);
  m.add(cp_linear{{{we, 1}, {iv.start, -1}}, 1, 1, {}});
  const std::size_t wi = m.add_interval({iv.start, b.one, we, c == 0 ? std::nullopt : std::optional<std::size_t>(iv.presence), "ws_" + name});
  b.memory.tasks.push_back({wi, b.mm.units(b.g.workspace(v))});
  iv.workspace_end = we;
  b.lengths.push_back(we);
}

/// An extra computation (c > 0) follows the previous one and costs a recomputation.
MEMSCHED_DECL void add_moccasin_recompute(moccasin_builder& b, std::size_t v, const moccasin_model::interval_vars& iv,
                                          const std::vector<std::int64_t>& later) {
  cp_model& m = b.model();
  const auto& prev = b.mm.intervals[v].back();
  m.add(cp_clause{{{iv.presence, false}, {prev.presence, true}}});  // a_c -> a_{c-1}
  m.add(cp_linear{{{iv.start, 1}, {prev.end, -1}}, 0, cp_model::max_value, {{iv.presence, true}}});  // after the previous
  // Absent intervals sit at their earliest slot with length 1 (no symmetric assignments).
  m.add(cp_linear{{{iv.start, 1}}, later.front(), later.front(), {{iv.presence, false}}});
  m.add(cp_linear{{{iv.end, 1}}, later.front() + 1, later.front() + 1, {{iv.presence, false}}});
  m.add(cp_linear{{{iv.length, 1}}, 1, 1, {{iv.presence, false}}});
  m.objective.push_back({iv.presence, moccasin_cost_units(b.mm, b.g, v)});
}

/// Interval c of the vertex at position k: the first starts at its own slot and is always present,
/// a later one starts in a later stage when present.
MEMSCHED_DECL void add_moccasin_interval(moccasin_builder& b, std::size_t k, unsigned c, const std::vector<std::int64_t>& ends,
                                         const std::vector<std::int64_t>& later) {
  cp_model& m = b.model();
  const std::size_t v = b.mm.order[k];
  moccasin_model::interval_vars iv;
  const std::string name = "v" + std::to_string(b.g.id(v)) + "_" + std::to_string(c);
  iv.presence = c == 0 ? b.one : m.add_boolean("a_" + name);
  iv.start = c == 0 ? m.add_constant(moccasin_model::slot(k, k), "s_" + name) : m.add_variable(later, "s_" + name);
  iv.end = m.add_variable(ends, "e_" + name);
  iv.length = m.add_variable(1, b.horizon, "l_" + name);
  iv.cp_interval = m.add_interval({iv.start, iv.length, iv.end, c == 0 ? std::nullopt : std::optional<std::size_t>(iv.presence), name});
  b.lengths.push_back(iv.length);
  if (b.g.bytes(v) > 0) b.memory.tasks.push_back({iv.cp_interval, b.mm.units(b.g.bytes(v))});
  if (b.g.workspace(v) > 0) add_moccasin_workspace(b, v, c, iv, name);
  b.distinct_starts.variables.push_back(iv.start);
  b.distinct_starts.presence.push_back(iv.presence);
  if (c > 0) add_moccasin_recompute(b, v, iv, later);
  b.mm.intervals[v].push_back(iv);
}

/// The intervals of the vertex at position k (as many as counts allow in the stages left); for an
/// output, its last present interval lasts to the end of time.
MEMSCHED_DECL void add_moccasin_vertex(moccasin_builder& b, std::size_t k, const std::vector<unsigned>& counts) {
  cp_model& m = b.model();
  const std::size_t n = b.g.size();
  const std::size_t v = b.mm.order[k];
  const std::size_t later_stages = n - 1 - k;
  const unsigned count = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, counts[v]), 1 + later_stages));
  const std::vector<std::int64_t> ends = moccasin_end_domain(b, k);
  std::vector<std::int64_t> later;
  for (std::size_t j = k + 1; j < n; ++j) later.push_back(moccasin_model::slot(j, k));
  for (unsigned c = 0; c < count; ++c) add_moccasin_interval(b, k, c, ends, later);
  if (!b.g.is_output(v)) return;
  const auto& ivs = b.mm.intervals[v];
  for (std::size_t c = 0; c < ivs.size(); ++c) {
    std::vector<cp_literal> when{{ivs[c].presence, true}};
    if (c + 1 < ivs.size()) when.push_back({ivs[c + 1].presence, false});
    m.add(cp_linear{{{ivs[c].end, 1}}, b.horizon, b.horizon, when});
  }
}

/// Every present interval of v has, for each input u, an interval of u resident at its start.
MEMSCHED_DECL void add_moccasin_inputs_resident(moccasin_builder& b) {
  for (std::size_t v = 0; v < b.g.size(); ++v)
    for (const auto& iv : b.mm.intervals[v])
      for (auto u : b.g.predecessors(v)) {
        cp_cover c{iv.cp_interval, {}};
        for (const auto& ivu : b.mm.intervals[u]) c.candidates.push_back(ivu.cp_interval);
        b.model().add(std::move(c));
      }
}

/// A new boolean b <=> x < y.
MEMSCHED_DECL std::size_t moccasin_less(cp_model& m, std::size_t x, std::size_t y) {
  const std::size_t b = m.add_boolean();
  m.add(cp_linear{{{x, 1}, {y, -1}}, cp_model::min_value, -1, {{b, true}}});
  m.add(cp_linear{{{x, 1}, {y, -1}}, 0, cp_model::max_value, {{b, false}}});
  return b;
}

/// For interval I (c-th of v) and a consumer interval T: h(I, T) <=> I is the interval of v resident
/// when T starts, which forces end(I) >= start(T) + 1. Returns gt <=> end(I) <= start(T) + 1 (with
/// h), one of the ends I may take.
MEMSCHED_DECL std::size_t add_moccasin_use(moccasin_builder& b, std::size_t v, std::size_t c, const moccasin_model::interval_vars& T) {
  cp_model& m = b.model();
  const auto& ivs = b.mm.intervals[v];
  const auto& I = ivs[c];
  const std::size_t h = m.add_boolean(), gt = m.add_boolean();
  std::vector<cp_literal> conds{{I.presence, true}, {T.presence, true}, {moccasin_less(m, I.start, T.start), true}};
  if (c + 1 < ivs.size()) {
    // v's next interval is absent or starts after T.
    const auto& next = ivs[c + 1];
    const std::size_t after = moccasin_less(m, T.start, next.start), b2 = m.add_boolean();
    m.add(cp_clause{{{b2, false}, {next.presence, false}, {after, true}}});
    m.add(cp_clause{{{next.presence, true}, {b2, true}}});
    m.add(cp_clause{{{after, false}, {b2, true}}});
    conds.push_back({b2, true});
  }
  cp_clause all{{{h, true}}};
  for (const auto& l : conds) {
    m.add(cp_clause{{{h, false}, l}});
    all.literals.push_back(!l);
  }
  m.add(std::move(all));
  m.add(cp_linear{{{I.end, 1}, {T.start, -1}}, 1, cp_model::max_value, {{h, true}}});
  m.add(cp_clause{{{gt, false}, {h, true}}});
  m.add(cp_linear{{{I.end, 1}, {T.start, -1}}, cp_model::min_value, 1, {{gt, true}}});
  return gt;
}

// Tight ends (a dominance: freeing a value right after its last use never hurts). With
// h(I, T) <=> "interval I of v is the one resident when consumer interval T starts" (I and T
// present, I starts before T, v's next interval absent or starting after T):
//   h(I, T) -> end(I) >= start(T) + 1, and end(I) is start(I) + 1, some start(T) + 1 with h(I, T),
//   or (outputs) the end of time when I is v's last interval.
// Ends then follow from presences and starts: the search never enumerates them.
MEMSCHED_DECL void add_moccasin_tight_end(moccasin_builder& b, std::size_t v, std::size_t c) {
  cp_model& m = b.model();
  const auto& ivs = b.mm.intervals[v];
  const auto& I = ivs[c];
  cp_clause upper;
  const std::size_t self = m.add_boolean();
  m.add(cp_linear{{{I.end, 1}, {I.start, -1}}, cp_model::min_value, 1, {{self, true}}});
  upper.literals.push_back({self, true});
  bool skip = false;
  if (b.g.is_output(v)) {
    if (c + 1 == ivs.size()) skip = true;  // the end of time, fixed by the output constraint
    else upper.literals.push_back({ivs[c + 1].presence, false});
  }
  for (auto w : b.g.successors(v))
    for (const auto& T : b.mm.intervals[w]) upper.literals.push_back({add_moccasin_use(b, v, c, T), true});
  if (!skip) m.add(std::move(upper));
}

/// The objective: the capacity (phase 1), or the recomputations plus one computation of every
/// vertex (phase 2).
MEMSCHED_DECL void set_moccasin_objective(moccasin_builder& b) {
  cp_model& m = b.model();
  if (b.mm.phase == moccasin_phase::min_peak) {
    m.objective = {{b.mm.capacity, 1}};
    m.objective_offset = 0;
  } else {
    std::int64_t base = 0;
    for (std::size_t v = 0; v < b.g.size(); ++v) base += moccasin_cost_units(b.mm, b.g, v);
    m.objective_offset = base;
  }
}

/// Search hints: vertex by vertex in input order (extra intervals first), lengths and capacity last.
/// LNS groups: one per vertex (in input order), neighbours along the graph's edges.
MEMSCHED_DECL void set_moccasin_search_hints(moccasin_builder& b) {
  cp_model& m = b.model();
  const moccasin_model& mm = b.mm;
  const std::size_t n = b.g.size();
  m.groups.assign(n, {});
  m.group_neighbours.assign(n, {});
  m.group_intervals.assign(n, {});
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = mm.order[k];
    const auto& ivs = mm.intervals[v];
    for (std::size_t c = 1; c < ivs.size(); ++c) {
      m.branch_order.push_back(ivs[c].presence);
      m.branch_order.push_back(ivs[c].start);
    }
    for (const auto& iv : ivs) {
      m.group_intervals[k].push_back(iv.cp_interval);
      if (iv.presence != b.one) m.groups[k].push_back(iv.presence);
      if (iv.start != ivs[0].start) m.groups[k].push_back(iv.start);
      m.groups[k].push_back(iv.end);
      m.groups[k].push_back(iv.length);
    }
    for (auto u : b.g.predecessors(v)) m.group_neighbours[k].push_back(mm.position[u]);
    for (auto w : b.g.successors(v)) m.group_neighbours[k].push_back(mm.position[w]);
  }
  // Ends after every presence and start: the smallest end that covers the uses is the best one.
  for (std::size_t k = 0; k < n; ++k)
    for (const auto& iv : mm.intervals[mm.order[k]]) m.branch_order.push_back(iv.end);
  m.branch_order.insert(m.branch_order.end(), b.lengths.begin(), b.lengths.end());
  m.branch_order.push_back(mm.capacity);
}

MEMSCHED_DEF moccasin_model build_moccasin_model(const memory_graph& g, const std::vector<std::size_t>& order, std::int64_t budget,
                                                  moccasin_phase phase, std::vector<unsigned> counts, std::int64_t capacity_upper_bytes,
                                                  std::int64_t value_limit) {
  moccasin_model mm;
  const std::size_t n = g.size();
  mm.order = order;
  mm.position = moccasin_positions(n, order);
  mm.phase = phase;
  mm.slots = moccasin_model::slot(n, 0);  // n (n + 1) / 2
  if (value_limit < 0) value_limit = moccasin_capacity_limit(g, order, counts);
  set_moccasin_byte_unit(mm, g, counts, value_limit);
  mm.budget_units = std::min(budget / mm.byte_unit, value_limit);
  set_moccasin_cost_unit(mm, g, counts);

  moccasin_builder b{g, mm};
  cp_model& m = mm.model;
  b.horizon = mm.slots;
  const std::int64_t cap_hi = std::min(value_limit, std::max(mm.budget_units, mm.units(capacity_upper_bytes)));
  mm.capacity = phase == moccasin_phase::min_peak ? m.add_variable(mm.budget_units, cap_hi, "capacity") : m.add_constant(mm.budget_units, "capacity");
  b.one = m.add_constant(1, "one");
  mm.intervals.resize(n);
  b.memory = cp_cumulative{{}, 0, mm.capacity};
  for (std::size_t k = 0; k < n; ++k) add_moccasin_vertex(b, k, counts);
  add_moccasin_inputs_resident(b);
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t c = 0; c < mm.intervals[v].size(); ++c) add_moccasin_tight_end(b, v, c);
  if (!b.memory.tasks.empty()) m.add(std::move(b.memory));
  m.add(std::move(b.distinct_starts));
  set_moccasin_objective(b);
  set_moccasin_search_hints(b);
  return mm;
}

MEMSCHED_DEF std::optional<std::pair<std::vector<std::int64_t>, std::int64_t>> encode_moccasin(const memory_graph& g, const moccasin_model& mm,
                                                                                               const moccasin_schedule& s) {
  const std::size_t n = g.size();
  // Helper variables (tight-end booleans) stay unset: the backend completes them.
  std::vector<std::int64_t> vals(mm.model.num_variables(), cp_model::unset);
  std::vector<std::size_t> count(n, 0);
  std::vector<std::vector<std::int64_t>> ends(n);  // per vertex, per instance: end
  std::vector<std::vector<std::int64_t>> starts(n);
  for (const auto& [t, v] : s) {
    const std::size_t k = mm.position[v];
    // Slot t must be a slot of v: t = slot(j, k) for some stage j >= k.
    std::size_t j = k;
    while (j < g.size() && moccasin_model::slot(j, k) < t) ++j;
    if (j >= g.size() || moccasin_model::slot(j, k) != t) return std::nullopt;
    if (count[v] == 0 && j != k) return std::nullopt;
    if (count[v] >= mm.intervals[v].size()) return std::nullopt;
    for (auto u : g.predecessors(v)) {
      if (count[u] == 0) return std::nullopt;
      ends[u].back() = std::max(ends[u].back(), t + 1);
    }
    if (count[v] > 0 && ends[v].back() > t) return std::nullopt;  // still resident: cannot recompute
    ++count[v];
    starts[v].push_back(t);
    ends[v].push_back(t + 1);
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (count[v] == 0) return std::nullopt;
    if (g.is_output(v)) ends[v].back() = mm.slots;
  }
  // Inputs resident at use: the instance current at time t ends after t (checked by construction:
  // each use extends the current instance). A recompute after a use is fine.
  std::vector<std::pair<std::int64_t, std::int64_t>> delta;  // (time, +/- units)
  for (std::size_t v = 0; v < n; ++v) {
    const auto& ivs = mm.intervals[v];
    for (std::size_t c = 0; c < ivs.size(); ++c) {
      const auto& iv = ivs[c];
      if (c < count[v]) {
        vals[iv.presence] = 1;
        vals[iv.start] = starts[v][c];
        vals[iv.end] = ends[v][c];
        vals[iv.length] = ends[v][c] - starts[v][c];
        const std::int64_t b = mm.units(g.bytes(v)), w = mm.units(g.workspace(v));
        delta.emplace_back(starts[v][c], b + w);
        delta.emplace_back(starts[v][c] + 1, -w);
        delta.emplace_back(ends[v][c], -b);
      } else {
        const std::int64_t first = mm.model.variables()[iv.start].lower;
        vals[iv.presence] = 0;
        vals[iv.start] = first;
        vals[iv.end] = first + 1;
        vals[iv.length] = 1;
      }
    }
  }
  for (const auto& ivs : mm.intervals)
    for (const auto& iv : ivs)
      if (iv.workspace_end) vals[*iv.workspace_end] = vals[iv.start] + 1;
  std::sort(delta.begin(), delta.end());
  std::int64_t load = 0, peak = 0;
  for (std::size_t i = 0; i < delta.size();) {
    const std::int64_t t = delta[i].first;
    while (i < delta.size() && delta[i].first == t) load += delta[i++].second;
    peak = std::max(peak, load);
  }
  vals[mm.capacity] = mm.phase == moccasin_phase::min_peak ? std::max(peak, mm.budget_units) : mm.budget_units;
  return std::make_pair(std::move(vals), peak);
}

}  // namespace memsched::detail
