#pragma once
// The lowest level of HiRemate's H-Solver (Gusak et al. 2024, section 3.2): one forward subgraph
// of an H-Partition, with its backward part taken from the training roles, is solved on its own
// for a range of memory budgets; each solution is an option (forward schedule, backward schedule,
// what stays resident between them, time and peak), and the options are thinned to the N_o whose
// memory peaks lie farthest apart. The higher levels (H-ILP) are not here yet.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/sweep.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memsched {

/// A forward subgraph S of a training graph as a problem of its own. Vertices: the values S reads
/// from outside (forward inputs, including those only its gradients read), S, a barrier standing
/// for the rest of the network (role loss; it reads S's outputs), the gradients S's backward part
/// reads from outside (after the barrier), and the backward vertices of S (grad_of in S). The
/// outside values are interface: the level above owns them, so they have bytes 0 and cost 0.
struct hiremate_subgraph {
  memory_graph graph;
  std::vector<std::size_t> original;  ///< Vertex of the training graph per vertex (npos for the barrier).
  std::size_t barrier = 0;
  std::vector<char> interface;        ///< 1 for the outside values (sources of bytes 0 and cost 0).
  std::size_t forward_vertices = 0, backward_vertices = 0;
};

/// Builds the problem of the forward vertices `forward` of `training`; `barrier_workspace` is the
/// barrier's workspace (memory the rest of the network uses then). O(sum of degrees of S and
/// its gradients + n). Throws std::invalid_argument naming the vertex when the graph has no
/// training roles, a vertex is out of range, not forward, or listed twice.
[[nodiscard]] inline hiremate_subgraph make_hiremate_subgraph(const memory_graph& training, std::span<const std::size_t> forward,
                                                              std::int64_t barrier_workspace = 0) {
  const std::string where = "make_hiremate_subgraph: ";
  if (!training.has_training_roles()) throw std::invalid_argument(where + "the graph has no training roles");
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  const std::size_t n = training.size();
  // local[v]: index in the subgraph; kind[v]: 1 forward of S, 2 backward of S.
  std::vector<std::size_t> local(n, none);
  std::vector<char> kind(n, 0);
  for (std::size_t v : forward) {
    if (v >= n) throw std::invalid_argument(where + "vertex " + std::to_string(v) + " is not below " + std::to_string(n));
    if (!training.is_forward(v)) throw std::invalid_argument(where + training.label(v) + " is not a forward vertex");
    if (kind[v]) throw std::invalid_argument(where + training.label(v) + " is listed twice");
    kind[v] = 1;
  }
  std::vector<std::size_t> S, B, inputs, grads;
  for (auto v : training.topological_order()) {
    if (kind[v] == 1) S.push_back(v);
    if (training.role(v) == node_role::backward) {
      const auto f = training.grad_of(v);
      if (f && kind[*f] == 1) kind[v] = 2, B.push_back(v);
    }
  }
  std::vector<char> seen(n, 0);
  for (const auto* part : {&S, &B})
    for (auto v : *part)
      for (auto p : training.predecessors(v))
        if (!kind[p] && !seen[p]) {
          seen[p] = 1;
          (training.is_forward(p) ? inputs : grads).push_back(p);
        }
  std::sort(inputs.begin(), inputs.end());
  std::sort(grads.begin(), grads.end());

  hiremate_subgraph sub;
  memory_graph_data d;
  auto add = [&](std::size_t v, std::int64_t bytes, double cost, std::int64_t workspace, node_role role) {
    const std::size_t i = d.num_nodes++;
    if (v != none) local[v] = i;
    sub.original.push_back(v);
    sub.interface.push_back(0);
    d.bytes.push_back(bytes);
    d.cost.push_back(cost);
    d.workspace.push_back(workspace);
    d.roles.push_back(role);
    d.grad_of.emplace_back();
    d.ids.push_back(v == none ? -1 : static_cast<std::int64_t>(training.id(v)));
    return i;
  };
  for (auto v : inputs) sub.interface[add(v, 0, 0, 0, node_role::forward)] = 1;
  for (auto v : S) add(v, training.bytes(v), training.cost(v), training.workspace(v), node_role::forward);
  sub.barrier = add(none, 0, 0, barrier_workspace, node_role::loss);
  for (auto v : grads) sub.interface[add(v, 0, 0, 0, node_role::backward)] = 1;
  for (auto v : B) {
    const auto i = add(v, training.bytes(v), training.cost(v), training.workspace(v), node_role::backward);
    d.grad_of[i] = local[*training.grad_of(v)];
  }
  sub.forward_vertices = S.size();
  sub.backward_vertices = B.size();
  // Edges of S and its gradients; outputs of S feed the barrier, which precedes the backward part.
  std::vector<std::size_t> outputs;
  bool barrier_reads = false;
  for (const auto* part : {&S, &B})
    for (auto v : *part) {
      for (auto p : training.predecessors(v)) d.edges.emplace_back(local[p], local[v]);
      bool read_outside = training.is_output(v);
      for (auto s : training.successors(v)) read_outside = read_outside || (!kind[s] && (kind[v] == 2 || training.role(s) != node_role::backward));
      if (read_outside && kind[v] == 1) d.edges.emplace_back(local[v], sub.barrier), barrier_reads = true;
      if (read_outside && kind[v] == 2) outputs.push_back(local[v]);
      if (kind[v] == 2) d.edges.emplace_back(sub.barrier, local[v]);
    }
  if (!barrier_reads && !S.empty()) d.edges.emplace_back(local[S.back()], sub.barrier);
  for (auto v : grads) d.edges.emplace_back(sub.barrier, local[v]);
  std::sort(outputs.begin(), outputs.end());
  d.outputs = outputs;
  sub.graph = memory_graph(std::move(d), "make_hiremate_subgraph");
  return sub;
}

/// The vertex correspondence between the problems of two groups of one class (hiremate_partition):
/// for every vertex of `from`, the vertex of `to` playing its role, so a plan solved once for a
/// class serves every group of it (map each step's node). `from_vertices` / `to_vertices` are the
/// groups' forward vertices in canonical order (hiremate_group::vertices): the i-th ones
/// correspond; gradients follow their forward vertex, the barriers each other, and interface
/// values the vertices that read them. O((n + m) log m) for the problems' sizes.
/// Throws std::invalid_argument when the two problems are not the same computation under that
/// correspondence (different sizes, bytes, costs, workspaces, roles or edges).
[[nodiscard]] inline std::vector<std::size_t> hiremate_subgraph_map(const hiremate_subgraph& from,
                                                                    std::span<const std::size_t> from_vertices, const hiremate_subgraph& to,
                                                                    std::span<const std::size_t> to_vertices) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("hiremate_subgraph_map: " + what); };
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  const memory_graph& a = from.graph;
  const memory_graph& b = to.graph;
  if (a.size() != b.size() || a.num_edges() != b.num_edges() || from_vertices.size() != to_vertices.size())
    fail("the problems differ in size");
  std::unordered_map<std::size_t, std::size_t> local_to;  // training vertex -> vertex of `to`
  for (std::size_t j = 0; j < b.size(); ++j)
    if (!to.interface[j] && j != to.barrier) local_to.emplace(to.original[j], j);
  std::unordered_map<std::size_t, std::size_t> forward_map;  // training vertex of from's S -> of to's S
  for (std::size_t i = 0; i < from_vertices.size(); ++i) forward_map.emplace(from_vertices[i], to_vertices[i]);
  // Gradients of `to`, by the forward vertex they are the gradient of (in topological order).
  std::unordered_map<std::size_t, std::vector<std::size_t>> grads_to;
  for (auto j : b.topological_order())
    if (!to.interface[j] && b.role(j) == node_role::backward) grads_to[to.original[*b.grad_of(j)]].push_back(j);
  std::unordered_map<std::size_t, std::size_t> grads_used;
  std::vector<std::size_t> map(a.size(), none);
  map[from.barrier] = to.barrier;
  for (auto i : a.topological_order()) {
    if (from.interface[i] || i == from.barrier) continue;
    const std::size_t v = from.original[i];
    if (a.role(i) == node_role::forward) {
      const auto f = forward_map.find(v);
      if (f == forward_map.end() || !local_to.count(f->second)) fail("vertex " + std::to_string(v) + " has no counterpart");
      map[i] = local_to.at(f->second);
    } else {
      const auto f = forward_map.find(from.original[*a.grad_of(i)]);
      if (f == forward_map.end() || !grads_to.count(f->second)) fail("the gradient " + std::to_string(v) + " has no counterpart");
      auto& list = grads_to.at(f->second);
      auto& k = grads_used[f->second];
      if (k >= list.size()) fail("the gradient " + std::to_string(v) + " has no counterpart");
      map[i] = list[k++];
    }
  }
  // Interface values: by the (mapped) vertices that read them; equal readers are interchangeable.
  std::map<std::pair<node_role, std::vector<std::size_t>>, std::vector<std::size_t>> free_to;
  for (std::size_t j = 0; j < b.size(); ++j)
    if (to.interface[j]) {
      const auto succ = b.successors(j);
      free_to[{b.role(j), std::vector<std::size_t>(succ.begin(), succ.end())}].push_back(j);
    }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!from.interface[i]) continue;
    std::vector<std::size_t> readers;
    for (auto s : a.successors(i)) readers.push_back(map[s]);
    std::sort(readers.begin(), readers.end());
    auto it = free_to.find({a.role(i), readers});
    if (it == free_to.end() || it->second.empty()) fail("an interface value has no counterpart");
    map[i] = it->second.front();
    it->second.erase(it->second.begin());
  }
  std::vector<std::size_t> image = map;
  std::sort(image.begin(), image.end());
  if (std::adjacent_find(image.begin(), image.end()) != image.end()) fail("two vertices have one counterpart");
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::size_t j = map[i];
    if (j == none || a.bytes(i) != b.bytes(j) || a.cost(i) != b.cost(j) || a.workspace(i) != b.workspace(j) || a.role(i) != b.role(j) ||
        a.is_output(i) != b.is_output(j))
      fail("vertex " + std::to_string(i) + " differs from its counterpart");
    for (auto s : a.successors(i)) {
      const auto succ = b.successors(j);
      if (!std::binary_search(succ.begin(), succ.end(), static_cast<memory_graph::vertex>(map[s])))
        fail("an edge of vertex " + std::to_string(i) + " has no counterpart");
    }
  }
  return map;
}

/// One way to run a subgraph: a plan of its problem (hiremate_subgraph indices) within `budget`.
struct hiremate_option {
  std::int64_t budget = 0;          ///< The budget it was solved for.
  std::int64_t peak_bytes = 0;      ///< Simulated peak of the plan.
  double cost = 0;                  ///< Total cost (forward + backward, recomputations included).
  double forward_cost = 0, backward_cost = 0;  ///< Before / after the barrier.
  std::int64_t forward_peak = 0, backward_peak = 0;
  std::int64_t resident_bytes = 0;  ///< Kept between the forward and the backward part (the paper's phantoms and outputs).
  std::vector<std::size_t> resident;  ///< Those values (subgraph indices).
  execution_plan plan;
  std::vector<std::int64_t> transient;  ///< Simulated bytes in use during each step of `plan` (plan_simulation::transient).
  std::size_t barrier_step = 0;     ///< Index of the barrier's compute step: the forward schedule is before it.
};

namespace detail::hiremate {

/// The defaults a class's solve has, whether called directly (hiremate_subgraph_options_config)
/// or by the hierarchy (hiremate_tuning): one value each.
inline constexpr std::size_t default_budgets = 8, default_max_options = 8, default_resident_levels = 3;
inline constexpr std::uint64_t default_serenity_states = std::uint64_t{1} << 16;

}  // namespace detail::hiremate

/// Options of hiremate_subgraph_options.
struct hiremate_subgraph_options_config {
  std::size_t budgets = detail::hiremate::default_budgets;  ///< Budgets solved, evenly spaced from the per-node lower bound to the no-remat peak (>= 1).
  std::size_t max_options = detail::hiremate::default_max_options;  ///< N_o: options kept (>= 1).
  /// Extra solves per budget b that hold less between the forward and the backward part: the
  /// barrier is given a workspace of b * k / (resident_levels + 1), k = 1..resident_levels, so
  /// the plan keeps at most the rest (the top level needs such options when many groups hold
  /// values at once). 0: none.
  std::size_t resident_levels = detail::hiremate::default_resident_levels;
  best_heuristic_options heuristics = {};  ///< How each budget is solved.
  /// One more option without recomputation: every vertex once, in the least-peak order
  /// serenity_order finds with at most this many stored states (a counted limit: the same option
  /// on every machine), kept when its peak is below the topological order's and it runs every
  /// forward vertex before the barrier. 0: none. The order matters where the peak is in the
  /// backward part of a branchy block (inception blocks, say); a chain's order is fixed.
  std::uint64_t serenity_states = detail::hiremate::default_serenity_states;
  /// No solve starts once this much time has passed since the call; the options found so far are
  /// kept (hiremate_subgraph_result::stopped). Empty: no limit.
  std::optional<std::chrono::duration<double>> time_limit;
};

/// Throws: option_error naming the field when budgets or max_options is 0. Every resident_levels
/// and serenity_states is valid (0: none); `heuristics` is checked where it is used.
inline void check_hiremate_subgraph_options(const hiremate_subgraph_options_config& config) {
  const auto fail = [](const char* option, const char* requirement) { throw option_error("hiremate_subgraph_options", option, requirement); };
  if (config.budgets == 0) fail("budgets", "must be >= 1");
  if (config.max_options == 0) fail("max_options", "must be >= 1");
}

/// The options of one subgraph.
struct [[nodiscard]] hiremate_subgraph_result {
  solve_status status = solve_status::no_solution;  ///< feasible when at least one option was found.
  hiremate_subgraph sub;
  std::vector<hiremate_option> options;  ///< Increasing peak; no option dominates another (in peak and cost, and resident bytes with squeezed solves).
  /// The lowest peak without recomputation (the topological order's, or Serenity's when lower:
  /// config.serenity_states) and the per-node lower bound: the budgets are spread between them.
  std::int64_t no_remat_peak = 0, lower_bound = 0;
  std::size_t solves = 0, found = 0;     ///< Budgets solved; Pareto options before thinning.
  /// Of the solves, how many `solve` settled with a proof: status optimal (the plan is the
  /// cheapest of its problem at that budget; only when the simulator accepts it) or infeasible (no
  /// plan fits). The heuristics prove only the latter (a budget below the per-node bound).
  std::size_t proven = 0;
  bool stopped = false;                  ///< config.time_limit left budgets unsolved.
  /// The option along Serenity's order was added (config.serenity_states: its peak is below the
  /// topological order's); no_remat_peak is its peak.
  bool serenity_lower = false;
  std::string message;
};

namespace detail::hiremate {

/// The paper's thinning: keep the lowest and the highest peak, then repeatedly the option whose
/// peak is farthest from every kept one (ties: the lower peak). `peaks` ascending; returns kept
/// indices, ascending. O(k * n).
inline std::vector<std::size_t> thin(const std::vector<std::int64_t>& peaks, std::size_t keep) {
  const std::size_t n = peaks.size();
  if (n <= keep) {
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;
    return all;
  }
  std::vector<char> kept(n, 0);
  std::vector<std::size_t> out{0};
  kept[0] = 1;
  if (keep >= 2) kept[n - 1] = 1, out.push_back(n - 1);
  while (out.size() < keep) {
    std::size_t best = n;
    std::int64_t best_gap = -1;
    for (std::size_t i = 0; i < n; ++i) {
      if (kept[i]) continue;
      std::int64_t gap = std::numeric_limits<std::int64_t>::max();
      for (auto j : out) gap = std::min(gap, peaks[i] > peaks[j] ? peaks[i] - peaks[j] : peaks[j] - peaks[i]);
      if (gap > best_gap) best_gap = gap, best = i;
    }
    kept[best] = 1;
    out.push_back(best);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The option of a valid plan of `sub`'s problem, split at the barrier's first compute step: the
/// forward part before it, the backward part from it on, the resident values those before it
/// (the one barrier split of the H-Solver). `sim` is the plan's simulation. O(plan + n).
inline hiremate_option make_option(const hiremate_subgraph& sub, execution_plan plan, const plan_simulation& sim, std::int64_t budget) {
  const memory_graph& g = sub.graph;
  hiremate_option o;
  o.budget = budget;
  o.peak_bytes = sim.peak_bytes;
  o.cost = sim.total_cost;
  o.plan = std::move(plan);
  o.transient = sim.transient;
  std::vector<char> live(g.size(), 0);
  bool after = false;
  for (std::size_t s = 0; s < o.plan.steps.size(); ++s) {
    const auto& step = o.plan.steps[s];
    if (step.op == plan_op::compute && step.node == sub.barrier && !after) {
      after = true;
      o.barrier_step = s;
      o.resident_bytes = sim.live_before[s];
      for (std::size_t v = 0; v < g.size(); ++v)
        if (live[v] && g.bytes(v) > 0) o.resident.push_back(v);
    }
    live[step.node] = step.op == plan_op::compute;
    if (step.op == plan_op::compute) {
      (after ? o.backward_cost : o.forward_cost) += g.cost(step.node);
      auto& peak = after ? o.backward_peak : o.forward_peak;
      peak = std::max(peak, sim.transient[s]);
    }
  }
  return o;
}

}  // namespace detail::hiremate

/// Solves the subgraph of the forward vertices `forward` of `training` for `config.budgets`
/// budgets between its per-node lower bound and its no-remat peak (each distinct one once; none
/// started after config.time_limit), calling `solve(problem,
/// budget)` (any strategy: a remat_result for the memory_graph of make_hiremate_subgraph, for
/// example checkmate_milp_plan with a backend), plus config.resident_levels squeezed solves per
/// budget (the barrier given a workspace), keeps the options no other beats in both peak and cost
/// (with squeezed solves: in peak, cost and resident bytes), and thins them to config.max_options
/// (thin). With config.serenity_states, the no-recomputation plan along serenity_order's
/// order is one more option where its peak is below the topological order's, and the budgets end
/// at that peak. Every plan is re-simulated on the problem itself; one the simulator rejects or
/// that exceeds its budget is dropped. Deterministic when `solve` is and no time limit stops
/// Serenity's search.
/// Complexity: budgets x (1 + resident_levels) x solve on a graph of |S| + |grad S| + interface
/// vertices, plus one serenity_order storing at most config.serenity_states states.
/// Throws: what check_hiremate_subgraph_options throws (before any work); what
/// make_hiremate_subgraph and `solve` throw.
template <class Solve>
  requires std::is_invocable_r_v<remat_result, Solve&, const memory_graph&, std::int64_t>
[[nodiscard]] hiremate_subgraph_result hiremate_subgraph_options(const memory_graph& training, std::span<const std::size_t> forward,
                                                                 const hiremate_subgraph_options_config& config, Solve&& solve) {
  check_hiremate_subgraph_options(config);
  const auto start = std::chrono::steady_clock::now();
  hiremate_subgraph_result r;
  r.sub = make_hiremate_subgraph(training, forward);
  const memory_graph& g = r.sub.graph;
  const auto& topo = g.topological_order();
  const std::vector<std::size_t> order(topo.begin(), topo.end());
  r.no_remat_peak = simulate_order(g, order).peak_bytes;
  std::vector<hiremate_option> all;
  // Serenity's order: the same computations at a lower peak, where there is one.
  if (config.serenity_states > 0) {
    serenity_options so{.max_states = config.serenity_states};
    if (config.time_limit) so.time_limit = *config.time_limit;
    order_result least = serenity_order(g, so);
    // The outside inputs (0 bytes, no predecessors) first, as in the other options: the same peak.
    std::ranges::stable_partition(least.order, [&](std::size_t v) { return r.sub.interface[v] && g.in_degree(v) == 0; });
    const auto after_barrier = std::ranges::find(least.order, r.sub.barrier);
    const bool forward_first = std::none_of(after_barrier, least.order.end(), [&](std::size_t v) { return g.is_forward(v); });
    if (least.peak_bytes < r.no_remat_peak && forward_first) {
      execution_plan plan = plan_from_computes(g, std::span<const std::size_t>(least.order));
      plan_simulation sim;
      if (detail::check_plan(g, plan, &sim).valid && sim.peak_bytes < r.no_remat_peak) {
        r.no_remat_peak = sim.peak_bytes;
        r.serenity_lower = true;
        all.push_back(detail::hiremate::make_option(r.sub, std::move(plan), sim, sim.peak_bytes));
      }
    }
  }
  r.lower_bound = std::min(peak_lower_bound(g), r.no_remat_peak);
  // One solve of `problem` (g itself, or g with the barrier's workspace): kept when the simulator
  // accepts the plan on g within the budget (never trust a plan it rejects).
  auto out_of_time = [&] {
    r.stopped = r.stopped || (config.time_limit && std::chrono::steady_clock::now() - start >= *config.time_limit);
    return r.stopped;
  };
  auto try_budget = [&](const memory_graph& problem, std::int64_t budget) {
    ++r.solves;
    remat_result res = solve(problem, budget);
    r.proven += res.status == solve_status::infeasible;
    if (!has_solution(res.status)) return;
    plan_simulation sim;
    if (!detail::check_plan(g, res.plan, &sim).valid || sim.peak_bytes > budget) return;
    r.proven += res.status == solve_status::optimal;
    all.push_back(detail::hiremate::make_option(r.sub, std::move(res.plan), sim, budget));
  };
  // Equal budgets (lower bound == no-remat peak, or a narrow range) are solved once: a repeat only
  // adds an identical option that the Pareto step drops.
  std::vector<std::int64_t> budgets = detail::spread_budgets(r.lower_bound, r.no_remat_peak, config.budgets);
  budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
  for (const std::int64_t budget : budgets)
    if (!out_of_time()) try_budget(g, budget);
  for (std::size_t k = 1; k <= config.resident_levels; ++k)
    for (const std::int64_t budget : budgets) {
      if (out_of_time()) break;
      const std::int64_t w = static_cast<std::int64_t>(static_cast<long double>(budget) * k / (config.resident_levels + 1));
      try_budget(make_hiremate_subgraph(training, forward, w).graph, budget);
    }
  // Pareto: by peak, keep an option only when it is cheaper than every lower-peak one or, with
  // resident_levels, holds less than every cheaper one of no higher peak.
  const bool by_resident = config.resident_levels > 0;
  std::sort(all.begin(), all.end(), [by_resident](const hiremate_option& a, const hiremate_option& b) {
    if (a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
    if (a.cost != b.cost || !by_resident) return a.cost < b.cost;
    return a.resident_bytes < b.resident_bytes;
  });
  std::vector<hiremate_option> front;
  for (auto& o : all) {
    bool dominated = false;
    for (const auto& f : front)
      dominated = dominated || (f.cost <= o.cost && (!by_resident || f.resident_bytes <= o.resident_bytes));
    if (!dominated) front.push_back(std::move(o));
  }
  r.found = front.size();
  std::vector<std::int64_t> peaks;
  for (const auto& o : front) peaks.push_back(o.peak_bytes);
  for (auto i : detail::hiremate::thin(peaks, config.max_options)) r.options.push_back(std::move(front[i]));
  r.status = r.options.empty() ? (r.stopped ? solve_status::time_limit : solve_status::no_solution) : solve_status::feasible;
  if (r.options.empty())
    r.message = r.stopped ? "the time limit stopped the budgets before any gave a plan" : "no budget between the lower bound and the no-remat peak gave a plan";
  return r;
}

/// hiremate_subgraph_options solving each budget with best_heuristic_plan(problem, budget,
/// config.heuristics). Throws also what check_best_heuristic_options throws for config.heuristics
/// (before any work).
[[nodiscard]] inline hiremate_subgraph_result hiremate_subgraph_options(const memory_graph& training, std::span<const std::size_t> forward,
                                                                        const hiremate_subgraph_options_config& config = {}) {
  check_best_heuristic_options(config.heuristics);
  return hiremate_subgraph_options(training, forward, config, [&](const memory_graph& g, std::int64_t budget) {
    return best_heuristic_plan(g, budget, config.heuristics);
  });
}

}  // namespace memsched
