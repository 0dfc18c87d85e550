// The --order / --order-from flags of the remat algorithms that walk an input order (checkmate-milp,
// checkmate-lp, moccasin, dtr): one parser, the choice itself is memsched::remat_input_order; the
// --time-limit rules the solver-based ones share; and the --backend choice of the MILP-based ones
// (checkmate-milp, checkmate-lp, auto).
#pragma once

#include "cli.hpp"

#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/remat_plan.hpp>
#ifdef MEMSCHED_HAVE_CBC
#include <memsched/solver/backends/cbc.hpp>
#endif
#ifdef MEMSCHED_HAVE_GLPK
#include <memsched/solver/backends/glpk.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace memsched_cli {

/// The peak a "P%" --budget of `memsched remat` is a percentage of: checkpoint-all's.
[[nodiscard]] inline std::int64_t budget_reference_peak(const memsched::dataflow_graph& graph) {
  return memsched::checkpoint_all_plan(graph, memsched::unlimited_budget).peak_bytes;
}

inline const char* const remat_order_usage =
    "    --order ORDER.json      input order: a JSON array of node ids, or {\"order\": [...]}\n"
    "    --order-from SOURCE     graph (the file's order, else checkpoint-all's first computations),\n"
    "                            kahn, best (default: the lowest peak of Serenity, Kahn, DFS, greedy\n"
    "                            and the file's order; Serenity stops after 100,000 stored states, so\n"
    "                            the order is reproducible, or at half the time limit, at most\n"
    "                            30 s, if that comes first), heuristic (the first computations of the best\n"
    "                            heuristic plan, so that it is a start)\n";

/// --time-limit of a solver-based algorithm: 60 s when absent; none when it is huge (time_limit_of's
/// nullopt for a given flag).
inline std::optional<std::chrono::duration<double>> time_limit_or_default(const parsed_args& args) {
  const auto limit = time_limit_of(args);
  if (limit || args.get("time-limit")) return limit;
  return std::chrono::duration<double>(60.0);
}

/// What is left of `limit` after `used` seconds of preparation (none without a limit): the
/// algorithm's limit covers its whole call, so the tool's whole run stays within --time-limit.
inline std::optional<std::chrono::duration<double>> left_of(const std::optional<std::chrono::duration<double>>& limit, double used) {
  if (!limit) return std::nullopt;
  return std::chrono::duration<double>(std::max(0.0, limit->count() - used));
}

/// The limit remat_order_of spreads (half of it, at most 30 s, for Serenity's backstop).
inline std::chrono::duration<double> order_limit(const std::optional<std::chrono::duration<double>>& limit) {
  return limit.value_or(std::chrono::duration<double>(60.0));
}

/// --gap G of the MILP-based algorithms: the relative gap at which the solver stops, a number in
/// [0, 1] (default 1e-6).
inline double gap_of(const parsed_args& args) { return number_of(args, "gap", 1e-6, 0, 1); }

/// The input order chosen by --order FILE or --order-from SOURCE. `heuristic` is the best heuristic
/// plan the caller already computed (used by --order-from heuristic; nullopt: none, the order falls
/// back to Kahn's). Serenity's limits are memsched::input_order_within(time_limit)'s: no floor, so
/// that the whole command keeps its --time-limit.
inline memsched::input_order_result remat_order_of(const memsched::dataflow_graph& graph, const parsed_args& args,
                                                   std::chrono::duration<double> time_limit,
                                                   const std::optional<memsched::remat_result>& heuristic) {
  if (auto file = args.get("order")) {
    auto order = memsched::read_order(*file, node_ids(graph));
    const std::int64_t peak = memsched::order_peak(graph, order);  // also checks the order is topological
    return {std::move(order), peak, "file"};
  }
  const std::string from = args.get_or("order-from", "best");
  const auto source = memsched::parse_input_order_source(from);
  if (!source) throw usage_error("--order-from must be graph, kahn, best or heuristic, got '" + from + "'");
  memsched::input_order_options o = memsched::input_order_within(time_limit);
  o.source = *source;
  if (heuristic && memsched::has_solution(heuristic->status)) o.plan = heuristic->plan;
  return memsched::remat_input_order(graph, o);
}

/// As above for an algorithm that needs no heuristic plan of its own: for --order-from heuristic it
/// computes best_heuristic_plan(graph, budget) (whose exceptions propagate).
inline memsched::input_order_result remat_order_of(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args,
                                                   std::chrono::duration<double> time_limit) {
  std::optional<memsched::remat_result> heuristic;
  if (args.get_or("order-from", "best") == "heuristic") heuristic = memsched::best_heuristic_plan(graph, budget);
  return remat_order_of(graph, args, time_limit, heuristic);
}

/// The usage error of a --backend this build lacks, naming the value, the algorithm and the
/// backends built ("--backend 'x' is not available for auto (built: cbc none)").
[[noreturn]] inline void throw_unavailable_backend(const std::string& backend, std::string_view algorithm,
                                                   const std::vector<std::string>& built) {
  std::string list;
  for (const std::string& b : built) list += (list.empty() ? "" : " ") + b;
  throw usage_error("--backend '" + backend + "' is not available for " + std::string(algorithm) + " (built: " + list + ")");
}

/// Calls fn with the MILP backend --backend names and returns fn's result. Default: cbc when built,
/// else glpk, else "none" with allow_none (else "glpk", which then is not available). With allow_none
/// (std::true_type) "none" calls fn(memsched::no_solver{}) (remat_plan without its MILP stage); with
/// std::false_type fn is never instantiated with no_solver. Complexity: that of fn.
/// Throws: usage_error naming `algorithm_name` and the backends built when --backend names another;
/// what fn throws.
template <bool AllowNone, class Fn>
memsched::remat_result with_milp_backend(const parsed_args& args, std::string_view algorithm_name, std::bool_constant<AllowNone>, Fn&& fn) {
  const std::string backend = args.get_or("backend",
#if defined(MEMSCHED_HAVE_CBC)
                                          "cbc"
#elif defined(MEMSCHED_HAVE_GLPK)
                                          "glpk"
#else
                                          AllowNone ? "none" : "glpk"
#endif
  );
  if constexpr (AllowNone)
    if (backend == "none") return fn(memsched::no_solver{});
#ifdef MEMSCHED_HAVE_CBC
  if (backend == "cbc") return fn(memsched::cbc_backend{});
#endif
#ifdef MEMSCHED_HAVE_GLPK
  if (backend == "glpk") return fn(memsched::glpk_backend{});
#endif
  std::vector<std::string> built;
#ifdef MEMSCHED_HAVE_CBC
  built.emplace_back("cbc");
#endif
#ifdef MEMSCHED_HAVE_GLPK
  built.emplace_back("glpk");
#endif
  if constexpr (AllowNone) built.emplace_back("none");
  throw_unavailable_backend(backend, algorithm_name, built);
}

}  // namespace memsched_cli
