// Serenity benchmarks: the exact order of minimum peak memory on the shared graphs and on large
// generated RandWire / DARTS networks, in several configurations, against the baseline orders.
//
//   bench_serenity [--benchmark_filter=REGEX] [google benchmark flags]
//
// Environment: MEMSCHED_SHARED_GRAPHS (graph folder), MEMSCHED_BENCH_TIME_LIMIT (seconds per
// solve, default 60), MEMSCHED_BENCH_LARGE=0 to skip the generated large graphs.
// Counters: peak (bytes), kahn_peak, reduction (Kahn's peak / peak), optimal (1 when proven),
// lower_bound, states (expanded), stored, search_MiB (peak memory of the search), gap (peak /
// lower_bound).
//
// Anytime quality (issue 13): `anytime/random_layered_n1000_w*/...` solve 1,000-vertex random
// layered graphs (widths 0.4-0.9; 0.3 and 1.0 are proven at once) for 1 s and 10 s, with the local
// search over orders (`reorder`, reorder_window = 32) and without it (`plain`, the default), in the same run:
//   bench_serenity --benchmark_filter=anytime
//
// ONNX granularity (issue 13): with the ONNX reader built, `onnx/<model>` are the networks of
// tests/data/onnx read one vertex per ONNX operator (scripts/onnx_models.py makes them: DARTS-V2,
// RandWire-WS seeds 0 and 3, DenseNet-121, Inception-v3 and four torchvision exports):
//   bench_serenity --benchmark_filter=onnx/

#include <memsched/graph/darts.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/random_layered.hpp>
#include <memsched/graph/randwire.hpp>
#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/serenity.hpp>

#ifdef MEMSCHED_ONNX_MODELS
#include <memsched/graph/onnx_io.hpp>
#endif

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace memsched;

double time_limit_seconds() { return memsched_bench::env_number("MEMSCHED_BENCH_TIME_LIMIT", 60.0); }

struct variant {
  std::string name;
  std::function<order_result(const memory_graph&)> run;
};

std::vector<variant> variants() {
  const auto limit = std::chrono::duration<double>(time_limit_seconds());
  return {
      {"kahn", [](const memory_graph& g) { return kahn_order(g); }},
      {"dfs", [](const memory_graph& g) { return dfs_order(g); }},
      {"greedy", [](const memory_graph& g) { return greedy_order(g); }},
      // The DP alone: no divide and conquer, no free moves, no beam seed (Kahn/greedy/DFS bound only).
      {"dp_plain",
       [=](const memory_graph& g) {
         return serenity_order(g, serenity_options{.divide = false, .time_limit = limit, .free_moves = false, .beam_width = 0});
       }},
      {"dp", [=](const memory_graph& g) { return serenity_order(g, serenity_options{.divide = false, .time_limit = limit}); }},
      {"dp_dc", [=](const memory_graph& g) { return serenity_order(g, serenity_options{.divide = true, .time_limit = limit}); }},
      // The same without the forward/backward decision searches: the layered DP alone proves the optimum.
      {"dp_dc_layered",
       [=](const memory_graph& g) {
         return serenity_order(g, serenity_options{.divide = true, .time_limit = limit, .decision_budget = 0});
       }},
      {"dp_dc_paper",
       [=](const memory_graph& g) {
         return serenity_order(g, serenity_options{.soft_budget = soft_budget_mode::paper, .divide = true, .time_limit = limit});
       }},
      {"dp_dc_bounded",
       [=](const memory_graph& g) {
         return serenity_order(g, serenity_options{.soft_budget = soft_budget_mode::bounded, .divide = true, .time_limit = limit});
       }},
      {"dp_dc_2threads",
       [=](const memory_graph& g) { return serenity_order(g, serenity_options{.divide = true, .time_limit = limit, .threads = 2}); }},
  };
}

void run(benchmark::State& state, std::shared_ptr<const memory_graph> g, std::int64_t kahn_peak, const variant& v) {
  order_result r;
  for (auto _ : state) {
    r = v.run(*g);
    benchmark::DoNotOptimize(r.peak_bytes);
  }
  state.counters["n"] = static_cast<double>(g->size());
  state.counters["peak"] = static_cast<double>(r.peak_bytes);
  state.counters["kahn_peak"] = static_cast<double>(kahn_peak);
  state.counters["reduction"] = r.peak_bytes > 0 ? static_cast<double>(kahn_peak) / static_cast<double>(r.peak_bytes) : 1.0;
  state.counters["optimal"] = r.status == solve_status::optimal ? 1 : 0;
  state.counters["lower_bound"] = static_cast<double>(r.lower_bound);
  state.counters["states"] = static_cast<double>(r.stats.states_expanded);
  state.counters["stored"] = static_cast<double>(r.stats.states_stored);
  state.counters["search_MiB"] = static_cast<double>(r.stats.search_bytes) / (1024.0 * 1024.0);
  state.counters["gap"] = r.lower_bound > 0 ? static_cast<double>(r.peak_bytes) / static_cast<double>(r.lower_bound) : 0.0;
}

void register_graph(const std::string& name, std::shared_ptr<const memory_graph> g,
                    const std::vector<variant>& which = variants()) {
  const std::int64_t kahn_peak = kahn_order(*g).peak_bytes;
  for (const variant& v : which) {
    benchmark::RegisterBenchmark((name + "/" + v.name).c_str(), [g, kahn_peak, v](benchmark::State& s) { run(s, g, kahn_peak, v); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->MinTime(0.05);
  }
}

void register_all() {
  for (const auto& f : memsched_bench::shared_graph_files()) {
    const std::string name = memsched_bench::graph_name(f);
    try {
      register_graph(name, std::make_shared<const memory_graph>(make_memory_graph(read_json_graph(f))));
    } catch (const std::exception& e) {
      std::cerr << "bench_serenity: skipping " << f << ": " << e.what() << "\n";
    }
  }
#ifdef MEMSCHED_ONNX_MODELS
  std::vector<std::filesystem::path> models;
  for (const auto& e : std::filesystem::directory_iterator(MEMSCHED_ONNX_MODELS))
    if (e.path().extension() == ".onnx") models.push_back(e.path());
  std::sort(models.begin(), models.end());
  // The exact configurations with divide and conquer (without it the RandWire models do not finish).
  std::vector<variant> exact;
  for (const variant& v : variants())
    if (v.name == "kahn" || v.name.starts_with("dp_dc")) exact.push_back(v);
  for (const auto& f : models)
    register_graph("onnx/" + f.stem().string(), std::make_shared<const memory_graph>(make_memory_graph(read_onnx_graph(f))), exact);
#endif
  const char* large = std::getenv("MEMSCHED_BENCH_LARGE");
  if (large && std::string(large) == "0") return;
  for (std::uint64_t seed = 0; seed < 3; ++seed)
    register_graph("generated/randwire_3stages_seed" + std::to_string(seed),
                   std::make_shared<const memory_graph>(make_memory_graph(make_randwire(randwire_options{.seed = seed}))));
  // One stage only: the stage's own peak is the answer, so its search cannot be cut short by the
  // other stages' bounds.
  for (std::uint64_t seed = 0; seed < 3; ++seed)
    register_graph("generated/randwire_1stage_seed" + std::to_string(seed),
                   std::make_shared<const memory_graph>(make_memory_graph(
                       make_randwire(randwire_options{.stages = 1, .seed = seed, .stem_and_head = false}))));
  register_graph("generated/darts_20cells",
                 std::make_shared<const memory_graph>(make_memory_graph(make_darts_network(darts_options{}))));
  std::vector<variant> anytime;
  for (double seconds : {1.0, 10.0})
    for (std::size_t window : {std::size_t{0}, std::size_t{32}}) {
      const auto limit = std::chrono::duration<double>(seconds);
      anytime.push_back({std::string(window == 0 ? "plain_" : "reorder_") + std::to_string(int(seconds)) + "s",
                         [=](const memory_graph& g) {
                           return serenity_order(g, serenity_options{.time_limit = limit, .reorder_window = window});
                         }});
    }
  for (int tenths = 4; tenths <= 9; ++tenths)
    register_graph("anytime/random_layered_n1000_w0." + std::to_string(tenths) + "_seed1",
                   std::make_shared<const memory_graph>(make_memory_graph(
                       make_random_layered(random_layered_options{.nodes = 1000, .width = tenths / 10.0, .seed = 1}))),
                   anytime);
}

}  // namespace

int main(int argc, char** argv) { return memsched_bench::run_benchmarks(argc, argv, register_all); }
