#pragma once
// HiRemate's H-Solver (Gusak et al. 2024, section 3.2), two levels by default (options.levels: a
// higher level's groups solved by nested hierarchies): the forward graph is
// partitioned (hiremate_partition), every distinct class of the lowest level is solved once for a
// range of budgets (hiremate_subgraph_options), and one option per group is chosen so that the
// whole schedule fits the budget at least extra cost. The choice is a native dynamic program over
// the groups in topological order (no MILP backend needed), a second one sees the groups as the
// stages of a chain and may also run a group's forward part without keeping anything, to run it
// again before its backward part (Rotor's and Rockmate's checkpointing over the options:
// detail/hiremate_chain.hpp), and with a MILP backend (options.top_solver) a third one is the
// paper's H-ILP over any DAG of groups (appendix B, detail/hiremate_hilp.hpp), started from the
// other two's schedules; the cheapest plan wins.
// The chosen options expand into a compute sequence of the original graph (forward schedules in
// order, backward schedules in reverse), which the simulator re-checks; when inputs shared
// between groups (0 bytes in the subgraph problems) push it over the budget, the choice is redone
// under a tighter budget (the repair pass), and a plan over budget is never returned as feasible.

#include <memsched/core/config.hpp>
#include <memsched/core/errors.hpp>
#include <memsched/core/observer.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/task_pool.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/detail/simulated_result.hpp>
#include <memsched/remat/dtr.hpp>
#include <memsched/remat/detail/call_deadline.hpp>
#include <memsched/remat/detail/checkmate_greedy.hpp>
#include <memsched/remat/detail/hiremate_chain.hpp>
#include <memsched/remat/detail/hiremate_hilp.hpp>
#include <memsched/remat/detail/plan_builder.hpp>
#include <memsched/remat/hiremate_partition.hpp>
#include <memsched/remat/hiremate_subgraph.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace memsched {

/// What one lowest-level solve may use: its share of hiremate_options' limits.
struct hiremate_lower_limits {
  std::optional<std::chrono::duration<double>> time_limit;  ///< Wall clock for this solve (nullopt: none).
  std::optional<std::int64_t> max_bytes;                    ///< Memory for this solve's model (nullopt: none).
  /// hiremate_plan's default lowest level on this problem and budget (hiremate_options::heuristics
  /// and dtr, within the lowest level's deadline), for a solver that refines that plan rather than
  /// replacing it; empty when the solver is called outside hiremate_plan. It refers to the state
  /// of the hiremate_plan call: call it only during the lower solver's own call, never later.
  std::function<remat_result()> default_plan;
};

/// Solves one subgraph problem for one budget within the limits given (hiremate_options::lower_solver).
using hiremate_lower_solver = std::function<remat_result(const memory_graph&, std::int64_t, const hiremate_lower_limits&)>;

/// Tuning constants of hiremate_plan: how finely the hierarchy searches (budgets per class,
/// options kept, table resolutions, grains tried, repair rounds) and the knobs of the opt-in paths
/// (levels > 2: nested_*; top_solver: hilp_*). The defaults suit graphs of any size and shape;
/// larger values search more and take more time. docs/hiremate.md says what each trades.
struct hiremate_tuning {
  std::size_t budgets = detail::hiremate::default_budgets;  ///< Budgets solved per class (>= 1).
  /// N_o: options kept per class (1..254), thinned from the Pareto front of (peak, cost). More
  /// options give the top level more choices at the price of a larger table; which count pays
  /// depends on the graph and the budget.
  std::size_t max_options = detail::hiremate::default_max_options;
  std::size_t resident_levels = detail::hiremate::default_resident_levels;  ///< As hiremate_subgraph_options_config::resident_levels (the squeezed options).
  /// Steps of the keep-set ladder added to each class's options (checkpoint plans that keep what
  /// the next groups read and drop the rest in increasing recomputation cost per byte; up to
  /// max_options more options): 1 gives its two ends (nothing dropped, outputs only), 0 none.
  /// The ladder fills the gaps between the budgets solved, where a class's cheapest option for
  /// the memory the top level can give it would otherwise be far dearer.
  std::size_t ladder_rungs = 32;
  /// As hiremate_subgraph_options_config::serenity_states: every subgraph problem also gets the
  /// no-recomputation option along Serenity's least-peak order when that peak is lower (stored
  /// states per problem; 0: none). It matters on branchy blocks, whose order decides their peak.
  std::uint64_t serenity_states = detail::hiremate::default_serenity_states;
  std::size_t budget_units = 4096;               ///< Resolution of the top-level table (>= 16).
  /// Resolution of the chain schedule's table (groups^2 / 2 x units floats, within max_bytes or
  /// 256 MiB); 0: no chain schedule (one option per group only). 0 or >= 16.
  std::size_t chain_units = 512;
  /// The chain schedule may drop a group's carry (what the next group reads) while the groups
  /// after the next one run and recompute it from the group's kept values before the next
  /// group's backward part: a second table of the chain's size.
  bool regenerate_carries = true;
  /// Groups that a read the chain would pin spans (a value read two or more groups away, or by a
  /// backward part other than its neighbours', e.g. a skip connection split over several groups)
  /// are merged into one group when the merged group has at most merge_spans x M^l vertices
  /// (reads over more than four groups are left pinned): the chain never recomputes such a value
  /// and holds it over its whole live range.
  /// Merged groups made of the same classes share a class, solved once. 0: no merging.
  std::size_t merge_spans = 8;
  /// Most stages of the chain schedule, whose table takes O(stages^3 x units) time: when level 0
  /// has more groups, the partition is redone with M^l doubled until it has at most this many (or
  /// M^l reaches the forward graph's size), so that long stacks of blocks cost time near-linear in
  /// their length (stats.max_lower says which M^l was used). 0 (no cap) or >= hiremate_options::partition.max_top.
  std::size_t max_chain_stages = 128;
  /// Partitions solved: at M^l, 2 M^l, 4 M^l, ... (this many grains; a grain below the M^l that
  /// max_chain_stages already raised to is skipped, as is a partition whose groups are the
  /// previous one's); the cheapest expanded plan of all is the hierarchy's, and `stats` describe
  /// the partition that gave it. Which grain wins depends on the graph and the budget (coarser
  /// groups let a class keep more inside, finer ones give the top level more choices). Costs
  /// about the sum of the partitions' times. 1..16; 1: one partition (the paper's). Later
  /// partitions start only within half the time limit.
  std::size_t partitions = 4;
  /// Solve each grain twice when partition.stop_at_max_top is set: as given (every round of
  /// H-Partition stops as soon as its level has at most M^t nodes, the authors' rule) and with
  /// every round finished (stop_at_max_top = false: wrapping goes on while candidates are left, so
  /// blocks are not left split into branches whose values the top level must pin); the cheaper
  /// plan wins and stats.partition.full_rounds says which. A finished round's groups that the
  /// stopped one already had are not solved again. On branchy graphs finished rounds find plans
  /// at budgets where the stopped rounds' split blocks leave none. Costs about the sum of both
  /// kinds' times (finished rounds make larger groups). Nested hierarchies (levels > 2) solve the
  /// partition as given only.
  bool also_full_rounds = true;
  /// resident_levels for the groups that levels > 2 solves by nested hierarchies, where each
  /// squeezed solve is a whole hierarchy (hence fewer than resident_levels).
  std::size_t nested_resident_levels = 1;
  /// `partitions` for the nested hierarchies of levels > 2 (each solves one group's subgraph per
  /// budget, and each partition it tries is one more top-level solve of it). 1..16.
  std::size_t nested_partitions = 1;
  /// chain_units for the nested hierarchies of levels > 2, whose chain tables are filled for every
  /// class, budget and repair round (most of their time), hence coarser than chain_units. 0 (no
  /// chain top level in them) or >= 16.
  std::size_t nested_chain_units = 128;
  /// DTR in the heuristic start of the nested hierarchies of levels > 2 (with `dtr`; their lowest
  /// levels keep DTR's options either way). Off by default: a nested start runs once per class
  /// and budget, and the outer start already runs DTR on the whole graph.
  bool nested_start_dtr = false;
  std::size_t repair_rounds = 12;                ///< Tighter top-level budgets tried after a simulated overshoot.
  /// Levels of more groups skip the H-ILP (its model has about 2 x groups^2 x options binaries).
  std::size_t hilp_max_groups = 40;
  /// The paper's FREE variables and correction terms in the H-ILP: a data freed after its last use
  /// inside a stage (else held to the stage's end), and left out of the later peaks of the node
  /// that read it last (else counted through the node's whole run). The model's memory is much
  /// closer to the plan's, but the model is larger and harder for CBC, hence off by default.
  bool hilp_free_values = false;
};

/// Options of hiremate_plan.
struct hiremate_options {
  /// Whole hierarchy: the start may use half of it (its DTR runs stop there), each lowest-level
  /// solve gets a share of what is left up to 80% (hiremate_lower_limits, and the default solver's
  /// DTR runs stop there); classes not reached in time get the cheap options (no recomputation,
  /// outputs only) so the top level still runs; the best plan found is returned (status
  /// feasible), never an exception.
  std::optional<std::chrono::duration<double>> time_limit;
  /// Memory cap: on the top-level table (groups x budget units bytes; fewer units when it would
  /// exceed it), passed to each lower solve (divided among the threads), and on the H-ILP's model
  /// and backend (estimated; default_max_bytes() when none).
  std::optional<std::int64_t> max_bytes;
  unsigned threads = 1;                          ///< Classes solved in parallel (0: hardware), the heuristic start beside them when >= 2; the result does not depend on it.
  hiremate_partition_options partition = {};     ///< M^l, M^t, alpha.
  best_heuristic_options heuristics = {};        ///< Lowest-level solver when `lower_solver` is empty, and the start.
  /// With the heuristics, also dtr_plan along the topological order with every score (the exact
  /// neighbourhood up to default_dtr_exact_max_vertices), at the lowest level and as the start:
  /// DTR drops single expensive values inside a group, which the checkpoint heuristics cannot.
  bool dtr = true;
  /// Solves one subgraph problem for one budget within the limits given (e.g. Checkmate's MILP
  /// with solver.time_limit and max_bytes set from them); empty: the heuristics (and DTR).
  hiremate_lower_solver lower_solver = {};
  /// Levels of the hierarchy (the paper's H-Solver recursion; 2..4). 2: level 0 of the partition
  /// (each class solved per budget) and the top level over its groups. L > 2: the groups of
  /// partition level L - 2 (the highest level the partition has, when fewer; level 0 gives the
  /// two-level solve), each solved per budget by a hierarchy of L - 1 levels (hiremate_plan on
  /// the group's subgraph problem: one thread, the solve's share of time_limit and max_bytes, the
  /// heuristic start included, so an option is the cheaper of the group's own hierarchy and the
  /// heuristics'); lower_solver, when set, solves the innermost level. stats.levels says how many
  /// were solved. Costs about tuning.budgets x (1 + tuning.nested_resident_levels) two-level solves per class
  /// (docs/hiremate.md, "More levels").
  std::size_t levels = 2;
  /// H-ILP (appendix B) as a third top level: the groups' MILP (detail/hiremate_hilp.hpp, any DAG of
  /// groups, a group recomputed from the outputs of several others) solved by this call, e.g.
  /// `milp_solve_function(cbc_backend{})`, started from the other two top levels' schedules; empty:
  /// no H-ILP. The cheapest expanded plan of the three is the hierarchy's.
  std::function<solver_result(const milp_model&, const solver_options&)> top_solver = {};
  /// Limits of each H-ILP solve (time_limit also within what is left of `time_limit`; node_limit
  /// gives the same plan on every machine).
  solver_options top_solver_options = {.time_limit = std::chrono::seconds(20)};
  /// Also run the heuristics (and DTR, see `dtr`) and Checkmate's eviction greedy along the
  /// topological order on the whole graph and return the cheaper plan (the warm start).
  bool heuristic_start = true;
  observer_ref observer;
  hiremate_tuning tuning = {};  ///< Tuning constants (defaults chosen on the benchmarks; rarely set).
};

namespace detail::hiremate {

/// A hierarchy's plan and what it did (the nested hierarchies' answers keep them apart; the
/// outermost call's stats become remat_stats::hiremate).
struct levels_result {
  remat_result result;
  hiremate_stats stats;
};

/// The cheapest of best_heuristic_plan's plan and, when `with_dtr`, dtr_plan's along the
/// topological order with each score of dtr_portfolio_scores (remat_plan's default DTR stage)
/// while `deadline` has not passed (each DTR run stops at it): the lowest level's default solver
/// and the start. stats.method names the winner ("best-heuristic" or "dtr:<score>").
[[nodiscard]] inline remat_result heuristic_plan(const memory_graph& g, std::int64_t budget, const best_heuristic_options& heuristics,
                                                 bool with_dtr, const call_deadline& deadline) {
  remat_result best = best_heuristic_plan(g, budget, heuristics);
  best.stats.method = "best-heuristic";
  if (!with_dtr) return best;
  const std::vector<dtr_heuristic> scores = dtr_portfolio_scores(g.size(), default_dtr_exact_max_vertices);
  dtr_each_score(g, budget, scores, dtr_options{.max_computations = dtr_portfolio_computations(g.size())}, deadline,
                 [&](remat_result r, dtr_heuristic h) {
                   if (r.status == solve_status::feasible && (best.status != solve_status::feasible || r.total_cost < best.total_cost)) {
                     best = std::move(r);
                     best.stats.method = "dtr:" + std::string(to_string(h));
                   }
                 });
  return best;
}

/// The start: heuristic_plan's plan, or the cheapest of Checkmate's eviction greedy along the
/// topological order (eviction_start_plans, the order DTR follows) when that is cheaper. The
/// greedy takes milliseconds and is the cheapest of all on some graphs. stats.method names the
/// winner ("eviction greedy <policy>" for the greedy).
[[nodiscard]] inline remat_result start_plan(const memory_graph& g, std::int64_t budget, const best_heuristic_options& heuristics,
                                             bool with_dtr, const call_deadline& deadline) {
  remat_result best = heuristic_plan(g, budget, heuristics, with_dtr, deadline);
  const std::vector<std::size_t> order(g.topological_order().begin(), g.topological_order().end());
  for (auto& [plan, name] : eviction_start_plans(g, order, budget, deadline)) {
    plan_simulation sim;
    if (!check_plan(g, plan, &sim).valid || sim.peak_bytes > budget) continue;
    if (best.status == solve_status::feasible && sim.total_cost >= best.total_cost) continue;
    best = remat_result{};
    best.status = solve_status::feasible;
    best.plan = std::move(plan);
    take_simulated_figures(best, sim);
    best.stats.method = std::move(name);
  }
  best.stats.seconds = deadline.elapsed();
  return best;
}

/// The top-level choice: one option per group (groups in topological order) minimising the cost
/// with, for every group i, R(<i) + max(forward peak, backward peak) <= budget, R the resident
/// bytes of the groups before (rounded up to `unit`). O(groups x units x options).
inline std::optional<std::vector<std::size_t>> choose_options(const std::vector<std::vector<group_choice>>& opts, std::int64_t budget,
                                                              std::size_t units) {
  if (budget <= 0) return std::nullopt;
  // Rounded up without forming budget + units - 1 (a budget near 2^63 would overflow).
  const std::int64_t n_units = static_cast<std::int64_t>(units);
  const std::int64_t unit = std::max<std::int64_t>(1, budget / n_units + (budget % n_units != 0 ? 1 : 0));
  const std::size_t U = static_cast<std::size_t>(budget / unit) + 1;
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> dp(U, inf), next(U);
  dp[0] = 0;
  std::vector<std::vector<std::uint8_t>> pick(opts.size(), std::vector<std::uint8_t>(U, 255));
  std::vector<std::vector<std::uint32_t>> from(opts.size(), std::vector<std::uint32_t>(U, 0));
  for (std::size_t i = 0; i < opts.size(); ++i) {
    std::fill(next.begin(), next.end(), inf);
    for (std::size_t u = 0; u < U; ++u) {
      if (dp[u] == inf) continue;
      const std::int64_t held = static_cast<std::int64_t>(u) * unit;
      for (std::size_t k = 0; k < opts[i].size() && k < 255; ++k) {
        const auto& o = opts[i][k];
        if (held + std::max(o.forward_peak, o.backward_peak) > budget) continue;
        const std::size_t nu = u + static_cast<std::size_t>((o.resident + unit - 1) / unit);
        if (nu >= U) continue;
        const double c = dp[u] + o.cost;
        if (c < next[nu]) next[nu] = c, pick[i][nu] = static_cast<std::uint8_t>(k), from[i][nu] = static_cast<std::uint32_t>(u);
      }
    }
    dp.swap(next);
  }
  std::size_t best = U;
  for (std::size_t u = 0; u < U; ++u)
    if (dp[u] < inf && (best == U || dp[u] < dp[best])) best = u;
  if (best == U) return std::nullopt;
  std::vector<std::size_t> choice(opts.size());
  for (std::size_t i = opts.size(); i-- > 0;) {
    choice[i] = pick[i][best];
    best = from[i][best];
  }
  return choice;
}

/// The compute sequence of a top-level schedule: the vertex lists `parts` in order (forward and
/// backward schedules of options, forward parts of groups), and every vertex no group owns
/// (`owner` from group_owner: the loss, gradients of nothing) as soon as something reads it. nullopt when a step would read a
/// value of a group not computed yet. O(length + sum of in-degrees).
inline std::optional<std::vector<std::size_t>> expand_parts(const memory_graph& g, const std::vector<const std::vector<std::size_t>*>& parts,
                                                            const std::vector<std::size_t>& owner) {
  std::vector<char> done(g.size(), 0);
  std::vector<std::size_t> seq;
  bool ok = true;
  std::vector<std::size_t> stack;
  auto ensure_unowned = [&](std::size_t v) {
    stack.assign(1, v);
    while (!stack.empty() && ok) {
      const std::size_t u = stack.back();
      if (done[u]) { stack.pop_back(); continue; }
      bool pushed = false;
      for (auto p : g.predecessors(u))
        if (!done[p]) {
          if (owner[p] != no_group) { ok = false; return; }
          stack.push_back(p);
          pushed = true;
          break;
        }
      if (pushed) continue;
      stack.pop_back();
      done[u] = 1;
      seq.push_back(u);
    }
  };
  auto run = [&](std::size_t v) {
    for (auto p : g.predecessors(v))
      if (!done[p]) {
        if (owner[p] != no_group) { ok = false; return; }
        ensure_unowned(p);
      }
    done[v] = 1;
    seq.push_back(v);
  };
  for (const auto* part : parts)
    for (auto v : *part) { run(v); if (!ok) return std::nullopt; }
  for (auto v : g.topological_order())
    if (!done[v]) {
      if (owner[v] != no_group) return std::nullopt;
      ensure_unowned(v);
      if (!ok) return std::nullopt;
    }
  return seq;
}

/// The keep-set ladder: the checkpoint plans (checkpoint_sequence) of `sub`'s problem that keep
/// what the barrier reads and drop the other forward values in increasing recomputation cost per
/// byte, `rungs` + 1 steps from nothing dropped to everything (the last: outputs only, the least
/// resident memory). The budget solves seldom give these: their options are thinned by peak, and
/// a plan that holds little at the barrier at little extra cost (the convolutions kept, the cheap
/// values dropped) is what the top level needs when many groups hold values at once.
/// O(rungs x (problem size + its plan)).
inline std::vector<hiremate_option> keep_ladder(const hiremate_subgraph& sub, std::size_t rungs) {
  const memory_graph& g = sub.graph;
  const auto in = prepare_strategy(g, forward_mask(g), "hiremate_plan");
  std::vector<char> read_by_barrier(g.size(), 0);
  for (auto p : g.predecessors(sub.barrier)) read_by_barrier[p] = 1;
  std::vector<std::size_t> droppable;
  for (std::size_t v = 0; v < g.size(); ++v)
    if (in.forward[v] && !read_by_barrier[v] && g.bytes(v) > 0) droppable.push_back(v);
  // Cheapest recomputation per byte first; ties by vertex, so the ladder is deterministic.
  std::sort(droppable.begin(), droppable.end(), [&](std::size_t a, std::size_t b) {
    const double ca = g.cost(a) * static_cast<double>(g.bytes(b)), cb = g.cost(b) * static_cast<double>(g.bytes(a));
    return ca != cb ? ca < cb : a < b;
  });
  const std::size_t step = std::max<std::size_t>(1, (droppable.size() + rungs - 1) / std::max<std::size_t>(1, rungs));
  std::vector<char> keep = in.forward;
  std::vector<hiremate_option> out;
  for (std::size_t dropped = 0, cleared = 0;; dropped = std::min(droppable.size(), dropped + step)) {
    for (; cleared < dropped; ++cleared) keep[droppable[cleared]] = 0;
    execution_plan plan = plan_from_computes(g, checkpoint_sequence(g, in.split, keep));
    plan_simulation sim;
    if (check_plan(g, plan, &sim).valid) out.push_back(make_option(sub, std::move(plan), sim, sim.peak_bytes));
    if (dropped == droppable.size()) break;
  }
  return out;
}

/// The options of a class: the thinned ones, and the rungs of keep_ladder(sub, ladder_rungs) that no
/// other option beats in resident bytes, cost and peak together (at most max_options more, thinned
/// by resident bytes as thin thins peaks; 254 in all, the top level's limit).
inline std::vector<hiremate_option> class_options_of(const hiremate_subgraph& sub, std::vector<hiremate_option> options, std::size_t ladder_rungs,
                                                     std::size_t max_options) {
  if (options.empty() || ladder_rungs == 0) return options;
  auto beats = [](const hiremate_option& a, const hiremate_option& b) {
    return a.resident_bytes <= b.resident_bytes && a.cost <= b.cost && a.peak_bytes <= b.peak_bytes;
  };
  std::vector<hiremate_option> extra;
  for (auto& o : keep_ladder(sub, ladder_rungs)) {
    bool beaten = false;
    for (const auto* list : {&options, &extra})
      for (const auto& f : *list) beaten = beaten || beats(f, o);
    if (!beaten) extra.push_back(std::move(o));
  }
  std::sort(extra.begin(), extra.end(), [](const hiremate_option& a, const hiremate_option& b) { return a.resident_bytes < b.resident_bytes; });
  std::vector<std::int64_t> resident;
  for (const auto& o : extra) resident.push_back(o.resident_bytes);
  const std::size_t room = options.size() < 254 ? 254 - options.size() : 0;
  for (auto i : thin(resident, std::min(max_options, room))) options.push_back(std::move(extra[i]));
  return options;
}

/// An option of a class (plan in the problem `from` of its representative) as schedules of the
/// original vertices of a group whose problem is `sub`; `map` takes `from`'s vertices to `sub`'s
/// (nullptr: `sub` is `from`). The barrier and the interface values are left out.
inline group_choice choice_of(const hiremate_option& o, const hiremate_subgraph& sub, const std::vector<std::size_t>* map) {
  group_choice c;
  c.forward_peak = o.forward_peak, c.backward_peak = o.backward_peak, c.resident = o.resident_bytes, c.cost = o.cost;
  c.forward_cost = o.forward_cost, c.backward_cost = o.backward_cost;
  // A left-out step (the barrier, an interface value) reads no data: its memory goes to the next
  // vertex of its part, which has read the same data (the part's last vertex when none follows),
  // so that each profile's maximum is its part's peak.
  // Profiles only from an option that carries its simulation.
  const bool profiled = o.transient.size() == o.plan.steps.size();
  std::int64_t pending = 0;
  bool backward = false;
  for (std::size_t s = 0; s < o.plan.steps.size(); ++s) {
    const auto& step = o.plan.steps[s];
    if (step.op != plan_op::compute) continue;
    if (!backward && s >= o.barrier_step) {
      if (!c.forward_profile.empty()) c.forward_profile.back() = std::max(c.forward_profile.back(), pending);
      pending = 0;
      backward = true;
    }
    const std::int64_t running = profiled ? o.transient[s] : 0;
    const std::size_t local = map ? (*map)[step.node] : step.node;
    if (local == sub.barrier || sub.interface[local]) {
      pending = std::max(pending, running);
      continue;
    }
    (backward ? c.backward : c.forward).push_back(sub.original[local]);
    if (profiled) (backward ? c.backward_profile : c.forward_profile).push_back(std::max(running, pending));
    pending = 0;
  }
  if (!c.backward_profile.empty()) c.backward_profile.back() = std::max(c.backward_profile.back(), pending);
  for (auto v : o.resident) {
    const std::size_t local = map ? (*map)[v] : v;
    if (local != sub.barrier && !sub.interface[local]) c.resident_vertices.push_back(sub.original[local]);
  }
  return c;
}

/// What merge_spans made: the number of classes after it, and for each class it added (the
/// classes from the number before it on) the classes of the groups merged into it, in order.
struct merged_spans {
  std::size_t num_classes = 0;
  std::vector<std::vector<std::size_t>> parts;
};

/// Merges runs of consecutive groups (in `groups`' order) that a read the chain would pin spans
/// (read_kind_of: a value read two or more groups away, or by an earlier group's forward part or
/// by a backward part other than its neighbours'): the groups from the lower to the higher of
/// writer and reader, with the spans overlapping them, become one group (vertices in group order,
/// so still topological), when it has at most `max_vertices` vertices. Merged groups made of the
/// same classes in the same order share a new class (a stack of identical blocks with skip
/// connections gives identical merged spans; whether two of them really are the same problem is
/// hiremate_subgraph_map's to decide, as for any class). Reads over more than four groups are
/// left out. O(vertices + edges + groups log groups).
inline merged_spans merge_spans(const memory_graph& g, std::vector<std::vector<std::size_t>>& groups, std::vector<std::size_t>& group_class,
                                std::size_t num_classes, std::size_t max_vertices) {
  merged_spans res{.num_classes = num_classes, .parts = {}};
  const std::size_t n = groups.size();
  if (n < 3) return res;
  // A read across more groups (a mask or an embedding every block reads) would merge the whole
  // stack; such values stay pinned.
  constexpr std::size_t max_span = 4;
  const std::vector<std::size_t> owner = group_owner(g, groups);
  std::vector<std::size_t> reach(n);
  for (std::size_t i = 0; i < n; ++i) reach[i] = i;
  for (std::size_t v = 0; v < g.size(); ++v) {
    if (owner[v] == no_group) continue;
    for (auto w : g.successors(v))
      if (owner[w] != no_group && read_kind_of(g, owner, n, v, w) == read_kind::pinned) {
        const std::size_t lo = std::min(owner[v], owner[w]), hi = std::max(owner[v], owner[w]);
        if (hi - lo <= max_span) reach[lo] = std::max(reach[lo], hi);
      }
  }
  std::vector<std::vector<std::size_t>> merged_groups;
  std::vector<std::size_t> merged_class;
  // The new classes, as indices into res.parts ordered by their parts (each sequence stored once).
  const auto by_parts = [&res](std::size_t a, std::size_t b) { return res.parts[a] < res.parts[b]; };
  std::set<std::size_t, decltype(by_parts)> new_classes(by_parts);
  for (std::size_t i = 0; i < n;) {
    std::size_t end = reach[i], size = groups[i].size();
    for (std::size_t j = i + 1; j <= end; ++j) end = std::max(end, reach[j]), size += groups[j].size();
    if (end > i && size <= max_vertices) {
      std::vector<std::size_t> vertices;
      for (std::size_t j = i; j <= end; ++j) vertices.insert(vertices.end(), groups[j].begin(), groups[j].end());
      merged_groups.push_back(std::move(vertices));
      res.parts.emplace_back(group_class.begin() + static_cast<std::ptrdiff_t>(i), group_class.begin() + static_cast<std::ptrdiff_t>(end + 1));
      const auto [it, added] = new_classes.insert(res.parts.size() - 1);
      if (!added) res.parts.pop_back();
      merged_class.push_back(num_classes + *it);
      i = end + 1;
    } else {
      merged_groups.push_back(std::move(groups[i]));
      merged_class.push_back(group_class[i]);
      ++i;
    }
  }
  groups = std::move(merged_groups);
  group_class = std::move(merged_class);
  res.num_classes = num_classes + res.parts.size();
  return res;
}

/// The options of a class the time limit did not reach: no recomputation (a topological order,
/// always a valid plan) and outputs only (the ladder's last rung). O(size of the problem).
inline std::vector<hiremate_option> cheap_options(const hiremate_subgraph& sub, std::size_t max_options) {
  const memory_graph& g = sub.graph;
  const auto& topo = g.topological_order();
  execution_plan plan = plan_from_computes(g, std::vector<std::size_t>(topo.begin(), topo.end()));
  plan_simulation sim;
  std::vector<hiremate_option> topo_option;
  if (check_plan(g, plan, &sim).valid) topo_option.push_back(make_option(sub, std::move(plan), sim, sim.peak_bytes));
  return class_options_of(sub, std::move(topo_option), 1, max_options);
}

}  // namespace detail::hiremate

/// Checks hiremate_options (and its partition options) without solving anything, so a front end
/// can report a bad option before any work. O(1).
/// Throws: option_error naming the field for levels, or for tuning.budgets, partitions,
/// nested_partitions, max_options, budget_units, chain_units, nested_chain_units or
/// max_chain_stages out of range,
/// and what hiremate_partition throws for its options (option_error too).
inline void check_hiremate_options(const hiremate_options& options) {
  auto fail = [](const char* option, const char* requirement) { throw option_error("hiremate_plan", option, requirement); };
  if (options.tuning.budgets == 0) fail("tuning.budgets", "must be >= 1");
  if (options.tuning.partitions == 0 || options.tuning.partitions > 16) fail("tuning.partitions", "must be in 1..16");
  if (options.tuning.nested_partitions == 0 || options.tuning.nested_partitions > 16) fail("tuning.nested_partitions", "must be in 1..16");
  if (options.levels < 2 || options.levels > 4) fail("levels", "must be in 2..4");
  if (options.tuning.max_options == 0 || options.tuning.max_options > 254) fail("tuning.max_options", "must be in 1..254");
  if (options.tuning.budget_units < 16) fail("tuning.budget_units", "must be >= 16");
  if (options.tuning.chain_units != 0 && options.tuning.chain_units < 16) fail("tuning.chain_units", "must be 0 or >= 16");
  if (options.tuning.nested_chain_units != 0 && options.tuning.nested_chain_units < 16) fail("tuning.nested_chain_units", "must be 0 or >= 16");
  // (The partition stops wrapping at max_top nodes, so a smaller cap could never be met.)
  if (options.tuning.max_chain_stages != 0 && options.tuning.max_chain_stages < options.partition.max_top)
    fail("tuning.max_chain_stages", "must be 0 or >= the partition's max_top (M^t)");
  detail::hiremate::check_partition_options(options.partition);
}

namespace detail {

/// hiremate_plan on a converted graph, options checked, `partition` = options.partition with the
/// graph's op names (the partition options it changes), `start` the time the call began.
MEMSCHED_DECL remat_result hiremate_plan_on(const memory_graph& g, std::int64_t budget, const hiremate_options& options,
                                         hiremate_partition_options partition, std::chrono::steady_clock::time_point start);

}  // namespace detail

/// HiRemate (two levels): partition, options per distinct class, top-level choice, expansion,
/// simulation. Returns the cheaper of the hierarchy's plan and the heuristics', DTR's and the
/// eviction greedy's (when options.heuristic_start), status `feasible` when it fits `budget` (nothing is proven),
/// `no_solution` otherwise (`infeasible` when the budget is below what every plan needs), and
/// in stats.hiremate what the hierarchy did (hiremate_stats).
/// Deterministic, independent of options.threads.
/// Complexity: partition (once more per doubling of M^l for max_chain_stages) + classes x budgets x
/// lower solve + groups x budget_units x max_options per repair round + stages^3 x chain_units for
/// the chain (stages <= max_chain_stages unless M^l reached the graph's size) + with top_solver,
/// per repair round one MILP of O(groups^2 x options) variables and its solve (within
/// top_solver_options and the time left) + O(plan length) simulations.
/// Throws: what check_hiremate_options throws; std::invalid_argument for a graph without training
/// roles; what hiremate_partition and the lower solver throw.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result hiremate_plan(const G& graph, std::int64_t budget, const hiremate_options& options, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  check_hiremate_options(options);
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  return detail::hiremate_plan_on(g, budget, options, detail::hiremate::with_op_names(graph, g, options.partition, maps...), start);
}

/// hiremate_plan with default options.
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result hiremate_plan(const G& graph, std::int64_t budget) {
  return hiremate_plan(graph, budget, hiremate_options{});
}

}  // namespace memsched

#ifndef MEMSCHED_SEPARATE_COMPILATION
#include <memsched/remat/impl/hiremate.ipp>
#endif
