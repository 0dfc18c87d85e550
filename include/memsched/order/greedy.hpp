#pragma once
// Greedy ordering: always run the ready vertex that leaves the least memory resident.

#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/detail/heuristic_result.hpp>
#include <memsched/order/order_result.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/sim/memory_model.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

namespace memsched {

namespace detail {

/// The greedy list scheduler behind greedy_order. Ready vertices sit in a binary heap keyed by
/// (live-memory change, transient peak, index), the peak being bytes + workspace (without bytes when
/// an in-place vertex takes over a dying input's buffer) and the change what the memory model
/// (sim/memory_model.hpp) says running the vertex now would do. A key only improves when an input's
/// last other consumer runs, which happens once per input, so stale entries are skipped lazily.
class greedy_orderer {
 public:
  explicit greedy_orderer(const memory_graph& g) : g_(g), model_(g) {}

  std::vector<std::size_t> run() {
    const std::size_t n = g_.size();
    indegree_.resize(n);
    version_.assign(n, 0);
    scheduled_.assign(n, 0);
    for (std::size_t v = 0; v < n; ++v) indegree_[v] = static_cast<std::uint32_t>(g_.in_degree(v));
    for (std::size_t v = 0; v < n; ++v)
      if (indegree_[v] == 0) push(v);
    std::vector<std::size_t> order;
    order.reserve(n);
    while (!heap_.empty()) {
      const entry e = heap_.top();
      heap_.pop();
      const std::size_t u = std::get<2>(e);
      if (scheduled_[u] || std::get<3>(e) != version_[u]) continue;  // stale
      scheduled_[u] = 1;
      order.push_back(u);
      (void)model_.step(u);
      for (auto p : g_.predecessors(u)) {
        if (model_.unread_consumers(p) != 1 || g_.is_output(p)) continue;
        // p is now freed by its one unscheduled consumer w: running w lowers live memory more.
        for (auto w : g_.successors(p))
          if (!scheduled_[w]) {
            if (indegree_[w] == 0) push(w);
            break;
          }
      }
      for (auto s : g_.successors(u))
        if (--indegree_[s] == 0) push(s);
    }
    return order;
  }

 private:
  // (change of live bytes, transient peak above live bytes: bytes + workspace, without bytes when
  // v takes over a dying input's buffer in place; index, version): smallest first.
  using entry = std::tuple<std::int64_t, std::int64_t, std::size_t, std::uint32_t>;

  void push(std::size_t v) {
    const memory_step s = model_.peek(v);
    heap_.emplace(s.live_after - s.live_before, s.transient - s.live_before, v, ++version_[v]);
  }

  const memory_graph& g_;
  memory_model model_;
  std::vector<std::uint32_t> indegree_, version_;
  std::vector<char> scheduled_;
  std::priority_queue<entry, std::vector<entry>, std::greater<>> heap_;
};

/// The greedy order of g (see greedy_order).
inline std::vector<std::size_t> greedy_order_of(const memory_graph& g) { return greedy_orderer(g).run(); }

}  // namespace detail

/// Greedy list scheduling: among the ready vertices, run the one that leaves the least memory
/// resident after it runs (its output, unless it is a non-output sink, minus the inputs it is the
/// last consumer of that are not outputs); ties by the smaller transient peak (bytes + workspace,
/// without bytes when an in-place vertex takes over a dying input's buffer), then by the smaller
/// index. Returns the order, its peak under the model of simulate_order and
/// the simple lower bound; status optimal only when the peak equals that bound. Deterministic.
/// O((n + m) log n + sum over vertices of squared in- and out-degrees) time (a vertex is pushed
/// once when ready and at most once more per input it becomes the last reader of; finding that
/// reader scans the input's readers), O(n + m) memory. Throws what make_memory_graph throws.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] order_result greedy_order(const G& graph, const Maps&... maps) {
  const auto start = std::chrono::steady_clock::now();
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  return detail::heuristic_order_result(g, detail::greedy_order_of(g), start);
}

}  // namespace memsched
