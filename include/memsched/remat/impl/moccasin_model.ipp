#pragma once
// The definitions of remat/detail/moccasin_model.hpp's functions declared MEMSCHED_DECL there.
// Header-only mode: that header includes this file at its end and they are compiled in the TUs that
// call them (core/config.hpp). With MEMSCHED_SEPARATE_COMPILATION only src/memsched.cpp includes it.

#include <memsched/remat/detail/moccasin_model.hpp>

namespace memsched::detail {

MEMSCHED_DEF moccasin_model build_moccasin_model(const memory_graph& g, const std::vector<std::size_t>& order, std::int64_t budget,
                                                  moccasin_phase phase, std::vector<unsigned> counts, std::int64_t capacity_upper_bytes,
                                                  std::int64_t value_limit) {
  moccasin_model mm;
  const std::size_t n = g.size();
  mm.order = order;
  mm.position = moccasin_positions(n, order);
  mm.phase = phase;
  mm.slots = moccasin_model::slot(n, 0);  // n (n + 1) / 2
  std::int64_t unit = 0;
  for (std::size_t v = 0; v < n; ++v) unit = std::gcd(unit, std::gcd(g.bytes(v), g.workspace(v)));
  mm.byte_unit = unit == 0 ? 1 : unit;
  if (value_limit < 0) value_limit = moccasin_capacity_limit(g, order, counts);
  {
    // Every load of the cumulative (a sum of sizes and workspaces, each rounded up by less than a
    // unit) must stay within value_limit: when the gcd unit does not ensure it, a coarser unit.
    double all = 0;
    unsigned most = 1;
    for (auto c : counts) most = std::max(most, c);
    for (std::size_t v = 0; v < n; ++v) all += static_cast<double>(g.bytes(v)) + static_cast<double>(g.workspace(v));
    const double room = static_cast<double>(value_limit) - 2.0 * static_cast<double>(n) * most - 2.0;
    if (all / static_cast<double>(mm.byte_unit) > room && room > 1) {
      mm.byte_unit = static_cast<std::int64_t>(std::ceil(all / room));
      mm.rounded = true;
    }
  }
  mm.budget_units = std::min(budget / mm.byte_unit, value_limit);
  // Costs: integers as they are when small enough, otherwise scaled to a resolution that fits.
  double max_cost = 0, total = 0;
  bool integral = true;
  unsigned max_count = 1;
  for (auto c : counts) max_count = std::max(max_count, c);
  for (std::size_t v = 0; v < n; ++v) {
    max_cost = std::max(max_cost, g.cost(v));
    total += g.cost(v);
    integral = integral && g.cost(v) == std::floor(g.cost(v));
  }
  const double room = 1e9 / std::max<double>(1.0, static_cast<double>(n) * max_count);
  mm.cost_unit = (integral && max_cost <= room) ? 1.0 : std::max(max_cost, 1e-300) / std::min(1e6, room);
  auto cost_units = [&](std::size_t v) -> std::int64_t {
    if (g.cost(v) <= 0) return 0;
    return std::max<std::int64_t>(1, std::llround(g.cost(v) / mm.cost_unit));
  };

  cp_model& m = mm.model;
  const std::int64_t H = mm.slots;
  const std::int64_t cap_hi = std::min(value_limit, std::max(mm.budget_units, mm.units(capacity_upper_bytes)));
  mm.capacity = phase == moccasin_phase::min_peak ? m.add_variable(mm.budget_units, cap_hi, "capacity") : m.add_constant(mm.budget_units, "capacity");
  const std::size_t one = m.add_constant(1, "one");
  mm.intervals.resize(n);
  cp_cumulative memory{{}, 0, mm.capacity};
  cp_all_different distinct_starts;
  std::vector<std::size_t> lengths;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = order[k];
    const std::size_t later_stages = n - 1 - k;
    const unsigned count = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, counts[v]), 1 + later_stages));
    // Ends: just after a slot of v or of a consumer, or the end of time.
    std::vector<std::int64_t> ends{H};
    for (std::size_t j = k; j < n; ++j) ends.push_back(moccasin_model::slot(j, k) + 1);
    for (auto w : g.successors(v))
      for (std::size_t j = mm.position[w]; j < n; ++j) ends.push_back(moccasin_model::slot(j, mm.position[w]) + 1);
    std::vector<std::int64_t> later;
    for (std::size_t j = k + 1; j < n; ++j) later.push_back(moccasin_model::slot(j, k));
    for (unsigned c = 0; c < count; ++c) {
      moccasin_model::interval_vars iv;
      const std::string name = "v" + std::to_string(g.id(v)) + "_" + std::to_string(c);
      iv.presence = c == 0 ? one : m.add_boolean("a_" + name);
      iv.start = c == 0 ? m.add_constant(moccasin_model::slot(k, k), "s_" + name) : m.add_variable(later, "s_" + name);
      iv.end = m.add_variable(ends, "e_" + name);
      iv.length = m.add_variable(1, H, "l_" + name);
      iv.cp_interval = m.add_interval({iv.start, iv.length, iv.end, c == 0 ? std::nullopt : std::optional<std::size_t>(iv.presence), name});
      lengths.push_back(iv.length);
      if (g.bytes(v) > 0) memory.tasks.push_back({iv.cp_interval, mm.units(g.bytes(v))});
      if (g.workspace(v) > 0) {
        const std::size_t we = m.add_variable(1, H, "w_" + name);
        m.add(cp_linear{{{we, 1}, {iv.start, -1}}, 1, 1, {}});
        const std::size_t wi = m.add_interval({iv.start, one, we, c == 0 ? std::nullopt : std::optional<std::size_t>(iv.presence), "ws_" + name});
        memory.tasks.push_back({wi, mm.units(g.workspace(v))});
        iv.workspace_end = we;
        lengths.push_back(we);
      }
      distinct_starts.variables.push_back(iv.start);
      distinct_starts.presence.push_back(iv.presence);
      if (c > 0) {
        const auto& prev = mm.intervals[v].back();
        m.add(cp_clause{{{iv.presence, false}, {prev.presence, true}}});  // a_c -> a_{c-1}
        m.add(cp_linear{{{iv.start, 1}, {prev.end, -1}}, 0, cp_model::max_value, {{iv.presence, true}}});  // after the previous
        // Absent intervals sit at their earliest slot with length 1 (no symmetric assignments).
        m.add(cp_linear{{{iv.start, 1}}, later.front(), later.front(), {{iv.presence, false}}});
        m.add(cp_linear{{{iv.end, 1}}, later.front() + 1, later.front() + 1, {{iv.presence, false}}});
        m.add(cp_linear{{{iv.length, 1}}, 1, 1, {{iv.presence, false}}});
        m.objective.push_back({iv.presence, cost_units(v)});
      }
      mm.intervals[v].push_back(iv);
    }
    // Outputs: the last present interval lasts to the end of time.
    if (g.is_output(v)) {
      const auto& ivs = mm.intervals[v];
      for (std::size_t c = 0; c < ivs.size(); ++c) {
        std::vector<cp_literal> when{{ivs[c].presence, true}};
        if (c + 1 < ivs.size()) when.push_back({ivs[c + 1].presence, false});
        m.add(cp_linear{{{ivs[c].end, 1}}, H, H, when});
      }
    }
  }
  // Every present interval of v has, for each input u, an interval of u resident at its start.
  for (std::size_t v = 0; v < n; ++v)
    for (const auto& iv : mm.intervals[v])
      for (auto u : g.predecessors(v)) {
        cp_cover c{iv.cp_interval, {}};
        for (const auto& ivu : mm.intervals[u]) c.candidates.push_back(ivu.cp_interval);
        m.add(std::move(c));
      }
  // Tight ends (a dominance: freeing a value right after its last use never hurts). With
  // h(I, T) <=> "interval I of v is the one resident when consumer interval T starts" (I and T
  // present, I starts before T, v's next interval absent or starting after T):
  //   h(I, T) -> end(I) >= start(T) + 1, and end(I) is start(I) + 1, some start(T) + 1 with h(I, T),
  //   or (outputs) the end of time when I is v's last interval.
  // Ends then follow from presences and starts: the search never enumerates them.
  auto full_less = [&](std::size_t x, std::size_t y) {  // b <=> x < y
    const std::size_t b = m.add_boolean();
    m.add(cp_linear{{{x, 1}, {y, -1}}, cp_model::min_value, -1, {{b, true}}});
    m.add(cp_linear{{{x, 1}, {y, -1}}, 0, cp_model::max_value, {{b, false}}});
    return b;
  };
  for (std::size_t v = 0; v < n; ++v) {
    const auto& ivs = mm.intervals[v];
    for (std::size_t c = 0; c < ivs.size(); ++c) {
      const auto& I = ivs[c];
      cp_clause upper;
      const std::size_t self = m.add_boolean();
      m.add(cp_linear{{{I.end, 1}, {I.start, -1}}, cp_model::min_value, 1, {{self, true}}});
      upper.literals.push_back({self, true});
      bool skip = false;
      if (g.is_output(v)) {
        if (c + 1 == ivs.size()) skip = true;  // the end of time, fixed by the output constraint
        else upper.literals.push_back({ivs[c + 1].presence, false});
      }
      for (auto w : g.successors(v))
        for (const auto& T : mm.intervals[w]) {
          const std::size_t h = m.add_boolean(), gt = m.add_boolean();
          std::vector<cp_literal> conds{{I.presence, true}, {T.presence, true}, {full_less(I.start, T.start), true}};
          if (c + 1 < ivs.size()) {
            const auto& next = ivs[c + 1];
            const std::size_t after = full_less(T.start, next.start), b2 = m.add_boolean();
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
          upper.literals.push_back({gt, true});
        }
      if (!skip) m.add(std::move(upper));
    }
  }
  if (!memory.tasks.empty()) m.add(std::move(memory));
  m.add(std::move(distinct_starts));
  if (phase == moccasin_phase::min_peak) {
    m.objective = {{mm.capacity, 1}};
    m.objective_offset = 0;
  } else {
    std::int64_t base = 0;
    for (std::size_t v = 0; v < n; ++v) base += cost_units(v);
    m.objective_offset = base;
  }
  // Search hints: vertex by vertex in input order (extra intervals first), lengths and capacity last.
  // LNS groups: one per vertex (in input order), neighbours along the graph's edges.
  m.groups.assign(n, {});
  m.group_neighbours.assign(n, {});
  m.group_intervals.assign(n, {});
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = order[k];
    const auto& ivs = mm.intervals[v];
    for (std::size_t c = 1; c < ivs.size(); ++c) {
      m.branch_order.push_back(ivs[c].presence);
      m.branch_order.push_back(ivs[c].start);
    }
    for (const auto& iv : ivs) {
      m.group_intervals[k].push_back(iv.cp_interval);
      if (iv.presence != one) m.groups[k].push_back(iv.presence);
      if (iv.start != ivs[0].start) m.groups[k].push_back(iv.start);
      m.groups[k].push_back(iv.end);
      m.groups[k].push_back(iv.length);
    }
    for (auto u : g.predecessors(v)) m.group_neighbours[k].push_back(mm.position[u]);
    for (auto w : g.successors(v)) m.group_neighbours[k].push_back(mm.position[w]);
  }
  // Ends after every presence and start: the smallest end that covers the uses is the best one.
  for (std::size_t k = 0; k < n; ++k)
    for (const auto& iv : mm.intervals[order[k]]) m.branch_order.push_back(iv.end);
  m.branch_order.insert(m.branch_order.end(), lengths.begin(), lengths.end());
  m.branch_order.push_back(mm.capacity);
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
