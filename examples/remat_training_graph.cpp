// Plan rematerialization of a training graph under a memory budget and compare strategies.
//
// A training step keeps every forward activation until its gradient is computed, so its peak is
// far above inference. Rematerialization frees some activations after the forward pass and
// recomputes them when the backward pass needs them: less memory for more compute. Every
// strategy below has the same call shape, X_plan(graph, budget, options, maps...), and returns a
// remat_result; the simulator re-checks each plan.
//
//   build: cmake --build build --target example_remat_training_graph
//   run:   build/examples/example_remat_training_graph [GRAPH.json] [BUDGET_PERCENT]
//          (default: a 16-block residual network built below, at 50% of its no-recomputation peak)

#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/read_graph.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkpoint_generalizations.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/chen.hpp>
#include <memsched/remat/revolve.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

// The forward pass of a small residual network: each block is conv -> relu -> conv -> add(skip).
memsched::dataflow_graph residual_network(int blocks) {
  memsched::dataflow_graph g;
  std::int64_t id = 0;
  auto add = [&](const std::string& op, std::int64_t bytes, double cost) {
    return add_vertex(memsched::node{.id = id++, .name = op + std::to_string(id), .op = op, .bytes = bytes, .cost = cost}, g);
  };
  const std::int64_t act = 1 << 20;  // 1 MiB activations
  auto x = add("input", act, 0);
  for (int b = 0; b < blocks; ++b) {
    const auto c1 = add("conv2d", act, 100), r = add("relu", act, 1), c2 = add("conv2d", act, 100), sum = add("add", act, 1);
    add_edge(x, c1, g), add_edge(c1, r, g), add_edge(r, c2, g), add_edge(c2, sum, g), add_edge(x, sum, g);
    x = sum;
  }
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  const memsched::dataflow_graph g =
      argc > 1 ? memsched::read_graph(argv[1]) : memsched::make_training_graph(residual_network(16));
  const double percent = argc > 2 ? std::stod(argv[2]) : 50.0;

  // The peak of the plan that recomputes nothing, and the budget as a share of it.
  const std::int64_t no_remat_peak = memsched::checkpoint_all_plan(g, memsched::unlimited_budget).peak_bytes;
  const auto budget = static_cast<std::int64_t>(static_cast<double>(no_remat_peak) * percent / 100.0);
  std::printf("%zu vertices, no-recomputation peak %.1f MiB, budget %.1f MiB (%.0f%%)\n\n", num_vertices(g),
              no_remat_peak / 1048576.0, budget / 1048576.0, percent);

  struct row {
    const char* name;
    memsched::remat_result result;
  };
  const row rows[] = {
      {"checkpoint all", memsched::checkpoint_all_plan(g, budget)},
      {"chen sqrt(n)", memsched::chen_sqrtn_plan(g, budget)},
      {"chen greedy", memsched::chen_greedy_plan(g, budget)},
      {"ap greedy", memsched::ap_greedy_plan(g, budget)},
      {"linearized greedy", memsched::linearized_greedy_plan(g, budget)},
      {"revolve", memsched::revolve_plan(g, budget)},
      // The cheapest plan of all the heuristics above (and the others the library has).
      {"best heuristic", memsched::best_heuristic_plan(g, budget, {.use_spare_memory = true})},
  };

  std::printf("%-18s %-12s %10s %9s\n", "strategy", "status", "peak MiB", "overhead");
  int wrong = 0;
  for (const auto& [name, r] : rows) {
    std::printf("%-18s %-12s", name, std::string(to_string(r.status)).c_str());
    if (!has_solution(r.status)) {
      std::printf("  (%s)\n", r.message.empty() ? "no plan within the budget" : r.message.c_str());
      continue;
    }
    // The simulator checks the plan from scratch: every input resident when computed, the
    // outputs resident at the end, and the peak and cost the algorithm reported.
    const memsched::plan_check check = memsched::check_plan(g, r.plan);
    const memsched::plan_simulation sim = memsched::simulate_plan(g, r.plan);
    const bool ok = check.valid && sim.peak_bytes == r.peak_bytes && sim.peak_bytes <= budget;
    wrong += ok ? 0 : 1;
    std::printf(" %10.1f %8.1f%%%s\n", r.peak_bytes / 1048576.0, 100.0 * r.overhead, ok ? "" : "  <- REJECTED by the simulator");
  }
  return wrong == 0 ? 0 : 1;
}
