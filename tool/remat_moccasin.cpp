// memsched remat GRAPH --budget B --algo moccasin [--backend gecode] [--order ORDER.json |
//   --order-from graph|kahn|best|heuristic] [--time-limit S] [--threads N] [--progress] [--max-intervals C] [--seed K]
//   [--max-memory BYTES|N%]

#include "cli.hpp"
#include "remat_order.hpp"

#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/moccasin.hpp>
#ifdef MEMSCHED_HAVE_GECODE
#include <memsched/solver/backends/gecode.hpp>
#endif

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace memsched_cli {
namespace {

const std::string moccasin_usage = std::string(
    "    Moccasin (ICML 2023): retention-interval CP model over the staged time domain of an input\n"
    "    order; phase 1 minimises max(peak, budget), phase 2 the total cost within the budget,\n"
    "    started from phase 1, the best heuristic plan and the eviction greedy along the order; never\n"
    "    dearer than the cheapest of those starts that fits the budget. Extra JSON: bound, backend,\n"
    "    order_source, start, time_to_best, gap, phase1_peak.\n"
    "    --backend NAME          CP backend: gecode (default; large-neighbourhood search)\n") + remat_order_usage +
    "    --time-limit S          seconds for the whole solve (default 60)\n"
    "    --threads N             backend threads (branch and bound only)\n"
    "    --max-intervals C       computations per vertex (default 2)\n"
    "    --seed K                local-search seed (default 1)\n"
    "    --progress              print phases, peaks (phase 1) and costs (phase 2) on stderr\n"
    "    --max-memory BYTES|N%   cap on the models' estimated memory (default: half the RAM, at\n"
    "                            most half the address-space limit); bigger models are not built\n"
    "                            (status no_solution, message with both sizes)\n";

memsched::remat_result run_moccasin(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args, json& extra) {
  const std::string backend = args.get_or("backend", "gecode");
  const auto time_limit = time_limit_or_default(args);
  const unsigned threads = threads_of(args);
  const auto intervals = integer_of(args, "max-intervals", 2, 1, std::numeric_limits<unsigned>::max());
  // count_of: the one rule of every --seed (an integer >= 0), as lifetime-search's.
  const auto seed = count_of(args, "seed", 1);
  const auto max_memory = max_memory_of(args);
  const auto t0 = std::chrono::steady_clock::now();
  auto used = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const memsched::remat_result heuristic = memsched::best_heuristic_plan(graph, budget);
  const memsched::input_order_result in = remat_order_of(graph, args, order_limit(time_limit), heuristic);
  const double prep = used();
  progress_printer printer(args, prep, progress_values::number);
  memsched::remat_result r;
#ifdef MEMSCHED_HAVE_GECODE
  if (backend == "gecode") {
    memsched::moccasin_options o{.backend = memsched::gecode_backend{{.seed = static_cast<std::uint64_t>(seed)}}};
    o.order = in.order;
    o.max_intervals = static_cast<unsigned>(intervals);
    if (memsched::has_solution(heuristic.status)) o.start_plans.push_back(heuristic.plan);
    o.solver.threads = threads;
    o.solver.time_limit = left_of(time_limit, prep);
    o.solver.observer = printer;
    if (max_memory) o.max_bytes = *max_memory;
    r = memsched::moccasin_plan(graph, budget, o);
  } else
#endif
  {
    (void)seed;
    (void)threads;
    std::vector<std::string> built;
#ifdef MEMSCHED_HAVE_GECODE
    built.emplace_back("gecode");
#endif
    throw_unavailable_backend(backend, "moccasin", built);
  }
  extra["backend"] = r.stats.backend;
  extra["order_source"] = in.source;
  extra["bound"] = r.cost_bound ? json(*r.cost_bound) : json(nullptr);
  extra["gap"] = r.cost_bound && r.total_cost > 0 ? json((r.total_cost - *r.cost_bound) / r.total_cost) : json(nullptr);
  extra["time_to_best"] = prep + r.stats.seconds_to_best;
  extra["phase1_peak"] = r.stats.phase1_peak;
  extra["phase1_seconds"] = prep + r.stats.phase1_seconds;
  extra["start"] = r.stats.start_source;
  extra["heuristic_cost"] = memsched::has_solution(heuristic.status) ? json(heuristic.total_cost) : json(nullptr);
  if (!r.message.empty()) extra["message"] = r.message;
  return r;
}

const register_remat_algorithm moccasin_algorithm{
    {"moccasin", moccasin_usage,
     option_spec{{"backend", "order", "order-from", "time-limit", "threads", "max-intervals", "seed", "max-memory"}, {"progress"}}, run_moccasin}};

}  // namespace
}  // namespace memsched_cli
