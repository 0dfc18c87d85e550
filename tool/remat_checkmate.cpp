// memsched remat GRAPH --budget B --algo checkmate-milp|checkmate-lp [--backend cbc|glpk]
//   [--order ORDER.json | --order-from graph|kahn|best|heuristic] [--time-limit S] [--threads N]
//   [--gap G] [--progress]

#include "cli.hpp"

#include <memsched/order/kahn.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/checkmate.hpp>
#include <memsched/remat/checkmate_lp_rounding.hpp>
#ifdef MEMSCHED_HAVE_CBC
#include <memsched/solver/backends/cbc.hpp>
#endif
#ifdef MEMSCHED_HAVE_GLPK
#include <memsched/solver/backends/glpk.hpp>
#endif

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace memsched_cli {
namespace {

const char* const checkmate_usage =
    "    Checkmate's MILP (Jain et al. 2020) over the staged plans of an input order, with start\n"
    "    solutions (heuristics, eviction greedy, LP rounding) and large-neighbourhood search.\n"
    "    --backend cbc|glpk      MILP solver (default: cbc when built)\n"
    "    --order ORDER.json      input order: a JSON array of node ids, or {\"order\": [...]}\n"
    "    --order-from SOURCE     graph (the file's order), kahn, best (default: the lowest-peak of\n"
    "                            Serenity, Kahn, DFS, greedy and the file's order), heuristic (the\n"
    "                            first computations of the best heuristic plan, so it is a start)\n"
    "    --time-limit S          wall clock for the whole run (default 60)\n"
    "    --threads N             solver threads (CBC's tree search)\n"
    "    --gap G                 relative gap at which the solver stops (default 1e-6)\n"
    "    --progress              print each better plan to stderr\n"
    "    Extra fields: bound, backend, seconds, order_source, start_source, start_cost, message.\n";

const char* const checkmate_lp_usage =
    "    Checkmate's LP relaxation with two-phase rounding (thresholds and randomized rounding of\n"
    "    S, cheapest R); status infeasible when no rounding fits. Options as checkmate-milp\n"
    "    (--backend, --order, --order-from, --time-limit).\n";

const option_spec checkmate_spec{{"backend", "order", "order-from", "time-limit", "threads", "gap"}, {"progress"}};

std::vector<std::size_t> first_computation_order(const memsched::execution_plan& plan, std::size_t n) {
  std::vector<char> seen(n, 0);
  std::vector<std::size_t> order;
  for (const auto& s : plan.steps)
    if (s.op == memsched::plan_op::compute && !seen[s.node]) {
      seen[s.node] = 1;
      order.push_back(s.node);
    }
  return order;
}

struct input_order {
  std::vector<std::size_t> order;
  std::string source;
};

input_order choose_order(const memsched::dataflow_graph& graph, const memsched::memory_graph& g, const parsed_args& args,
                         double time_limit, const std::optional<memsched::remat_result>& heuristic) {
  if (auto file = args.get("order")) {
    const json doc = read_json_file(*file);
    const json& ids = doc.is_object() ? doc.at("order") : doc;
    return {indices_of(graph, ids, "--order " + *file), "file"};
  }
  const std::string from = args.get_or("order-from", "best");
  const auto& file_order = graph[boost::graph_bundle].order;
  if (from == "graph") {
    if (!file_order.empty()) return {file_order, "graph"};
    return {memsched::kahn_order(g).order, "kahn (the graph has no order)"};
  }
  if (from == "kahn") return {memsched::kahn_order(g).order, "kahn"};
  if (from == "heuristic") {
    if (heuristic && memsched::has_solution(heuristic->status))
      return {first_computation_order(heuristic->plan, g.size()), "heuristic"};
    return {memsched::kahn_order(g).order, "kahn (no heuristic plan fits)"};
  }
  if (from != "best") throw usage_error("--order-from must be graph, kahn, best or heuristic, got '" + from + "'");
  std::optional<std::vector<std::size_t>> extra;
  if (!file_order.empty()) extra = file_order;
  const double serenity_seconds = std::clamp(time_limit * 0.1, 1.0, 30.0);
  return {memsched::checkmate_input_order(g, std::chrono::duration<double>(serenity_seconds), extra).order, "best"};
}

template <class Fn>
memsched::remat_result with_backend(const parsed_args& args, Fn&& fn) {
  const std::string backend = args.get_or("backend",
#ifdef MEMSCHED_HAVE_CBC
                                          "cbc"
#else
                                          "glpk"
#endif
  );
#ifdef MEMSCHED_HAVE_CBC
  if (backend == "cbc") return fn(memsched::cbc_backend{});
#endif
#ifdef MEMSCHED_HAVE_GLPK
  if (backend == "glpk") return fn(memsched::glpk_backend{});
#endif
  throw usage_error("--backend '" + backend + "' is not available for checkmate (built: "
#ifdef MEMSCHED_HAVE_CBC
                    "cbc "
#endif
#ifdef MEMSCHED_HAVE_GLPK
                    "glpk"
#endif
                    ")");
}

double time_limit_of(const parsed_args& args) {
  const double s = args.get_double("time-limit").value_or(60.0);
  if (!(s > 0)) throw usage_error("--time-limit must be > 0");
  return s;
}

memsched::remat_result run_checkmate_milp(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args,
                                          json& extra) {
  const auto t0 = std::chrono::steady_clock::now();
  const memsched::memory_graph g = memsched::make_memory_graph(graph);
  const double limit = time_limit_of(args);
  std::optional<memsched::remat_result> heuristic;
  try {
    heuristic = memsched::best_heuristic_plan(graph, budget, memsched::remat_heuristic_options{});
  } catch (const std::exception&) {
    // Heuristics that do not apply to this graph: no start from them.
  }
  const input_order in = choose_order(graph, g, args, limit, heuristic);
  const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  memsched::checkmate_options o;
  o.order = in.order;
  o.time_limit = std::chrono::duration<double>(std::max(0.5, limit - used));
  o.threads = static_cast<int>(args.get_int("threads").value_or(1));
  o.relative_gap = args.get_double("gap").value_or(1e-6);
  if (heuristic && memsched::has_solution(heuristic->status)) o.start_plans.push_back(heuristic->plan);
  const double total = g.total_cost();
  if (args.has("progress"))
    o.on_incumbent = [&, total](const memsched::solver_progress& p) {
      std::fprintf(stderr, "checkmate: %.2f s  cost %.6g  overhead %.3f%%\n", p.seconds + used, p.objective,
                   total > 0 ? 100.0 * (p.objective / total - 1.0) : 0.0);
    };
  return with_backend(args, [&](const auto& backend) -> memsched::remat_result {
    const memsched::checkmate_result r = memsched::checkmate_milp(g, budget, backend, o);
    extra["backend"] = r.backend;
    extra["bound"] = r.cost_bound ? json(*r.cost_bound) : json(nullptr);
    extra["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    extra["order_source"] = in.source;
    extra["start_source"] = r.stats.start_source;
    extra["start_cost"] = std::isnan(r.stats.start_cost) ? json(nullptr) : json(r.stats.start_cost);
    extra["seconds_to_best"] = r.stats.seconds_to_best + used;
    extra["lns_rounds"] = r.stats.lns_rounds;
    extra["lns_improvements"] = r.stats.lns_improvements;
    extra["variables"] = r.stats.variables;
    extra["constraints"] = r.stats.constraints;
    if (!r.message.empty()) extra["message"] = r.message;
    return r;
  });
}

memsched::remat_result run_checkmate_lp(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args,
                                        json& extra) {
  const auto t0 = std::chrono::steady_clock::now();
  const memsched::memory_graph g = memsched::make_memory_graph(graph);
  const double limit = time_limit_of(args);
  const input_order in = choose_order(graph, g, args, limit, std::nullopt);
  const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  memsched::checkmate_lp_options o;
  o.order = in.order;
  o.time_limit = std::chrono::duration<double>(std::max(0.5, limit - used));
  return with_backend(args, [&](const auto& backend) -> memsched::remat_result {
    const memsched::checkmate_lp_result r = memsched::checkmate_lp_rounding(g, budget, backend, o);
    extra["backend"] = r.backend;
    extra["bound"] = r.cost_bound ? json(*r.cost_bound) : json(nullptr);
    extra["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    extra["order_source"] = in.source;
    extra["lps_solved"] = r.lps_solved;
    extra["roundings"] = r.roundings;
    extra["roundings_fit"] = r.roundings_fit;
    if (!r.message.empty()) extra["message"] = r.message;
    if (args.has("progress") && has_solution(r.status))
      std::fprintf(stderr, "checkmate-lp: %.2f s  cost %.6g\n", r.seconds + used, r.total_cost);
    return r;
  });
}

const register_remat_algorithm checkmate_milp_algo{{"checkmate-milp", checkmate_usage, checkmate_spec, run_checkmate_milp}};
const register_remat_algorithm checkmate_lp_algo{{"checkmate-lp", checkmate_lp_usage, checkmate_spec, run_checkmate_lp}};

}  // namespace
}  // namespace memsched_cli
