#pragma once
// Checkmate's generalizations of Chen's strategies to non-linear forward graphs (Jain et al.,
// "Checkmate", MLSys 2020, Section 6): the candidate checkpoints are either the articulation
// points of the undirected forward graph (`ap-sqrtn`, `ap-greedy`), whose removal splits the
// forward graph so that a checkpoint there cuts it into independent segments, or every forward
// node in topological order (`linearized-sqrtn`, `linearized-greedy`). The selections and the
// plans are those of chen.hpp and checkpoint_plan.hpp.

#include <memsched/remat/chen.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace memsched {

namespace detail {

/// Articulation points of the undirected forward graph, with a virtual source attached to the
/// first forward vertex and a virtual sink to the last (in topological order), as Checkmate does,
/// so that the chain ends count. Iterative Tarjan, O(n + m). Returned in forward order.
inline std::vector<std::size_t> forward_articulation_points(const memory_graph& g, const std::vector<char>& fwd,
                                                            const training_split& split) {
  const auto& order = split.forward_order;
  const std::size_t nf = order.size();
  if (nf == 0) return {};
  constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> local(g.size(), none);
  for (std::size_t i = 0; i < nf; ++i) local[order[i]] = static_cast<std::uint32_t>(i);
  // Local vertices 0..nf-1, source nf, sink nf+1; undirected CSR.
  const std::size_t n = nf + 2;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (std::size_t i = 0; i < nf; ++i)
    for (auto s : g.successors(order[i]))
      if (fwd[s]) edges.emplace_back(static_cast<std::uint32_t>(i), local[s]);
  edges.emplace_back(static_cast<std::uint32_t>(nf), 0u);
  edges.emplace_back(static_cast<std::uint32_t>(nf - 1), static_cast<std::uint32_t>(nf + 1));
  std::vector<std::uint32_t> offset(n + 1, 0), adj(2 * edges.size());
  for (auto [a, b] : edges) {
    ++offset[a + 1];
    ++offset[b + 1];
  }
  for (std::size_t i = 0; i < n; ++i) offset[i + 1] += offset[i];
  {
    std::vector<std::uint32_t> fill(offset.begin(), offset.end() - 1);
    for (auto [a, b] : edges) {
      adj[fill[a]++] = b;
      adj[fill[b]++] = a;
    }
  }
  std::vector<std::uint32_t> disc(n, none), low(n, 0), parent(n, none), next(n, 0), root_children(n, 0);
  std::vector<char> is_ap(n, 0);
  std::uint32_t time = 0;
  std::vector<std::uint32_t> stack;
  for (std::uint32_t root = 0; root < n; ++root) {
    if (disc[root] != none) continue;
    disc[root] = low[root] = time++;
    next[root] = offset[root];
    stack.push_back(root);
    std::uint32_t children = 0;
    while (!stack.empty()) {
      const std::uint32_t u = stack.back();
      if (next[u] < offset[u + 1]) {
        const std::uint32_t w = adj[next[u]++];
        if (disc[w] == none) {
          parent[w] = u;
          disc[w] = low[w] = time++;
          next[w] = offset[w];
          stack.push_back(w);
          if (u == root) ++children;
        } else if (w != parent[u]) {
          low[u] = std::min(low[u], disc[w]);
        }
      } else {
        stack.pop_back();
        if (!stack.empty()) {
          const std::uint32_t p = stack.back();
          low[p] = std::min(low[p], low[u]);
          if (p != root && low[u] >= disc[p]) is_ap[p] = 1;
        }
      }
    }
    if (children > 1) is_ap[root] = 1;
  }
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < nf; ++i)
    if (is_ap[i]) out.push_back(order[i]);
  return out;
}

inline std::vector<char> mask_of(std::size_t n, std::span<const std::size_t> vs) {
  std::vector<char> m(n, 0);
  for (auto v : vs) m[v] = 1;
  return m;
}

enum class candidate_rule { articulation_points, linearized };

inline std::vector<std::size_t> candidates_of(const memory_graph& g, const strategy_input& in, candidate_rule rule) {
  return rule == candidate_rule::articulation_points ? forward_articulation_points(g, in.forward, in.split)
                                                     : as_indices(in.split.forward_order);
}

/// ap-sqrtn / linearized-sqrtn on a converted graph.
inline remat_result generalized_sqrtn_on(const memory_graph& g, const strategy_input& in, std::int64_t budget,
                                         const sqrtn_options& options, candidate_rule rule, std::chrono::steady_clock::time_point start) {
  const auto cps = sqrtn_checkpoints(candidates_of(g, in, rule));
  return fixed_checkpoints_strategy(g, in.split, cps, budget, options.use_spare_memory, start);
}

/// ap-greedy / linearized-greedy on a converted graph.
inline remat_result generalized_greedy_on(const memory_graph& g, const strategy_input& in, std::int64_t budget,
                                          const greedy_options& options, candidate_rule rule, std::chrono::steady_clock::time_point start) {
  return greedy_on(g, in, mask_of(g.size(), candidates_of(g, in, rule)), budget, options, start);
}

template <class G, class... Maps>
remat_result generalized_sqrtn(const G& graph, std::int64_t budget, const sqrtn_options& options, candidate_rule rule,
                               const char* context, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = to_memory_graph(graph, maps...);
  return generalized_sqrtn_on(g, prepare_strategy(g, forward_mask(g), context), budget, options, rule, start);
}

template <class G, class... Maps>
remat_result generalized_greedy(const G& graph, std::int64_t budget, const greedy_options& options, candidate_rule rule,
                                const char* context, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = to_memory_graph(graph, maps...);
  return generalized_greedy_on(g, prepare_strategy(g, forward_mask(g), context), budget, options, rule, start);
}

}  // namespace detail

/// The articulation points of the undirected forward graph (with Checkmate's virtual source on the
/// first and sink on the last forward vertex, so both ends of a chain count), in topological
/// order. These are the `ap-*` candidates.
/// Complexity: O((n + m) log n).
/// Throws: graph_error when a forward node reads a backward node; what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] std::vector<std::size_t> forward_articulation_points(const G& graph, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  const auto in = detail::prepare_strategy(g, detail::forward_mask(g), "forward_articulation_points");
  return detail::forward_articulation_points(g, in.forward, in.split);
}

/// `ap-sqrtn`: sqrtn_checkpoints over the forward articulation points, then the cheapest plan for
/// that checkpoint set. `no_solution` when its peak exceeds `budget` (`infeasible` when the budget
/// is below what every plan needs).
/// Complexity: O((n + m) log n).
/// Throws: graph_error when a forward node reads a backward node; what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result ap_sqrtn_plan(const G& graph, std::int64_t budget, const sqrtn_options& options, const Maps&... maps) {
  return detail::generalized_sqrtn(graph, budget, options, detail::candidate_rule::articulation_points, "ap_sqrtn_plan", maps...);
}

/// ap_sqrtn_plan with default options.
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result ap_sqrtn_plan(const G& graph, std::int64_t budget) {
  return ap_sqrtn_plan(graph, budget, sqrtn_options{});
}

/// `linearized-sqrtn`: sqrtn_checkpoints over every forward vertex in topological order. As
/// ap_sqrtn_plan otherwise.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result linearized_sqrtn_plan(const G& graph, std::int64_t budget, const sqrtn_options& options,
                                                 const Maps&... maps) {
  return detail::generalized_sqrtn(graph, budget, options, detail::candidate_rule::linearized, "linearized_sqrtn_plan", maps...);
}

/// linearized_sqrtn_plan with default options.
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result linearized_sqrtn_plan(const G& graph, std::int64_t budget) {
  return linearized_sqrtn_plan(graph, budget, sqrtn_options{});
}

/// `ap-greedy`: greedy_checkpoints over the articulation points, with options.segment_bytes or
/// the search over b (as chen_greedy_plan). Status as ap_sqrtn_plan.
/// Complexity: O((n + m) log n), plus O(options.greedy_budgets * (n + m)) for the search.
/// Throws: as ap_sqrtn_plan.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result ap_greedy_plan(const G& graph, std::int64_t budget, const greedy_options& options, const Maps&... maps) {
  return detail::generalized_greedy(graph, budget, options, detail::candidate_rule::articulation_points, "ap_greedy_plan", maps...);
}

/// ap_greedy_plan with default options (the search over b).
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result ap_greedy_plan(const G& graph, std::int64_t budget) {
  return ap_greedy_plan(graph, budget, greedy_options{});
}

/// `linearized-greedy`: as ap_greedy_plan with every forward vertex a candidate.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] remat_result linearized_greedy_plan(const G& graph, std::int64_t budget, const greedy_options& options,
                                                  const Maps&... maps) {
  return detail::generalized_greedy(graph, budget, options, detail::candidate_rule::linearized, "linearized_greedy_plan", maps...);
}

/// linearized_greedy_plan with default options (the search over b).
template <class G>
  requires memory_graph_source<G>
[[nodiscard]] remat_result linearized_greedy_plan(const G& graph, std::int64_t budget) {
  return linearized_greedy_plan(graph, budget, greedy_options{});
}

}  // namespace memsched
