// memsched remat GRAPH --budget B --algo checkmate-milp|checkmate-lp [--backend cbc|glpk]
//   [--order ORDER.json | --order-from graph|kahn|best|heuristic] [--time-limit S] [--threads N]
//   [--gap G] [--progress] [--max-memory BYTES|N%]

#include "cli.hpp"
#include "remat_order.hpp"

#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkmate.hpp>
#include <memsched/remat/checkmate_lp_rounding.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace memsched_cli {
namespace {

const std::string checkmate_usage = std::string(
    "    Checkmate's MILP (Jain et al. 2020) over the staged plans of an input order, with start\n"
    "    solutions (heuristics, eviction greedy, LP rounding) and large-neighbourhood search.\n"
    "    --backend cbc|glpk      MILP solver (default: cbc when built)\n") + remat_order_usage +
    "    --time-limit S          wall clock for the whole run (default 60)\n"
    "    --threads N             solver threads (CBC's tree search)\n"
    "    --gap G                 relative gap at which the solver stops, in [0, 1] (default 1e-6)\n"
    "    --progress              print each better plan to stderr\n"
    "    --max-memory BYTES|N%   cap on the model's estimated memory (default: half the RAM, at most\n"
    "                            half the address-space limit); a bigger model is not built\n"
    "                            (status no_solution, message with both sizes)\n"
    "    Extra fields: bound, backend, seconds, order_source, start_source, start_cost, message.\n";

const char* const checkmate_lp_usage =
    "    Checkmate's LP relaxation with two-phase rounding (thresholds and randomized rounding of\n"
    "    S, cheapest R); status no_solution when no rounding fits. Options as checkmate-milp\n"
    "    (--backend, --order, --order-from, --time-limit, --progress, --max-memory).\n";

const option_spec checkmate_spec{{"backend", "order", "order-from", "time-limit", "threads", "gap", "max-memory"}, {"progress"}};
// The LP relaxation has no gap to stop at.
const option_spec checkmate_lp_spec{{"backend", "order", "order-from", "time-limit", "threads", "max-memory"}, {"progress"}};

/// The fields every solver-based algorithm adds to the output.
void add_stats(json& extra, const memsched::remat_result& r, const memsched::input_order_result& in, double used) {
  extra["backend"] = r.stats.backend;
  extra["bound"] = r.cost_bound ? json(*r.cost_bound) : json(nullptr);
  extra["order_source"] = in.source;
  extra["seconds_to_best"] = r.stats.seconds_to_best + used;
  extra["variables"] = r.stats.variables;
  extra["constraints"] = r.stats.constraints;
  extra["nonzeros"] = r.stats.nonzeros;
  if (!r.message.empty()) extra["message"] = r.message;
}

memsched::remat_result run_checkmate_milp(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args,
                                          json& extra) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto limit = time_limit_or_default(args);
  const auto max_memory = max_memory_of(args);
  const double gap = gap_of(args);
  std::optional<memsched::remat_result> heuristic;
  try {
    heuristic = memsched::best_heuristic_plan(graph, budget);
  } catch (const std::exception&) {
    // Heuristics that do not apply to this graph: no start from them.
  }
  const memsched::input_order_result in = remat_order_of(graph, args, order_limit(limit), heuristic);
  const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress_printer printer(args, used, progress_values::cost, total_cost_of(graph));
  return with_milp_backend(args, "checkmate", /*allow_none=*/std::false_type{}, [&](const auto& backend) -> memsched::remat_result {
    memsched::checkmate_options o{.backend = backend};
    o.order = in.order;
    o.solver.time_limit = left_of(limit, used);
    o.solver.threads = threads_of(args);
    o.solver.relative_gap = gap;
    o.solver.observer = printer;
    if (max_memory) o.max_bytes = *max_memory;
    if (heuristic && memsched::has_solution(heuristic->status)) o.start_plans.push_back(heuristic->plan);
    const memsched::remat_result r = memsched::checkmate_milp_plan(graph, budget, o);
    add_stats(extra, r, in, used);
    extra["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    extra["start_source"] = r.stats.start_source;
    extra["start_cost"] = r.stats.start_cost ? json(*r.stats.start_cost) : json(nullptr);
    extra["lns_rounds"] = r.stats.lns_rounds;
    extra["lns_improvements"] = r.stats.lns_improvements;
    return r;
  });
}

memsched::remat_result run_checkmate_lp(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args,
                                        json& extra) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto limit = time_limit_or_default(args);
  const auto max_memory = max_memory_of(args);
  const memsched::input_order_result in = remat_order_of(graph, budget, args, order_limit(limit));
  const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress_printer printer(args, used, progress_values::cost, total_cost_of(graph));
  return with_milp_backend(args, "checkmate", /*allow_none=*/std::false_type{}, [&](const auto& backend) -> memsched::remat_result {
    if constexpr (memsched::lp_backend<std::decay_t<decltype(backend)>>) {
      memsched::checkmate_lp_options o{.backend = backend};
      o.order = in.order;
      o.solver.time_limit = left_of(limit, used);
      o.solver.threads = threads_of(args);
      o.solver.observer = printer;
      if (max_memory) o.max_bytes = *max_memory;
      const memsched::remat_result r = memsched::checkmate_lp_plan(graph, budget, o);
      add_stats(extra, r, in, used);
      extra["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      extra["lps_solved"] = r.stats.lps_solved;
      extra["roundings"] = r.stats.roundings;
      extra["roundings_fit"] = r.stats.roundings_fit;
      return r;
    } else {
      throw usage_error("--backend '" + std::string(backend.name()) + "' does not solve LPs");
    }
  });
}

const register_remat_algorithm checkmate_milp_algo{{"checkmate-milp", checkmate_usage, checkmate_spec, run_checkmate_milp}};
const register_remat_algorithm checkmate_lp_algo{{"checkmate-lp", checkmate_lp_usage, checkmate_lp_spec, run_checkmate_lp}};

}  // namespace
}  // namespace memsched_cli
