// needs: cbc
// Solve Checkmate's MILP with a chosen solver backend, watch it improve, and check the answer.
//
// Solver-based strategies take the backend in their options (any type modelling milp_backend:
// cbc_backend here; glpk_backend, or your own, the same way) and nest the backend-neutral
// solver_options: time limit, gap, threads, a counted node limit and an observer. The observer is
// any object with some of the hooks on_incumbent / on_bound / on_phase. The heuristics' best plan
// is handed over as a start, so the solver can only improve on it; its LP bound says how far
// from optimal the answer may be.
//
//   build: cmake --build build --target example_solve_with_backend   (needs coinor-libcbc-dev)
//   run:   build/examples/example_solve_with_backend [GRAPH.json] [BUDGET_PERCENT] [SECONDS]
//          (default: tests/data/checkmate/vgg16_training.json at 90% for 10 s)

#include <memsched/graph/read_graph.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkmate.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/sim/simulate_plan.hpp>
#include <memsched/solver/backends/cbc.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace {

// Prints what the solver reports while it works (called from the solving thread).
struct console_observer {
  void on_phase(double seconds, std::string_view phase) {
    std::printf("  %6.2f s  %.*s\n", seconds, static_cast<int>(phase.size()), phase.data());
  }
  void on_incumbent(double seconds, double cost, double bound) {
    std::printf("  %6.2f s  better plan: cost %.0f (bound %.0f)\n", seconds, cost, bound);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "tests/data/checkmate/vgg16_training.json";
  const double percent = argc > 2 ? std::stod(argv[2]) : 90.0;
  const double seconds = argc > 3 ? std::stod(argv[3]) : 10.0;
  const memsched::dataflow_graph g = memsched::read_graph(path);

  const std::int64_t no_remat_peak = memsched::checkpoint_all_plan(g, memsched::unlimited_budget).peak_bytes;
  const auto budget = static_cast<std::int64_t>(static_cast<double>(no_remat_peak) * percent / 100.0);

  // A start: the cheapest heuristic plan within the budget (if any).
  const memsched::remat_result start = memsched::best_heuristic_plan(g, budget);
  std::printf("%s at %.0f%% of its no-recomputation peak: best heuristic %s, overhead %.2f%%\n", path.c_str(), percent,
              std::string(to_string(start.status)).c_str(), 100.0 * start.overhead);

  console_observer progress;
  memsched::checkmate_options<memsched::cbc_backend> options{
      .solver = {.time_limit = std::chrono::duration<double>(seconds), .observer = progress},
  };
  if (has_solution(start.status)) options.start_plans.push_back(start.plan);
  const memsched::remat_result milp = memsched::checkmate_milp_plan(g, budget, options);

  std::printf("checkmate MILP (%s): %s", memsched::cbc_backend::name().data(), std::string(to_string(milp.status)).c_str());
  if (!has_solution(milp.status)) {
    std::printf(" (%s)\n", milp.message.c_str());
    return milp.status == memsched::solve_status::infeasible ? 0 : 1;
  }
  std::printf(", overhead %.2f%%, peak %.1f%% of the no-recomputation peak", 100.0 * milp.overhead,
              100.0 * static_cast<double>(milp.peak_bytes) / static_cast<double>(no_remat_peak));
  if (milp.cost_bound && milp.total_cost > 0)
    std::printf(", at most %.2f%% above the optimum of its plan space", 100.0 * (milp.total_cost / *milp.cost_bound - 1.0));
  std::printf("\n");

  // Check the plan from scratch, and that the solver did not lose against its start.
  const memsched::plan_check check = memsched::check_plan(g, milp.plan);
  const bool ok = check.valid && milp.peak_bytes <= budget &&
                  (!has_solution(start.status) || milp.total_cost <= start.total_cost + 1e-9 * std::abs(start.total_cost));
  if (!ok) std::printf("REJECTED: %s\n", check.valid ? "worse than its start or over budget" : check.error.c_str());
  return ok ? 0 : 1;
}
