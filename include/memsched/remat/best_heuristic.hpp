#pragma once
// Every rematerialization heuristic by name, and the cheapest plan over all of them within a
// budget (the warm start of the exact solvers).

#include <memsched/remat/checkpoint_generalizations.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/chen.hpp>
#include <memsched/remat/revolve.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace memsched {

/// The heuristics of remat/: checkpoint-all, Chen's sqrt(n) and greedy (chains only), their
/// articulation-point and linearized generalizations, and revolve (over the articulation points).
/// Greedy ones search over the segment size, revolve over the number of snapshots.
enum class remat_heuristic { checkpoint_all, chen_sqrtn, chen_greedy, ap_sqrtn, ap_greedy, linearized_sqrtn, linearized_greedy, revolve };

/// Every heuristic, in the order above.
inline constexpr std::array<remat_heuristic, 8> all_remat_heuristics{
    remat_heuristic::checkpoint_all,   remat_heuristic::chen_sqrtn,       remat_heuristic::chen_greedy, remat_heuristic::ap_sqrtn,
    remat_heuristic::ap_greedy,        remat_heuristic::linearized_sqrtn, remat_heuristic::linearized_greedy, remat_heuristic::revolve};

/// The tool's name of a heuristic ("checkpoint-all", "chen-sqrtn", ...). O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(remat_heuristic h) noexcept {
  switch (h) {
    case remat_heuristic::checkpoint_all: return "checkpoint-all";
    case remat_heuristic::chen_sqrtn: return "chen-sqrtn";
    case remat_heuristic::chen_greedy: return "chen-greedy";
    case remat_heuristic::ap_sqrtn: return "ap-sqrtn";
    case remat_heuristic::ap_greedy: return "ap-greedy";
    case remat_heuristic::linearized_sqrtn: return "linearized-sqrtn";
    case remat_heuristic::linearized_greedy: return "linearized-greedy";
    case remat_heuristic::revolve: return "revolve";
  }
  return "";
}

/// The heuristic with that name, or nullopt. O(1), never throws.
[[nodiscard]] constexpr std::optional<remat_heuristic> parse_remat_heuristic(std::string_view name) noexcept {
  for (auto h : all_remat_heuristics)
    if (to_string(h) == name) return h;
  return std::nullopt;
}

/// Runs one heuristic within `budget` (greedy ones with the search over b). `unsupported` for
/// chen-* when the forward part is not a chain. Complexity and exceptions of the heuristic.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result run_remat_heuristic(const G& graph, remat_heuristic h, std::int64_t budget,
                                               const remat_heuristic_options& options, const Maps&... maps) {
  switch (h) {
    case remat_heuristic::checkpoint_all: return checkpoint_all_plan(graph, budget, options, maps...);
    case remat_heuristic::chen_sqrtn: return chen_sqrtn_plan(graph, budget, options, maps...);
    case remat_heuristic::chen_greedy: return chen_greedy_search(graph, budget, options, maps...);
    case remat_heuristic::ap_sqrtn: return ap_sqrtn_plan(graph, budget, options, maps...);
    case remat_heuristic::ap_greedy: return ap_greedy_search(graph, budget, options, maps...);
    case remat_heuristic::linearized_sqrtn: return linearized_sqrtn_plan(graph, budget, options, maps...);
    case remat_heuristic::linearized_greedy: return linearized_greedy_search(graph, budget, options, maps...);
    case remat_heuristic::revolve: return revolve_plan(graph, budget, options, maps...);
  }
  return {};
}

/// The cheapest valid plan within `budget` over every heuristic (ties: lower peak, then the
/// earlier heuristic in all_remat_heuristics); status `feasible`, or `infeasible` with an empty
/// plan when none fits. Deterministic. O(options.greedy_budgets * (n + m) + (n + m) log n) plus
/// revolve's snapshot search.
/// Throws graph_error when a forward node reads a backward node or options.forward has the wrong
/// size; what make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result best_heuristic_plan(const G& graph, std::int64_t budget, const remat_heuristic_options& options,
                                               const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  remat_heuristic_options opts = options;
  opts.forward = detail::resolve_forward(graph, g, options.forward, "best_heuristic_plan", maps...);
  remat_result best;
  bool found = false;
  for (auto h : all_remat_heuristics) {
    remat_result r = run_remat_heuristic(g, h, budget, opts);
    if (r.status != solve_status::feasible) continue;
    if (!found || r.total_cost < best.total_cost || (r.total_cost == best.total_cost && r.peak_bytes < best.peak_bytes)) {
      best = std::move(r);
      found = true;
    }
  }
  if (!found) best = remat_result{};
  best.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return best;
}

/// best_heuristic_plan with default options.
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result best_heuristic_plan(const G& graph, std::int64_t budget) {
  return best_heuristic_plan(graph, budget, remat_heuristic_options{});
}

}  // namespace memsched
