// Moccasin (Gecode backend) on the graphs of the Moccasin paper's Table 3. One benchmark per row;
// counters: TDI (%), peak, budget, time to the best plan (s), proven gap (%, -1 when no bound).
// MEMSCHED_MOCCASIN_SECONDS (default 30) is the time limit per solve; MEMSCHED_SHARED_GRAPHS
// overrides the graph folder. Run one iteration: --benchmark_filter=... --benchmark_repetitions=1.

#include <memsched/graph/read_graph.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkmate.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/moccasin.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/solver/backends/gecode.hpp>

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <chrono>
#include <cstdlib>
#include <string>

namespace {

double seconds_limit() { return memsched_bench::env_number("MEMSCHED_MOCCASIN_SECONDS", 30.0); }

// budget_kind: > 1 means bytes; <= 1 a fraction of the no-remat peak of the input order.
// best_order: the lowest-peak order the library computes instead of the graph's order.
void run(benchmark::State& state, const std::string& file, double budget_kind, bool best_order) {
  const auto graph = memsched::read_graph(memsched_bench::graphs_dir() / file);
  const memsched::memory_graph g = memsched::make_memory_graph(graph, memsched::default_node_maps(graph));
  // The input order: the file's, else the order of the no-recomputation plan (checkpoint-all),
  // whose peak is the "no-remat peak" the budgets of the Checkmate graphs are fractions of.
  const std::vector<std::size_t> graph_order = memsched::remat_input_order(graph, {.source = memsched::input_order_source::graph}).order;
  const std::int64_t base_peak = memsched::order_peak(g, graph_order);
  const std::int64_t budget =
      budget_kind > 1 ? static_cast<std::int64_t>(budget_kind) : static_cast<std::int64_t>(budget_kind * static_cast<double>(base_peak));
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    memsched::moccasin_options o{.backend = memsched::gecode_backend{}};
    o.order = best_order ? memsched::remat_input_order(g, {.source = memsched::input_order_source::best,
                                                           .serenity_time_limit = std::chrono::duration<double>(5.0),
                                                           .graph_order = graph_order})
                               .order
                         : graph_order;
    const auto h = memsched::best_heuristic_plan(g, budget);
    if (memsched::has_solution(h.status)) o.start_plans.push_back(h.plan);
    const double prep = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    o.solver.time_limit = std::chrono::duration<double>(seconds_limit());
    double best_time = 0;
    struct time_to_best {
      double prep;
      double* best;
      void on_incumbent(double seconds, double, double) const { *best = prep + seconds; }
    } watch{prep, &best_time};
    o.solver.observer = watch;
    const auto r = memsched::moccasin_plan(g, budget, o);
    state.counters["TDI_pct"] = memsched::has_solution(r.status) ? 100.0 * r.overhead : -1;
    state.counters["peak"] = static_cast<double>(r.peak_bytes);
    state.counters["budget"] = static_cast<double>(budget);
    state.counters["time_to_best_s"] = best_time;
    state.counters["gap_pct"] = r.cost_bound && r.total_cost > 0 ? 100.0 * (r.total_cost - *r.cost_bound) / r.total_cost : -1;
    state.counters["heuristic_TDI_pct"] = memsched::has_solution(h.status) ? 100.0 * h.overhead : -1;
    state.counters["order_peak"] = static_cast<double>(memsched::order_peak(g, *o.order));
  }
}

void register_all() {
  struct row {
    const char* name;
    const char* file;
    double budget;
  };
  const row rows[] = {
      {"n100/41687", "moccasin/random_layered_n100.json", 41687},
      {"n100/37055", "moccasin/random_layered_n100.json", 37055},
      {"fcn8_training/90pct", "checkmate/fcn_8_vgg_training.json", 0.9},
      {"fcn8_training/80pct", "checkmate/fcn_8_vgg_training.json", 0.8},
      {"resnet50_training/90pct", "checkmate/resnet50_training.json", 0.9},
      {"resnet50_training/80pct", "checkmate/resnet50_training.json", 0.8},
  };
  for (const auto& r : rows)
    for (bool best : {false, true})
      benchmark::RegisterBenchmark((std::string("moccasin/") + r.name + (best ? "/best_order" : "/graph_order")).c_str(),
                                   [r, best](benchmark::State& s) { run(s, r.file, r.budget, best); })
          ->Iterations(1)
          ->Unit(benchmark::kSecond)
          ->UseRealTime();
}

const bool registered = (register_all(), true);

}  // namespace

BENCHMARK_MAIN();
