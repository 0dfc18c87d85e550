// HiRemate's parts as they exist: H-Partition (remat/hiremate_partition.hpp) and the lowest-level
// solve of one subgraph (remat/hiremate_subgraph.hpp).
// - partition_gpt/L: the forward part of the training graph of a GPT stack (make_gpt, d = 512,
//   8 heads, vocabulary 32,000, sequence 256; L = 12, 24, 96, 384: 374 .. 11,534 training nodes),
//   M^l = 20, M^t = 30; `finish` = every round run to the end (stop_at_max_top = false).
// - partition_shared/<file>: every torch/*.training.json of ../shared/graphs.
// - block_options/L: the options of one transformer block (a level-0 group of the most repeated
//   class) of the L-layer stack, 8 budgets, N_o = 4; block_options_milp/96 (when CBC was built):
//   the same with Checkmate's MILP per budget (20 s limit, started from the heuristic's plan),
//   N_o = 8, one iteration.
// - lower_orders/<file>: the Serenity order at the lowest level (issue 10: "the Serenity DP where
//   no recomputation is needed"): for each level-0 class of every torch/*.training.json (default
//   partition options, ops from the file), the no-remat peak of its subgraph problem along the
//   problem's topological order against serenity_order's (1 s per problem). Counters: classes,
//   serenity_lower (classes where Serenity's peak is lower), best_ratio_pct (its lowest peak in %
//   of the topological order's), proven (classes where Serenity proved its peak optimal).
// - plan_shared/<file>/<pct>: hiremate_plan on gpt2_medium and gpt_96 training graphs at 20-50% of
//   the no-remat peak; plan_gpt/<L>: GPT stacks (as above) at 30%; plan_gpt_levels3/<L>: the same
//   with hiremate_options::levels = 3. Counters: hier_overhead_pct and heur_overhead_pct (the
//   start: best heuristic, DTR and the eviction greedy; -1: no plan), from_hierarchy (1 when the
//   returned plan is the hierarchy's), groups, problems (subgraph problems solved), levels_won
//   (stats.levels: 3 when the third level gave the hierarchy's plan).
// - rounds/<file>/<pct>/<stop|full|both>: the hierarchy alone (no heuristic start) on every
//   torch/*.training.json at 20-50% of the no-remat peak, with H-Partition's rounds stopped at M^t
//   nodes (the authors' rule), finished (partition.stop_at_max_top = false), or both per grain
//   (the default, hiremate_options::also_full_rounds). Counters: hier_overhead_pct (-1: no plan),
//   full_rounds (1 when the plan's partition had finished rounds), partitions (tried), groups.
// - options/<graph>/<pct>/<default|ladder-ends|ladder-ends-no-dtr>: the hierarchy alone (one
//   partition, no heuristic start) on the bundled training graphs of tests/data/torch (resnet18,
//   mobilenet_v2, googlenet, gpt2_small, gpt2_medium) at 20-80% of the no-remat peak, with the
//   default options, with the keep-set ladder's two ends only (ladder_rungs = 1), and with that
//   and no DTR at the lowest level: what the ladder and DTR's options buy. Counter:
//   hier_overhead_pct (-1: no plan).
// - compare/<file>/<pct>/<method>: the comparison on gpt2_small, gpt2_medium, gpt_96,
//   transformer_6_6 and resnet101 at 20-50% of the no-remat peak, one call each: hiremate (its
//   defaults), best-heuristic, and (when built) the flat checkmate-milp (CBC) and moccasin (Gecode),
//   each with MEMSCHED_FLAT_SECONDS (default 120) for the whole call, the best heuristic's plan as
//   a start, along the `best` input order (input_order_within(limit), as the tool's --order-from
//   best). Counters: overhead_pct (-1: no plan), peak_pct (of the no-remat peak),
//   status (solve_status), seconds (the call's wall time), maxrss_mb and child_maxrss_mb (CBC
//   solves in a child process): run one row per process
//   (--benchmark_filter='^compare/torch/gpt2_medium.training/30/moccasin/iterations:1$') to read
//   the solver's memory.
// Counters: nodes (training graph), levels, subgraphs, distinct (classes of 2+ vertices),
// largest (vertices), top (nodes of the top graph), most_repeated (groups of the most repeated
// class); block_options: options, found (Pareto options before thinning), low_peak_pct (lowest
// option's peak in % of the block's no-remat peak), low_overhead_pct; maxrss_mb (the process's
// high-water mark: run one benchmark per process with --benchmark_filter to read it per case).
// Environment: MEMSCHED_SHARED_GRAPHS (graphs folder).

#include <memsched/graph/gpt.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/hiremate.hpp>
#include <memsched/remat/hiremate_partition.hpp>
#include <memsched/remat/hiremate_subgraph.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/simulate_order.hpp>

#ifdef MEMSCHED_HAVE_CBC
#include <memsched/remat/checkmate.hpp>
#include <memsched/solver/backends/cbc.hpp>
#endif
#ifdef MEMSCHED_HAVE_GECODE
#include <memsched/remat/moccasin.hpp>
#include <memsched/solver/backends/gecode.hpp>
#endif

#include <benchmark/benchmark.h>

#include "bench_support.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace {

/// High-water mark of this process, or (children) of the largest child it waited for: CBC
/// solves in a child process (solver/backends/cbc.hpp's isolation).
double maxrss_mb(bool children = false) {
  rusage u{};
  getrusage(children ? RUSAGE_CHILDREN : RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

memsched::memory_graph gpt_training(std::size_t layers) {
  return memsched::make_memory_graph(
      memsched::make_training_graph(memsched::make_gpt({.layers = layers, .hidden = 512, .heads = 8, .vocab = 32000})));
}

void report(benchmark::State& state, const memsched::memory_graph& g, const memsched::hiremate_partition_result& r) {
  std::size_t most = 0;
  for (const auto& c : r.classes)
    if (c.vertices >= 2) most = std::max(most, c.count);
  state.counters["nodes"] = static_cast<double>(g.size());
  state.counters["levels"] = static_cast<double>(r.stats.levels);
  state.counters["subgraphs"] = static_cast<double>(r.stats.subgraphs);
  state.counters["distinct"] = static_cast<double>(r.stats.distinct_subgraphs);
  state.counters["largest"] = static_cast<double>(r.stats.largest_subgraph);
  state.counters["top"] = static_cast<double>(r.stats.top_nodes);
  state.counters["most_repeated"] = static_cast<double>(most);
  state.counters["maxrss_mb"] = maxrss_mb();
}

void partition_gpt(benchmark::State& state, std::size_t layers, bool finish) {
  const memsched::memory_graph g = gpt_training(layers);
  const memsched::hiremate_partition_options o{.max_lower = 20, .max_top = 30, .stop_at_max_top = !finish};
  memsched::hiremate_partition_result r;
  for (auto _ : state) {
    r = memsched::hiremate_partition(g, o);
    benchmark::DoNotOptimize(r);
  }
  report(state, g, r);
}

/// Partition options with the ops of `d` (they decide the classes, as the tool reads them).
memsched::hiremate_partition_options with_ops(memsched::hiremate_partition_options o, const memsched::dataflow_graph& d) {
  for (std::size_t v = 0; v < num_vertices(d); ++v) o.ops.push_back(d[v].op);
  return o;
}

void partition_file(benchmark::State& state, const std::filesystem::path& file) {
  const memsched::dataflow_graph d = memsched::read_json_graph(file);
  const memsched::memory_graph g = memsched::make_memory_graph(d);
  const memsched::hiremate_partition_options o = with_ops({.max_lower = 20, .max_top = 30}, d);
  memsched::hiremate_partition_result r;
  for (auto _ : state) {
    r = memsched::hiremate_partition(g, o);
    benchmark::DoNotOptimize(r);
  }
  report(state, g, r);
}

void lower_orders(benchmark::State& state, const std::filesystem::path& file) {
  const memsched::dataflow_graph d = memsched::read_json_graph(file);
  const memsched::memory_graph g = memsched::make_memory_graph(d);
  const memsched::hiremate_partition_result part = memsched::hiremate_partition(g, with_ops({}, d));
  std::size_t classes = 0, lower = 0, proven = 0;
  double best_ratio = 1;
  for (auto _ : state) {
    classes = lower = proven = 0;
    best_ratio = 1;
    for (const auto& c : part.classes) {
      if (c.level != 0) continue;
      const auto sub = memsched::make_hiremate_subgraph(g, part.levels[0].groups[c.group].vertices);
      const auto& topo = sub.graph.topological_order();
      const std::int64_t along_topo = memsched::simulate_order(sub.graph, std::vector<std::size_t>(topo.begin(), topo.end())).peak_bytes;
      const auto s = memsched::serenity_order(sub.graph, {.time_limit = std::chrono::duration<double>(1.0)});
      ++classes;
      lower += s.peak_bytes < along_topo;
      proven += s.status == memsched::solve_status::optimal;
      best_ratio = std::min(best_ratio, static_cast<double>(s.peak_bytes) / static_cast<double>(along_topo));
    }
  }
  state.counters["classes"] = static_cast<double>(classes);
  state.counters["serenity_lower"] = static_cast<double>(lower);
  state.counters["best_ratio_pct"] = 100 * best_ratio;
  state.counters["proven"] = static_cast<double>(proven);
}

void block_options(benchmark::State& state, std::size_t layers, bool milp) {
  const memsched::memory_graph g = gpt_training(layers);
  const auto part = memsched::hiremate_partition(g, {.max_lower = 20, .max_top = 30});
  const auto& groups = part.levels.at(0).groups;
  std::size_t cls = groups[0].subgraph_class;
  for (const auto& grp : groups)
    if (part.classes[grp.subgraph_class].count > part.classes[cls].count) cls = grp.subgraph_class;
  const auto& rep = part.levels[0].groups[part.classes[cls].group];
  memsched::hiremate_subgraph_result r;
  for (auto _ : state) {
    if (!milp) {
      r = memsched::hiremate_subgraph_options(g, rep.vertices, {.budgets = 8, .max_options = 4, .resident_levels = 0});
    } else {
#ifdef MEMSCHED_HAVE_CBC
      r = memsched::hiremate_subgraph_options(g, rep.vertices, {.budgets = 8, .max_options = 8, .resident_levels = 0}, [](const memsched::memory_graph& p, std::int64_t b) {
        const memsched::remat_result h = memsched::best_heuristic_plan(p, b);
        memsched::checkmate_options<memsched::cbc_backend> o{.solver = {.time_limit = std::chrono::seconds(20)}};
        if (has_solution(h.status)) o.start_plans = {h.plan};
        return memsched::checkmate_milp_plan(p, b, o);
      });
#endif
    }
    benchmark::DoNotOptimize(r);
  }
  state.counters["block_vertices"] = static_cast<double>(rep.vertices.size());
  state.counters["options"] = static_cast<double>(r.options.size());
  state.counters["found"] = static_cast<double>(r.found);
  if (!r.options.empty()) {
    state.counters["low_peak_pct"] = 100.0 * static_cast<double>(r.options.front().peak_bytes) / static_cast<double>(r.no_remat_peak);
    state.counters["low_overhead_pct"] = 100.0 * (r.options.front().cost / r.options.back().cost - 1);
  }
  state.counters["maxrss_mb"] = maxrss_mb();
}

/// The no-remat peak the budgets are percentages of: the graph's topological order run once.
std::int64_t no_remat_peak(const memsched::memory_graph& g) {
  const auto& topo = g.topological_order();
  return memsched::simulate_order(g, std::vector<std::size_t>(topo.begin(), topo.end())).peak_bytes;
}

void plan_graph(benchmark::State& state, const memsched::memory_graph& g, int pct, std::size_t levels = 2) {
  const std::int64_t budget = no_remat_peak(g) * pct / 100;
  double base = 0;
  for (std::size_t v = 0; v < g.size(); ++v) base += g.cost(v);
  memsched::remat_result r;
  for (auto _ : state) {
    r = memsched::hiremate_plan(g, budget, memsched::hiremate_options{.levels = levels});
    benchmark::DoNotOptimize(r);
  }
  auto pct_of = [&](const std::optional<double>& c) { return c ? 100.0 * (*c / base - 1) : -1.0; };
  state.counters["nodes"] = static_cast<double>(g.size());
  state.counters["hier_overhead_pct"] = pct_of(r.stats.hiremate->hierarchy_cost);
  state.counters["heur_overhead_pct"] = pct_of(r.stats.hiremate->heuristic_cost);
  state.counters["from_hierarchy"] = r.stats.hiremate->source == "hierarchy" ? 1 : 0;
  state.counters["groups"] = static_cast<double>(r.stats.hiremate->groups);
  state.counters["problems"] = static_cast<double>(r.stats.hiremate->classes_solved);
  state.counters["levels_won"] = static_cast<double>(r.stats.hiremate->levels);
  state.counters["maxrss_mb"] = maxrss_mb();
}

/// One rounds/<file>/<pct>/<rounds> row (see the header comment).
void rounds_row(benchmark::State& state, const std::filesystem::path& file, int pct, const std::string& rounds) {
  const memsched::memory_graph g = memsched::make_memory_graph(memsched::read_json_graph(file));
  const std::int64_t budget = no_remat_peak(g) * pct / 100;
  memsched::hiremate_options o{.heuristic_start = false};
  o.tuning.also_full_rounds = rounds == "both";
  o.partition.stop_at_max_top = rounds != "full";
  memsched::remat_result r;
  for (auto _ : state) {
    r = memsched::hiremate_plan(g, budget, o);
    benchmark::DoNotOptimize(r);
  }
  state.counters["hier_overhead_pct"] = memsched::has_solution(r.status) ? 100.0 * r.overhead : -1.0;
  state.counters["full_rounds"] = r.stats.hiremate->partition.full_rounds ? 1 : 0;
  state.counters["partitions"] = static_cast<double>(r.stats.hiremate->partitions_tried);
  state.counters["groups"] = static_cast<double>(r.stats.hiremate->groups);
}

/// One options/<graph>/<pct>/<variant> row (see the header comment).
void options_row(benchmark::State& state, const std::filesystem::path& file, int pct, const std::string& variant) {
  const memsched::memory_graph g = memsched::make_memory_graph(memsched::read_json_graph(file));
  const std::int64_t budget = no_remat_peak(g) * pct / 100;
  memsched::hiremate_options o{.heuristic_start = false, .tuning = {.partitions = 1}};
  if (variant != "default") o.tuning.ladder_rungs = 1;
  if (variant == "ladder-ends-no-dtr") o.dtr = false;
  memsched::remat_result r;
  for (auto _ : state) {
    r = memsched::hiremate_plan(g, budget, o);
    benchmark::DoNotOptimize(r);
  }
  state.counters["hier_overhead_pct"] = memsched::has_solution(r.status) ? 100.0 * r.overhead : -1.0;
}

/// One compare/<file>/<pct>/<method> row (see the header comment).
void compare_row(benchmark::State& state, const std::filesystem::path& file, int pct, const std::string& method) {
  const memsched::memory_graph g = memsched::make_memory_graph(memsched::read_json_graph(file));
  const std::int64_t peak = no_remat_peak(g);
  const std::int64_t budget = peak * pct / 100;
  const std::chrono::duration<double> limit(memsched_bench::env_number("MEMSCHED_FLAT_SECONDS", 120));
  memsched::remat_result r;
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (method == "hiremate") {
      r = memsched::hiremate_plan(g, budget, memsched::hiremate_options{});
    } else {
      const memsched::remat_result start = memsched::best_heuristic_plan(g, budget);
      if (method == "best-heuristic") {
        r = start;
      } else {
        std::vector<memsched::execution_plan> starts;
        if (memsched::has_solution(start.status)) starts.push_back(start.plan);
        const auto order = memsched::remat_input_order(g, memsched::input_order_within(limit)).order;
        const auto left = limit - (std::chrono::steady_clock::now() - t0);
#ifdef MEMSCHED_HAVE_CBC
        if (method == "checkmate-milp")
          r = memsched::checkmate_milp_plan(g, budget, memsched::checkmate_options<memsched::cbc_backend>{
                                                           .solver = {.time_limit = left}, .order = order, .start_plans = starts});
#endif
#ifdef MEMSCHED_HAVE_GECODE
        if (method == "moccasin")
          r = memsched::moccasin_plan(g, budget, memsched::moccasin_options<memsched::gecode_backend>{
                                                     .solver = {.time_limit = left}, .order = order, .start_plans = starts});
#endif
      }
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  state.counters["overhead_pct"] = memsched::has_solution(r.status) ? 100.0 * r.overhead : -1.0;
  state.counters["peak_pct"] = memsched::has_solution(r.status) ? 100.0 * static_cast<double>(r.peak_bytes) / static_cast<double>(peak) : -1.0;
  state.counters["status"] = static_cast<double>(static_cast<int>(r.status));
  state.counters["seconds"] = seconds;
  state.counters["maxrss_mb"] = maxrss_mb();
  state.counters["child_maxrss_mb"] = maxrss_mb(true);
  state.SetLabel(std::string(to_string(r.status)) + " " + r.message.substr(0, 80));
}

}  // namespace

int main(int argc, char** argv) {
  return memsched_bench::run_benchmarks(argc, argv, [] {
    const auto torch_training = [](const std::string& name) { return name.rfind("torch/", 0) == 0 && name.find(".training") != std::string::npos; };
    for (std::size_t layers : {12u, 24u, 96u, 384u}) {
      benchmark::RegisterBenchmark(("partition_gpt/" + std::to_string(layers)).c_str(), partition_gpt, layers, false)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("partition_gpt_finish/" + std::to_string(layers)).c_str(), partition_gpt, layers, true)
          ->Unit(benchmark::kMillisecond);
    }
    for (const auto& file : memsched_bench::shared_graph_files(torch_training)) {
      benchmark::RegisterBenchmark(("partition_shared/" + memsched_bench::graph_name(file)).c_str(), partition_file, file)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("lower_orders/" + memsched_bench::graph_name(file)).c_str(), lower_orders, file)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
    }
    for (std::size_t layers : {12u, 96u})
      benchmark::RegisterBenchmark(("block_options/" + std::to_string(layers)).c_str(), block_options, layers, false)->Unit(benchmark::kMillisecond);
    for (const auto& file : memsched_bench::shared_graph_files([](const std::string& name) {
           return name == "torch/gpt2_medium.training" || name == "torch/gpt_96.training";
         }))
      for (int pct : {20, 30, 40, 50})
        benchmark::RegisterBenchmark(("plan_shared/" + memsched_bench::graph_name(file) + "/" + std::to_string(pct)).c_str(),
                                     [file, pct](benchmark::State& st) { plan_graph(st, memsched::make_memory_graph(memsched::read_json_graph(file)), pct); })
            ->Unit(benchmark::kMillisecond);
    for (std::size_t layers : {12u, 24u, 96u, 384u})
      for (std::size_t levels : {2u, 3u})
        benchmark::RegisterBenchmark(((levels == 2 ? "plan_gpt/" : "plan_gpt_levels3/") + std::to_string(layers)).c_str(),
                                     [layers, levels](benchmark::State& st) { plan_graph(st, gpt_training(layers), 30, levels); })
            ->Unit(benchmark::kMillisecond);
    for (const auto& file : memsched_bench::shared_graph_files(torch_training))
      for (int pct : {20, 30, 40, 50})
        for (const char* rounds : {"stop", "full", "both"})
          benchmark::RegisterBenchmark(("rounds/" + memsched_bench::graph_name(file) + "/" + std::to_string(pct) + "/" + rounds).c_str(), rounds_row,
                                       file, pct, std::string(rounds))
              ->Unit(benchmark::kMillisecond);
    for (const char* name : {"resnet18", "mobilenet_v2", "googlenet", "gpt2_small", "gpt2_medium"})
      for (int pct = 20; pct <= 80; pct += 20)
        for (const char* variant : {"default", "ladder-ends", "ladder-ends-no-dtr"}) {
          const std::filesystem::path file = std::filesystem::path(MEMSCHED_BENCH_DATA_DIR) / "torch" / (std::string(name) + ".training.json");
          benchmark::RegisterBenchmark(("options/" + std::string(name) + "/" + std::to_string(pct) + "/" + variant).c_str(), options_row,
                                       file, pct, std::string(variant))
              ->Unit(benchmark::kMillisecond)
              ->Iterations(1);
        }
    std::vector<std::string> methods{"hiremate", "best-heuristic"};
#ifdef MEMSCHED_HAVE_CBC
    methods.emplace_back("checkmate-milp");
#endif
#ifdef MEMSCHED_HAVE_GECODE
    methods.emplace_back("moccasin");
#endif
    for (const auto& file : memsched_bench::shared_graph_files([](const std::string& name) {
           for (const char* g : {"gpt2_small", "gpt2_medium", "gpt_96", "transformer_6_6", "resnet101"})
             if (name == std::string("torch/") + g + ".training") return true;
           return false;
         }))
      for (int pct : {20, 30, 40, 50})
        for (const auto& method : methods)
          benchmark::RegisterBenchmark(("compare/" + memsched_bench::graph_name(file) + "/" + std::to_string(pct) + "/" + method).c_str(),
                                       compare_row, file, pct, method)
              ->Unit(benchmark::kSecond)
              ->Iterations(1);
#ifdef MEMSCHED_HAVE_CBC
    benchmark::RegisterBenchmark("block_options_milp/96", block_options, std::size_t{96}, true)->Unit(benchmark::kSecond)->Iterations(1);
#endif
  });
}
