#pragma once
// The input topological order of the solver-based rematerialization algorithms (Checkmate's and
// Moccasin's staged plan space is built over it), and the order of first computations of a plan.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/order/serenity.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/detail/checkmate_staging.hpp>
#include <memsched/sim/execution_plan.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

/// The vertices in the order of their first compute step in `plan`. A plan that computes every
/// vertex gives a topological order (each input is computed before its consumers).
/// Complexity: O(steps + n).
/// Throws: graph_error naming the step when a step's vertex is not below `num_vertices`.
[[nodiscard]] inline std::vector<std::size_t> first_computation_order(const execution_plan& plan, std::size_t num_vertices) {
  std::vector<char> seen(num_vertices, 0);
  std::vector<std::size_t> order;
  order.reserve(num_vertices);
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    const auto& s = plan.steps[k];
    if (s.node >= num_vertices)
      throw graph_error("first_computation_order: step " + std::to_string(k) + " names vertex " + std::to_string(s.node) +
                        ", not below " + std::to_string(num_vertices));
    if (s.op == plan_op::compute && !seen[s.node]) {
      seen[s.node] = 1;
      order.push_back(s.node);
    }
  }
  return order;
}

/// Where remat_input_order takes the order from.
enum class input_order_source {
  graph,      ///< The graph file's order (dataflow_graph's `order`); without one, checkpoint-all's.
  kahn,       ///< Kahn's order (smallest index first).
  best,       ///< The lowest-peak order among Serenity's (within a time limit), Kahn, DFS, greedy and the file's.
  heuristic,  ///< The first computations of a given plan (so that the plan is a start of the staged space).
};

/// "graph", "kahn", "best", "heuristic". O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(input_order_source s) noexcept {
  switch (s) {
    case input_order_source::graph: return "graph";
    case input_order_source::kahn: return "kahn";
    case input_order_source::best: return "best";
    case input_order_source::heuristic: return "heuristic";
  }
  return "";
}

/// The source named `name`, or nullopt. O(1), never throws.
[[nodiscard]] constexpr std::optional<input_order_source> parse_input_order_source(std::string_view name) noexcept {
  for (auto s : {input_order_source::graph, input_order_source::kahn, input_order_source::best, input_order_source::heuristic})
    if (to_string(s) == name) return s;
  return std::nullopt;
}

/// Options of remat_input_order (plain aggregate).
struct input_order_options {
  input_order_source source = input_order_source::best;
  /// `best`: Serenity's time limit (zero: Serenity is skipped, only the linear-time orders compete).
  std::chrono::duration<double> serenity_time_limit{0};
  /// `best`: Serenity's counted cap on stored states (serenity_options::max_states); when it stops
  /// the search before the time limit does, the order does not depend on timing.
  std::uint64_t serenity_max_states = std::numeric_limits<std::uint64_t>::max();
  /// `heuristic`: the plan whose first computations give the order (e.g. best_heuristic_plan's).
  std::optional<execution_plan> plan;
  /// `graph` and `best`: the graph's own order, for graph types that carry none (a memory_graph,
  /// a BGL graph); it replaces a dataflow_graph's `order`. Vertex indices.
  std::optional<std::vector<std::size_t>> graph_order;
};

/// Serenity's counted cap in input_order_within: ~0.8 s on a dense 400-node training graph.
inline constexpr std::uint64_t input_order_serenity_max_states = 100'000;

/// The `best` input order of a call whose whole run is limited to `time_limit` (what the tool's
/// --order-from best uses): Serenity stops at input_order_serenity_max_states stored states (a
/// counted limit: the same order on every run) or, as a backstop where that takes long, at half of
/// `time_limit`, at most 30 s (then the order may depend on timing). O(1).
[[nodiscard]] inline input_order_options input_order_within(std::chrono::duration<double> time_limit) {
  return {.source = input_order_source::best,
          .serenity_time_limit = std::chrono::duration<double>(std::min(time_limit.count() * 0.5, 30.0)),
          .serenity_max_states = input_order_serenity_max_states};
}

/// An input order and what it came from.
struct [[nodiscard]] input_order_result {
  std::vector<std::size_t> order;  ///< Vertex indices, a topological order.
  std::int64_t peak_bytes = 0;     ///< Peak of the order without recomputation (simulate_order's model).
  /// The source actually used: "graph", "kahn", "best", "heuristic", or a fallback with its reason,
  /// e.g. "checkpoint-all (the graph has no order)", "kahn (the plan does not compute every vertex)".
  std::string source;
};

/// The input order of Checkmate and Moccasin chosen by options.source (see input_order_source):
/// - graph: the graph's own order (options.graph_order, else a dataflow_graph's complete `order`); otherwise the
///   first computations of the checkpoint-all plan (whose peak is the no-remat peak that percentage
///   budgets refer to);
/// - kahn: kahn_order;
/// - best: the lowest peak among serenity_order (skipped when options.serenity_time_limit is zero),
///   greedy, DFS, Kahn and the graph's own order (ties: Serenity, then the graph's own order, greedy,
///   DFS, Kahn);
/// - heuristic: first_computation_order(*options.plan) when the plan computes every vertex, else
///   Kahn's order (source says why).
/// Deterministic except for `best` with a Serenity time limit that stops its search.
/// Complexity: O((n + m) log n), plus Serenity's search within its limit for `best`.
/// Throws: what make_memory_graph throws; invalid_order when the graph's own order is not a
/// topological order and source is `graph`.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] input_order_result remat_input_order(const G& graph, const input_order_options& options, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  std::optional<std::vector<std::size_t>> own = options.graph_order;
  if constexpr (std::is_same_v<G, dataflow_graph>) {
    if (!own) {
      const auto& o = graph[boost::graph_bundle].order;
      if (!o.empty() && o.size() == g.size()) own = o;
    }
  }
  input_order_result res;
  switch (options.source) {
    case input_order_source::graph:
      if (own) {
        detail::check_order(g, *own, "remat_input_order");
        res = {*own, 0, "graph"};
      } else {
        const remat_result all = checkpoint_all_plan(graph, unlimited_budget, checkpoint_all_options{}, maps...);
        res = {first_computation_order(all.plan, g.size()), 0, "checkpoint-all (the graph has no order)"};
        if (res.order.size() != g.size()) res = {kahn_order(g).order, 0, "kahn (the graph has no order)"};
      }
      break;
    case input_order_source::kahn: res = {kahn_order(g).order, 0, "kahn"}; break;
    case input_order_source::heuristic:
      if (options.plan) res.order = first_computation_order(*options.plan, g.size());
      if (res.order.size() == g.size()) {
        res.source = "heuristic";
      } else {
        res = {kahn_order(g).order, 0, options.plan ? "kahn (the plan does not compute every vertex)" : "kahn (no plan given)"};
      }
      break;
    case input_order_source::best: {
      res.order = detail::checkmate_best_basic_order(g, own);
      res.source = "best";
      if (options.serenity_time_limit.count() > 0) {
        order_result s =
            serenity_order(g, serenity_options{.time_limit = options.serenity_time_limit, .max_states = options.serenity_max_states});
        if (detail::order_peak_unchecked(g, s.order) <= detail::order_peak_unchecked(g, res.order)) res.order = std::move(s.order);
      }
      break;
    }
  }
  res.peak_bytes = detail::order_peak_unchecked(g, res.order);
  return res;
}

}  // namespace memsched
