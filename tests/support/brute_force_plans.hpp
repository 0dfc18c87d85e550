#pragma once
// Test support: exact minimum-cost execution plans of tiny graphs by Dijkstra over plan states.
//
// Two plan spaces:
// - unrestricted: any valid execution_plan (compute / free in any order) within the budget;
// - staged for an input order o_0..o_{n-1} (the space of Checkmate's MILP and Moccasin's CP model):
//   stage t (t = 0..n-1) computes a subset of {o_0..o_t} in input-order position order, ending with
//   o_t, which is computed there for the first time; values may be freed at any point and carried
//   over from stage to stage. At the end every output is resident.
// Both searches are exact (frees are free edges, computes cost cost(v)) and return an optimal plan,
// so: unrestricted optimum <= staged optimum, and the staged optimum is what an exact solver of
// Checkmate's MILP (or Moccasin's CP model) for the same input order must find.

#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/execution_plan.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memsched::testing {

/// The outcome of a brute-force plan search: optimal with a plan, or infeasible (no plan fits).
struct brute_force_plan {
  solve_status status = solve_status::infeasible;
  double cost = std::numeric_limits<double>::infinity();  ///< Total compute cost of `plan`.
  execution_plan plan;
  std::size_t states = 0;  ///< States settled.
};

namespace detail {

/// Dijkstra over states packed into 64 bits. `expand(state, emit)` calls emit(next, cost, step)
/// for every move; `is_goal(state)` ends the search.
inline brute_force_plan dijkstra_plans(std::uint64_t start,
                                       const std::function<void(std::uint64_t, const std::function<void(std::uint64_t, double, plan_step)>&)>& expand,
                                       const std::function<bool(std::uint64_t)>& is_goal, std::size_t max_states) {
  struct entry {
    double cost;
    std::uint64_t state;
    bool operator>(const entry& o) const { return cost != o.cost ? cost > o.cost : state > o.state; }
  };
  struct info {
    double cost;
    std::uint64_t parent;
    plan_step step;
    bool settled;
  };
  std::unordered_map<std::uint64_t, info> seen;
  std::priority_queue<entry, std::vector<entry>, std::greater<>> queue;
  seen[start] = {0, start, {}, false};
  queue.push({0, start});
  brute_force_plan result;
  while (!queue.empty()) {
    const auto [cost, state] = queue.top();
    queue.pop();
    auto& here = seen[state];
    if (here.settled || cost > here.cost) continue;
    here.settled = true;
    if (++result.states > max_states) throw std::length_error("brute_force_plans: more than max_states states");
    if (is_goal(state)) {
      result.status = solve_status::optimal;
      result.cost = cost;
      std::vector<plan_step> steps;
      for (std::uint64_t s = state; s != start;) {
        const auto& i = seen[s];
        steps.push_back(i.step);
        s = i.parent;
      }
      result.plan.steps.assign(steps.rbegin(), steps.rend());
      return result;
    }
    expand(state, [&](std::uint64_t next, double step_cost, plan_step step) {
      const double c = cost + step_cost;
      auto [it, fresh] = seen.try_emplace(next, info{c, state, step, false});
      if (!fresh) {
        if (it->second.settled || c >= it->second.cost) return;
        it->second = {c, state, step, false};
      }
      queue.push({c, next});
    });
  }
  return result;
}

inline std::int64_t resident_bytes(const memory_graph& g, std::uint64_t mask) {
  std::int64_t live = 0;
  for (std::size_t v = 0; v < g.size(); ++v)
    if (mask >> v & 1) live += g.bytes(v);
  return live;
}

inline bool can_compute(const memory_graph& g, std::uint64_t resident, std::size_t v, std::int64_t budget) {
  if (resident >> v & 1) return false;
  for (auto p : g.predecessors(v))
    if (!(resident >> p & 1)) return false;
  return resident_bytes(g, resident) + g.bytes(v) + g.workspace(v) <= budget;
}

inline std::uint64_t output_mask(const memory_graph& g) {
  std::uint64_t m = 0;
  for (auto o : g.outputs()) m |= std::uint64_t{1} << o;
  return m;
}

}  // namespace detail

/// The cheapest valid plan within `budget` over all plans (Dijkstra over (resident, computed-ever)
/// sets). Exponential: graphs up to ~10 vertices. Throws std::length_error past max_states.
inline brute_force_plan brute_force_min_cost_plan(const memory_graph& g, std::int64_t budget, std::size_t max_states = 5'000'000) {
  const std::size_t n = g.size();
  if (n > 30) throw std::invalid_argument("brute_force_min_cost_plan: more than 30 vertices");
  const std::uint64_t all = (std::uint64_t{1} << n) - 1, outputs = detail::output_mask(g);
  // state: resident in the low n bits, computed-ever in the next n bits.
  auto expand = [&](std::uint64_t s, const std::function<void(std::uint64_t, double, plan_step)>& emit) {
    const std::uint64_t resident = s & all, computed = s >> n;
    for (std::size_t v = 0; v < n; ++v) {
      const std::uint64_t bit = std::uint64_t{1} << v;
      if (resident & bit) {
        emit(((computed) << n) | (resident & ~bit), 0.0, {plan_op::free, v});
      } else if (detail::can_compute(g, resident, v, budget)) {
        emit(((computed | bit) << n) | (resident | bit), g.cost(v), {plan_op::compute, v});
      }
    }
  };
  auto goal = [&](std::uint64_t s) { return (s >> n) == all && (s & outputs) == outputs; };
  return detail::dijkstra_plans(0, expand, goal, max_states);
}

/// The cheapest plan within `budget` in the staged plan space of `order` (see the file comment):
/// Dijkstra over (stage, position within the stage, resident set). Exponential in n.
/// Throws std::invalid_argument when `order` is not a topological order of g.
inline brute_force_plan brute_force_min_cost_staged_plan(const memory_graph& g, const std::vector<std::size_t>& order,
                                                         std::int64_t budget, std::size_t max_states = 5'000'000) {
  const std::size_t n = g.size();
  if (n > 24) throw std::invalid_argument("brute_force_min_cost_staged_plan: more than 24 vertices");
  std::vector<std::size_t> pos(n, n);
  if (order.size() != n) throw std::invalid_argument("brute_force_min_cost_staged_plan: order has the wrong length");
  for (std::size_t k = 0; k < n; ++k) {
    if (order[k] >= n || pos[order[k]] != n) throw std::invalid_argument("brute_force_min_cost_staged_plan: bad order");
    pos[order[k]] = k;
  }
  for (std::size_t v = 0; v < n; ++v)
    for (auto p : g.predecessors(v))
      if (pos[p] > pos[v]) throw std::invalid_argument("brute_force_min_cost_staged_plan: order is not topological");
  const std::uint64_t all = (std::uint64_t{1} << n) - 1, outputs = detail::output_mask(g);
  const std::uint64_t stride = n + 1;
  // state: (t * (n + 1) + k) << n | resident; t = stage, k = next position considered in stage t.
  auto pack = [&](std::size_t t, std::size_t k, std::uint64_t resident) { return ((t * stride + k) << n) | resident; };
  auto expand = [&](std::uint64_t s, const std::function<void(std::uint64_t, double, plan_step)>& emit) {
    const std::uint64_t resident = s & all, tk = s >> n;
    const std::size_t t = tk / stride, k = tk % stride;
    for (std::size_t v = 0; v < n; ++v)
      if (resident >> v & 1) emit(pack(t, k, resident & ~(std::uint64_t{1} << v)), 0.0, {plan_op::free, v});
    if (t == n) return;
    const std::size_t v = order[k];
    const bool can = detail::can_compute(g, resident, v, budget);
    if (k < t) {
      emit(pack(t, k + 1, resident), 0.0, {plan_op::free, n});  // skip o_k (a no-op step, dropped below)
      if (can) emit(pack(t, k + 1, resident | std::uint64_t{1} << v), g.cost(v), {plan_op::compute, v});
    } else if (can) {
      emit(pack(t + 1, 0, resident | std::uint64_t{1} << v), g.cost(v), {plan_op::compute, v});
    }
  };
  auto goal = [&](std::uint64_t s) { return (s >> n) == n * stride && (s & outputs) == outputs; };
  brute_force_plan r = detail::dijkstra_plans(0, expand, goal, max_states);
  std::erase_if(r.plan.steps, [&](const plan_step& st) { return st.node == n; });
  return r;
}

}  // namespace memsched::testing
