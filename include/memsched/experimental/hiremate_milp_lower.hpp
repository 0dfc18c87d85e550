#pragma once
// Experimental (memsched/experimental/: outside the area and umbrella headers; include it
// directly). An exact method at HiRemate's lowest level: each budget of each subgraph problem is
// solved by the heuristics and DTR (hiremate_plan's default lowest level), then by Checkmate's MILP
// through a MILP backend, started from that plan, when the problem is small enough for the MILP
// (about 2 n^2 binaries for n vertices); the cheaper plan is the option. Kept out of the public
// areas because the MILP solves multiply the time of a HiRemate call by orders of magnitude for
// a small gain in cost (docs/hiremate.md).

#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/checkmate.hpp>
#include <memsched/remat/hiremate.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/solver/concepts.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace memsched {

/// Options of hiremate_milp_lower_solver (plain aggregate; the backend type is deduced:
/// `hiremate_milp_lower_options{.backend = cbc_backend{}}`).
template <milp_backend Backend>
struct hiremate_milp_lower_options {
  Backend backend{};
  /// Subgraph problems of more vertices (forward and backward) get the heuristics' plan only.
  std::size_t max_vertices = 80;
  /// Per MILP solve, within the solve's share of hiremate_options::time_limit (the shorter wins);
  /// nullopt: the share only. node_limit (per backend solve) gives the same answer on every
  /// machine; threads is the backend's (hiremate_options::threads runs solves in parallel).
  solver_options solver = {.time_limit = std::chrono::duration<double>(1.0)};
};

/// A lowest-level solver for hiremate_options::lower_solver: hiremate_plan's default lowest level
/// (hiremate_lower_limits::default_plan: the heuristics and DTR as hiremate_options says; called
/// alone, the default options' within the solve's time share), and, on problems of at most
/// `max_vertices` vertices,
/// checkmate_milp_plan's plan along that plan's first computations, started from it, within
/// the solve's time and memory share. The result is never dearer than the heuristics' plan;
/// stats.method is "checkmate-milp" where the MILP's plan is cheaper. Each call costs the
/// heuristics plus one MILP (O(n^2) variables); a failed or capped MILP leaves the heuristics'
/// plan. Throws what the backend throws on a malformed model (never on these models).
///
/// Experimental: it costs hundreds of times the default lowest level's time for a fraction of a
/// percent on the graphs measured (docs/hiremate.md, "Measured"), so hiremate_plan does not use
/// it by default.
template <milp_backend Backend>
[[nodiscard]] hiremate_lower_solver hiremate_milp_lower_solver(hiremate_milp_lower_options<Backend> options = {}) {
  return [options = std::move(options)](const memory_graph& g, std::int64_t budget, const hiremate_lower_limits& limits) {
    const auto start = std::chrono::steady_clock::now();
    const hiremate_options defaults{};  // what hiremate_plan's default lowest level uses when no options are given
    remat_result best = limits.default_plan ? limits.default_plan()
                                            : detail::hiremate::heuristic_plan(g, budget, defaults.heuristics, defaults.dtr,
                                                                        detail::call_deadline(start, limits.time_limit));
    if (g.size() > options.max_vertices) return best;
    // The heuristics' plan is the start: no LP rounding (its own solves, unbounded without a time limit).
    checkmate_options<Backend> milp{.backend = options.backend, .solver = options.solver, .lp_rounding_start = false};
    if (limits.time_limit) {
      const std::chrono::duration<double> used = std::chrono::steady_clock::now() - start;
      const std::chrono::duration<double> left = std::max(std::chrono::duration<double>(0), *limits.time_limit - used);
      milp.solver.time_limit = milp.solver.time_limit ? std::min(*milp.solver.time_limit, left) : left;
    }
    if (milp.solver.time_limit && milp.solver.time_limit->count() <= 0) return best;
    if (limits.max_bytes) milp.max_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, *limits.max_bytes));
    if (has_solution(best.status)) {
      milp.order = first_computation_order(best.plan, g.size());
      milp.start_plans.push_back(best.plan);
    }
    remat_result exact = checkmate_milp_plan(g, budget, milp);
    // A plan of checkmate_milp_plan is re-simulated within the budget (else its status is error).
    if (has_solution(exact.status) && (!has_solution(best.status) || exact.total_cost < best.total_cost)) {
      best = std::move(exact);
      best.status = solve_status::feasible;  // optimal along one input order only
      best.stats.method = "checkmate-milp";
    }
    return best;
  };
}

}  // namespace memsched
