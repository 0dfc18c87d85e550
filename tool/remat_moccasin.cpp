// memsched remat GRAPH --budget B --algo moccasin [--backend gecode] [--order ORDER.json |
//   --order-from graph|kahn|best] [--time-limit S] [--threads N] [--progress] [--max-intervals C] [--seed K]

#include "cli.hpp"

#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkmate.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/moccasin.hpp>
#ifdef MEMSCHED_HAVE_GECODE
#include <memsched/solver/backends/gecode.hpp>
#endif

#include <chrono>
#include <cstdio>

namespace memsched_cli {
namespace {

const char* const moccasin_usage =
    "    Moccasin (ICML 2023): retention-interval CP model over the staged time domain of an input\n"
    "    order; phase 1 minimises max(peak, budget), phase 2 the total cost within the budget,\n"
    "    started from phase 1 and the best heuristic plan. Extra JSON: bound, backend, order_source,\n"
    "    time_to_best, gap, phase1_peak.\n"
    "    --backend NAME          CP backend: gecode (default; large-neighbourhood search)\n"
    "    --order ORDER.json      input order ({\"order\": [ids]} or [ids])\n"
    "    --order-from SOURCE     graph (the file's order, else checkpoint-all's), kahn, best\n"
    "                            (default: the lowest peak of Serenity and the basic orders)\n"
    "    --time-limit S          seconds for the whole solve (default 60)\n"
    "    --threads N             backend threads (branch and bound only)\n"
    "    --max-intervals C       computations per vertex (default 2)\n"
    "    --seed K                local-search seed (default 1)\n"
    "    --progress              print each better plan on stderr\n";

std::vector<std::size_t> moccasin_order(const memsched::dataflow_graph& graph, const memsched::memory_graph& g,
                                        const parsed_args& args, double time_limit, std::string& source) {
  if (auto file = args.get("order")) {
    const json doc = read_json_file(*file);
    const json& ids = doc.is_object() ? doc.at("order") : doc;
    source = "file";
    return indices_of(graph, ids, "--order " + *file);
  }
  const std::string from = args.get_or("order-from", "best");
  const auto& file_order = graph[boost::graph_bundle].order;
  if (from == "graph") {
    if (!file_order.empty()) {
      source = "graph";
      return file_order;
    }
    // No order in the file: the order of the plan without recomputation (checkpoint-all), whose
    // peak is the "no-remat peak" that percentage budgets refer to.
    const memsched::remat_result all = memsched::checkpoint_all_plan(graph);
    std::vector<std::size_t> order;
    std::vector<char> seen(g.size(), 0);
    for (const auto& st : all.plan.steps)
      if (st.op == memsched::plan_op::compute && !seen[st.node]) {
        seen[st.node] = 1;
        order.push_back(st.node);
      }
    if (memsched::has_solution(all.status) && order.size() == g.size()) {
      source = "checkpoint-all (the graph has no order)";
      return order;
    }
    source = "kahn (the graph has no order)";
    return memsched::kahn_order(g).order;
  }
  if (from == "kahn") {
    source = "kahn";
    return memsched::kahn_order(g).order;
  }
  if (from != "best") throw usage_error("--order-from must be graph, kahn or best, got '" + from + "'");
  std::optional<std::vector<std::size_t>> extra;
  if (!file_order.empty()) extra = file_order;
  source = "best";
  const double serenity_seconds = std::clamp(time_limit * 0.1, 1.0, 30.0);
  return memsched::checkmate_input_order(g, std::chrono::duration<double>(serenity_seconds), extra).order;
}

memsched::remat_result run_moccasin(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args, json& extra) {
  const std::string backend = args.get_or("backend", "gecode");
  const double time_limit = args.get_double("time-limit").value_or(60.0);
  if (!(time_limit > 0)) throw usage_error("--time-limit must be > 0");
  const auto threads = args.get_int("threads").value_or(1);
  if (threads < 1) throw usage_error("--threads must be >= 1");
  const auto intervals = args.get_int("max-intervals").value_or(2);
  if (intervals < 1) throw usage_error("--max-intervals must be >= 1");
  const auto seed = args.get_int("seed").value_or(1);
  const auto t0 = std::chrono::steady_clock::now();
  auto used = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const memsched::memory_graph g = memsched::make_memory_graph(graph, memsched::default_node_maps(graph));
  std::string source;
  memsched::moccasin_options o;
  o.order = moccasin_order(graph, g, args, time_limit, source);
  o.max_intervals = static_cast<unsigned>(intervals);
  const memsched::remat_result heuristic = memsched::best_heuristic_plan(graph, budget);  // needs the forward/backward marks
  if (memsched::has_solution(heuristic.status)) o.start_plans.push_back(heuristic.plan);
  o.solver.threads = static_cast<unsigned>(threads);
  const bool progress = args.has("progress");
  double prep = used();
  o.solver.time_limit = std::chrono::duration<double>(std::max(0.1, time_limit - prep));
  progress_printer printer(progress, prep);
  o.solver.observer = printer;
  o.on_phase1 = [&](double s, std::int64_t peak) {
    if (progress) std::fprintf(stderr, "moccasin phase 1: %.2f s  peak %lld\n", prep + s, static_cast<long long>(peak));
  };
  memsched::moccasin_stats stats;
  o.stats = &stats;
  memsched::remat_result r;
#ifdef MEMSCHED_HAVE_GECODE
  if (backend == "gecode") {
    r = memsched::moccasin(g, budget, memsched::gecode_backend{{.seed = static_cast<std::uint64_t>(seed)}}, o);
  } else
#endif
  {
    (void)seed;
    throw usage_error("--backend '" + backend + "' is not available for moccasin (built: "
#ifdef MEMSCHED_HAVE_GECODE
                      "gecode"
#endif
                      ")");
  }
  extra["backend"] = backend;
  extra["order_source"] = source;
  extra["bound"] = r.cost_bound ? json(*r.cost_bound) : json(nullptr);
  extra["gap"] = r.cost_bound && r.total_cost > 0 ? json((r.total_cost - *r.cost_bound) / r.total_cost) : json(nullptr);
  extra["time_to_best"] = printer.seconds_to_best();
  extra["phase1_peak"] = stats.phase1_peak;
  extra["phase1_seconds"] = stats.phase1_seconds;
  extra["start"] = stats.start;
  extra["heuristic_cost"] = memsched::has_solution(heuristic.status) ? json(heuristic.total_cost) : json(nullptr);
  if (!stats.message.empty()) extra["message"] = stats.message;
  return r;
}

const register_remat_algorithm moccasin_algorithm{
    {"moccasin", moccasin_usage,
     option_spec{{"backend", "order", "order-from", "time-limit", "threads", "max-intervals", "seed"}, {"progress"}}, run_moccasin}};

}  // namespace
}  // namespace memsched_cli
