#pragma once
// Off-chip traffic of an order when on-chip memory is smaller than its peak: tensors spill to
// off-chip memory and come back when read, evicted by Belady's clairvoyant rule (furthest next use
// first), as in Serenity (Ahn et al., MLSys 2020), Figure 11.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/memory_model.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace memsched {

/// Bytes moved between on-chip and off-chip memory by an order.
struct [[nodiscard]] offchip_traffic_result {
  /// feasible when the order ran within the capacity (the traffic is that of Belady's rule, not
  /// proven minimal); infeasible when some vertex's own working set does not fit (see failed_node).
  solve_status status = solve_status::feasible;
  std::int64_t capacity = 0;
  std::int64_t bytes_written = 0;  ///< Bytes moved off chip (each tensor at most once).
  std::int64_t bytes_read = 0;     ///< Bytes moved back on chip.
  std::int64_t total_bytes = 0;    ///< bytes_written + bytes_read.
  std::size_t evictions = 0;       ///< Tensors evicted (a clean tensor's eviction moves no bytes).
  std::size_t reloads = 0;         ///< Tensors read back.
  /// max over the order's steps of inputs + workspace + output (the output left out when it
  /// takes over an input's buffer in place, sim/memory_model.hpp).
  std::int64_t max_working_set = 0;
  std::optional<std::size_t> failed_node;  ///< The first vertex (index) whose working set exceeds the capacity.
  std::size_t failed_step = 0;             ///< Its position in the order.
  std::string error;                       ///< Empty unless infeasible.
};

namespace detail {

/// The Belady simulation behind offchip_traffic. Resident tensors that may be evicted sit in an
/// ordered set keyed by (next use, has no valid off-chip copy, bytes, index); the largest key goes
/// first. A tensor's key changes only when it is read, so O((n + m) log n) in all.
class belady_simulator {
 public:
  belady_simulator(const memory_graph& g, std::span<const std::size_t> order, std::int64_t capacity)
      : g_(g), order_(order), capacity_(capacity), model_(g) {}

  offchip_traffic_result run() {
    const std::size_t n = g_.size();
    offchip_traffic_result r;
    r.capacity = capacity_;
    pos_.assign(n, 0);
    for (std::size_t k = 0; k < order_.size(); ++k) pos_[order_[k]] = k;
    // Consumers of each vertex by position, and a cursor to the next unread one.
    uses_.assign(n, {});
    for (std::size_t v = 0; v < n; ++v) {
      for (auto s : g_.successors(v)) uses_[v].push_back(pos_[s]);
      std::sort(uses_[v].begin(), uses_[v].end());
    }
    cursor_.assign(n, 0);
    on_chip_.assign(n, 0);
    clean_.assign(n, 0);
    model_.reset();
    // In place, v's output goes into the buffer of an input that dies at v (on chip, or read back
    // into one): v needs no room of its own for it.
    const std::vector<std::size_t> reused = g_.has_inplace() ? sequence_reuses(g_, order_, sequence_lifetimes(g_, order_))
                                                             : std::vector<std::size_t>(order_.size(), memory_step::none);
    auto own_bytes = [&](std::size_t k) { return reused[k] != memory_step::none ? 0 : g_.bytes(order_[k]); };
    for (std::size_t k = 0; k < order_.size(); ++k) {
      std::int64_t need = own_bytes(k) + g_.workspace(order_[k]);
      for (auto p : g_.predecessors(order_[k])) need += g_.bytes(p);
      r.max_working_set = std::max(r.max_working_set, need);
    }
    std::int64_t used = 0;
    for (std::size_t k = 0; k < order_.size(); ++k) {
      const std::size_t v = order_[k];
      std::int64_t need = own_bytes(k) + g_.workspace(v), working = need;
      for (auto p : g_.predecessors(v)) {
        working += g_.bytes(p);
        if (on_chip_[p]) {
          candidates_.erase(key(p));  // pinned while v runs
        } else {
          need += g_.bytes(p);
        }
      }
      if (working > capacity_) {
        offchip_traffic_result failed;
        failed.status = solve_status::infeasible;
        failed.capacity = capacity_;
        failed.max_working_set = r.max_working_set;
        failed.failed_node = v;
        failed.failed_step = k;
        failed.error = "offchip_traffic: " + g_.label(v) + " at step " + std::to_string(k) + " needs " + std::to_string(working) +
                       " bytes (inputs, output and workspace) on chip, more than the capacity of " + std::to_string(capacity_);
        return failed;
      }
      while (used + need > capacity_) {  // cannot run dry: the working set fits
        const auto victim = std::prev(candidates_.end());
        const std::size_t t = std::numeric_limits<std::size_t>::max() - std::get<3>(*victim);
        candidates_.erase(victim);
        on_chip_[t] = 0;
        used -= g_.bytes(t);
        ++r.evictions;
        if (!clean_[t]) {
          clean_[t] = 1;
          r.bytes_written += g_.bytes(t);
        }
      }
      for (auto p : g_.predecessors(v))
        if (!on_chip_[p]) {
          on_chip_[p] = 1;
          used += g_.bytes(p);
          r.bytes_read += g_.bytes(p);
          ++r.reloads;
        }
      // v runs: its output is allocated (dirty: no off-chip copy yet), its workspace comes and goes;
      // the values the memory model frees after v are dead, on chip and off chip.
      on_chip_[v] = 1;
      used += g_.bytes(v);
      (void)model_.step(v, [&](std::size_t dead) {
        on_chip_[dead] = 0;
        used -= g_.bytes(dead);
      });
      for (auto p : g_.predecessors(v)) {
        ++cursor_[p];
        if (model_.resident(p)) candidates_.insert(key(p));
      }
      if (model_.resident(v)) candidates_.insert(key(v));
    }
    r.total_bytes = r.bytes_written + r.bytes_read;
    return r;
  }

 private:
  using entry = std::tuple<std::size_t, char, std::int64_t, std::size_t>;

  [[nodiscard]] entry key(std::size_t t) const {
    const std::size_t next = cursor_[t] < uses_[t].size() ? uses_[t][cursor_[t]] : std::numeric_limits<std::size_t>::max();
    // Largest first: furthest next use, then dirty after clean (clean is cheaper to evict: it
    // sorts higher), then larger, then smaller index.
    return {next, static_cast<char>(clean_[t]), g_.bytes(t), std::numeric_limits<std::size_t>::max() - t};
  }

  const memory_graph& g_;
  std::span<const std::size_t> order_;
  std::int64_t capacity_;
  std::vector<std::size_t> pos_, cursor_;
  std::vector<std::vector<std::size_t>> uses_;
  std::vector<char> on_chip_, clean_;
  memory_model model_;
  std::set<entry> candidates_;
};

}  // namespace detail

/// Off-chip traffic of running `order` with `capacity` bytes of on-chip memory. The model:
/// - Tensors follow the lifetimes of simulate_order (a non-output tensor dies after its last
///   consumer runs and is then freed everywhere; a non-output sink dies at once; graph outputs live
///   to the end). Tensors are immutable, so an off-chip copy stays valid until the tensor dies.
/// - Running v needs all of v's inputs on chip plus room for bytes(v) + workspace(v) (workspace(v)
///   alone when v's output takes over the buffer of an input that dies at v: the in-place rule of
///   sim/memory_model.hpp; that input is on chip, read back if it was evicted). Missing
///   inputs are read back (bytes_read += their bytes). If the bytes on chip plus the missing
///   inputs plus bytes(v) + workspace(v) exceed the capacity, resident tensors other than v's
///   inputs are evicted one by one, the one whose next read is furthest in the future first
///   (Belady; never read again counts as furthest; ties: one that already has an off-chip copy,
///   then the larger, then the smaller index). Evicting a tensor without a valid off-chip copy
///   writes it (bytes_written += its bytes); one that has a copy is dropped for free.
/// - Outputs still on chip at the end are not written off chip.
/// When some vertex's working set (inputs + output + workspace, as above) exceeds the capacity, the order
/// cannot run: the result has status infeasible, failed_node/failed_step name the first such
/// vertex in the order and the traffic fields are 0. With capacity >= the order's peak the
/// traffic is 0. O((n + m) log n). Throws invalid_order for a bad order, std::invalid_argument
/// for a negative capacity, and what make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] offchip_traffic_result offchip_traffic(const G& graph, std::span<const std::size_t> order, std::int64_t capacity,
                                                     const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  if (capacity < 0) throw std::invalid_argument("offchip_traffic: negative capacity (" + std::to_string(capacity) + ")");
  detail::check_order(g, order, "offchip_traffic");
  return detail::belady_simulator(g, order, capacity).run();
}

}  // namespace memsched
