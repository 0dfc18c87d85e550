// The rematerialization heuristics of memsched/remat: every strategy on a 10,000-node chain
// training graph (a 5,000-node forward chain, its loss and 4,999 gradients) at 50% of the no-remat
// peak, and on every shared training graph (../shared/graphs checkmate/*_training.json and
// torch/*.training.json) at 90%, 80% and 70% of the no-remat peak.
// Counters: overhead_pct (total cost / sum of costs - 1, in %), peak, budget, feasible (1/0).
// The graph is converted to a memory_graph once, outside the timed loop.
// Environment: MEMSCHED_SHARED_GRAPHS (graphs folder).

#include <memsched/graph/json_io.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/training_graph.hpp>

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct prepared {
  memsched::memory_graph graph;
  memsched::best_heuristic_options options;
  std::int64_t no_remat_peak = 0;
};

prepared prepare(const memsched::dataflow_graph& g) {
  prepared p{memsched::make_memory_graph(g), {}, 0};  // the memory graph carries the training roles
  p.no_remat_peak = memsched::checkpoint_all_plan(p.graph, memsched::unlimited_budget).peak_bytes;
  return p;
}

const prepared& chain10k() {
  static const prepared p = [] {
    const std::size_t n = 5000;
    memsched::dataflow_graph f(n);
    for (std::size_t v = 0; v < n; ++v) {
      f[v].id = static_cast<std::int64_t>(v);
      f[v].op = v == 0 ? "input" : "conv2d";
      f[v].bytes = 1000 + static_cast<std::int64_t>((v * 7919) % 4000);
      f[v].cost = v == 0 ? 0.0 : 1.0 + static_cast<double>((v * 104729) % 10);
      if (v > 0) add_edge(v - 1, v, f);
    }
    return prepare(memsched::make_training_graph(f));
  }();
  return p;
}

void run(benchmark::State& state, const prepared& p, memsched::remat_heuristic h, double fraction) {
  const auto budget = static_cast<std::int64_t>(fraction * static_cast<double>(p.no_remat_peak));
  memsched::remat_result r;
  for (auto _ : state) {
    r = memsched::run_remat_heuristic(p.graph, h, budget, p.options);
    benchmark::DoNotOptimize(r.peak_bytes);
  }
  state.counters["overhead_pct"] = 100.0 * r.overhead;
  state.counters["peak"] = static_cast<double>(r.peak_bytes);
  state.counters["budget"] = static_cast<double>(budget);
  state.counters["feasible"] = r.status == memsched::solve_status::feasible ? 1 : 0;
  state.counters["nodes"] = static_cast<double>(p.graph.size());
}

void register_all() {
  for (auto h : memsched::all_remat_heuristics)
    benchmark::RegisterBenchmark(("chain10k/" + std::string(to_string(h))).c_str(),
                                 [h](benchmark::State& s) { run(s, chain10k(), h, 0.5); })
        ->Unit(benchmark::kMillisecond);
  const auto training = [](const std::string& name) {
    return (name.rfind("checkmate/", 0) == 0 || name.rfind("torch/", 0) == 0) && name.find("training") != std::string::npos;
  };
  for (const auto& f : memsched_bench::shared_graph_files(training)) {
    const std::string name = memsched_bench::graph_name(f);
    auto p = std::make_shared<prepared>(prepare(memsched::read_json_graph(f)));
    for (double frac : {0.9, 0.8, 0.7})
      for (auto h : memsched::all_remat_heuristics)
        benchmark::RegisterBenchmark((name + "/" + std::to_string(static_cast<int>(frac * 100 + 0.5)) + "%/" + std::string(to_string(h))).c_str(),
                                     [p, h, frac](benchmark::State& s) { run(s, *p, h, frac); })
            ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) { return memsched_bench::run_benchmarks(argc, argv, register_all); }
