#pragma once
// Static memory planning: an offset in one arena for every tensor of an order (or of an execution
// plan with recomputation), so that tensors live at the same time never overlap. Two strategies:
// greedy by size (TensorFlow Lite's arena planner; Pisarchyk and Lee, "Efficient Memory Management
// for Deep Neural Net Inference", 2020) and first fit in order of allocation (a classic heap
// allocator replayed over the steps).

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/memory_model.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

/// How plan_arena places tensors.
enum class arena_strategy {
  greedy_by_size,  ///< Largest first; each into the smallest gap among time-overlapping tensors (TFLite).
  first_fit,       ///< In order of allocation, each at the lowest offset free at that step.
};

/// "greedy-by-size" or "first-fit". O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(arena_strategy s) noexcept {
  return s == arena_strategy::greedy_by_size ? "greedy-by-size" : "first-fit";
}

/// Offsets of every tensor of an order in one arena.
///
/// Lifetimes follow the model of simulate_order, in steps (positions in the order), both ends
/// included: the output of the vertex run at step k lives from k to the step of its last consumer;
/// graph outputs live to the last step; a non-output sink lives at step k only. The workspace of the
/// vertex run at step k is a separate buffer living at step k only. An in-place vertex v that
/// reuses its input p (sim/memory_model.hpp) has no buffer of its own: its output takes over p's,
/// which then lives from p's allocation to v's last step, and offset[v] == offset[p]. So the bytes
/// live at step k are exactly the transient of simulate_order at step k, and arena_bytes >= peak_bytes.
struct [[nodiscard]] arena_plan {
  arena_strategy strategy = arena_strategy::greedy_by_size;
  std::vector<std::int64_t> offset;            ///< Per vertex: offset of its output tensor (0 when it has 0 bytes; p's when it reuses p's buffer).
  std::vector<std::int64_t> workspace_offset;  ///< Per vertex: offset of its workspace (0 when it has none).
  std::vector<std::size_t> first_step;         ///< Per vertex: step where its output is allocated.
  std::vector<std::size_t> last_step;          ///< Per vertex: last step where its output is resident.
  std::int64_t arena_bytes = 0;                ///< max over buffers of offset + size.
  std::int64_t peak_bytes = 0;                 ///< Peak of the order (simulate_order): a lower bound on arena_bytes.
  double fragmentation = 0;                    ///< arena_bytes / peak_bytes - 1 (0 when the peak is 0).
  solve_status status = solve_status::feasible;  ///< optimal when arena_bytes == peak_bytes.
};

/// Offsets of every tensor computed by an execution plan (with recomputation) in one arena.
///
/// Lifetimes in plan steps, both ends included: the tensor allocated by the compute at step k
/// lives from k to the step before the `free` of that copy (to the last step if it is never
/// freed); its workspace lives at step k only. A compute that reuses an input's buffer in place
/// (simulate_plan's `reused`) has no buffer of its own: it takes over that copy's buffer (same
/// offset), which then lives until the `free` of the new value. The bytes live at a compute step
/// are then exactly the transient of simulate_plan there, so arena_bytes >= peak_bytes.
struct [[nodiscard]] plan_arena_layout {
  arena_strategy strategy = arena_strategy::greedy_by_size;
  std::vector<std::int64_t> offset;            ///< Per plan step: offset of the tensor a compute writes (0 for frees and empty tensors).
  std::vector<std::int64_t> workspace_offset;  ///< Per plan step: offset of the compute's workspace (0 when none).
  std::int64_t arena_bytes = 0;                ///< max over buffers of offset + size.
  std::int64_t peak_bytes = 0;                 ///< Peak of the plan (simulate_plan).
  double fragmentation = 0;                    ///< arena_bytes / peak_bytes - 1 (0 when the peak is 0).
  solve_status status = solve_status::feasible;  ///< optimal when arena_bytes == peak_bytes.
};

/// The verdict of check_arena.
struct arena_check {
  bool valid = true;
  std::string error;  ///< Empty when valid; otherwise names the two overlapping tensors.
};

namespace detail {

/// One buffer to place: a vertex's output tensor or its workspace. An output buffer taken over in
/// place holds the outputs of `node` and then of every vertex that reused it, the last `holder`.
struct arena_buffer {
  std::size_t node = 0;
  bool workspace = false;
  std::int64_t size = 0;
  std::size_t first = 0, last = 0;  // inclusive steps; buffers are listed by `first`
  std::size_t holder = memory_step::none;  // the last vertex whose output took it over in place, or none
};

inline std::string buffer_label(const memory_graph& g, const arena_buffer& b) {
  std::string s = (b.workspace ? "the workspace of " : "the output of ") + g.label(b.node);
  if (b.holder != memory_step::none) s += " (taken over in place by " + g.label(b.holder) + ")";
  return s;
}

/// The buffers of a valid plan, with lifetimes as documented on plan_arena_layout, and per step the
/// output buffer a compute writes (memory_step::none for frees and empty outputs). `reused` is the
/// plan's plan_simulation::reused (check_plan has already found each in-place input). O(steps).
inline std::vector<arena_buffer> plan_arena_buffers(const memory_graph& g, const execution_plan& plan,
                                                    std::span<const std::size_t> reused,
                                                    std::vector<std::size_t>& buffer_of_step) {
  const std::size_t steps = plan.steps.size();
  assert(reused.size() == steps);
  std::vector<arena_buffer> buffers;
  buffer_of_step.assign(steps, memory_step::none);
  std::vector<std::size_t> open(g.size(), 0);  // buffer index + 1 of the resident copy of each vertex
  for (std::size_t k = 0; k < steps; ++k) {
    const auto [op, v] = plan.steps[k];
    if (op == plan_op::free) {
      if (open[v] != 0) buffers[open[v] - 1].last = k - 1;  // a compute precedes every free: k >= 1
      open[v] = 0;
      continue;
    }
    if (const std::size_t p = reused[k]; p != memory_step::none) {
      // The buffer changes hands: the `free` of the input that follows no longer ends it. A reused
      // input is resident with bytes > 0 (may_reuse), so it holds a buffer.
      assert(open[p] != 0);
      const std::size_t b = open[p] - 1;
      open[p] = 0;
      open[v] = b + 1;
      buffers[b].holder = v;
      buffer_of_step[k] = b;
    } else if (g.bytes(v) > 0) {
      buffers.push_back({v, false, g.bytes(v), k, steps - 1});
      open[v] = buffers.size();
      buffer_of_step[k] = buffers.size() - 1;
    }
    if (g.workspace(v) > 0) buffers.push_back({v, true, g.workspace(v), k, k});
  }
  return buffers;
}

/// Checks that buffers live at the same step are disjoint and inside [0, arena_bytes), by a sweep
/// over the steps with the live buffers ordered by offset. O(B log B).
template <class OffsetOf>
arena_check check_buffers(const memory_graph& g, const std::vector<arena_buffer>& buffers, std::size_t steps,
                          std::int64_t arena_bytes, OffsetOf offset_of) {
  std::vector<std::vector<std::size_t>> ending(steps + 1);
  std::map<std::int64_t, std::size_t> live;  // offset -> buffer
  std::size_t next = 0;
  for (std::size_t k = 0; k < steps; ++k) {
    if (k > 0)
      for (std::size_t i : ending[k - 1]) live.erase(offset_of(i));
    for (; next < buffers.size() && buffers[next].first == k; ++next) {
      const auto& b = buffers[next];
      const std::int64_t at = offset_of(next);
      if (at < 0 || at > arena_bytes - b.size)
        return {false, buffer_label(g, b) + " at offset " + std::to_string(at) + " (" + std::to_string(b.size) +
                           " bytes) is outside the arena of " + std::to_string(arena_bytes) + " bytes"};
      auto clash = [&](std::size_t other) {
        return arena_check{false, buffer_label(g, b) + " at offset " + std::to_string(at) + " overlaps " +
                                      buffer_label(g, buffers[other]) + " at offset " + std::to_string(offset_of(other)) +
                                      " at step " + std::to_string(k)};
      };
      auto above = live.lower_bound(at);
      if (above != live.end() && above->first < at + b.size) return clash(above->second);
      if (above != live.begin()) {
        auto below = std::prev(above);
        if (below->first + buffers[below->second].size > at) return clash(below->second);
      }
      live.emplace(at, next);
      ending[b.last].push_back(next);
    }
  }
  return {};
}

/// The buffers of a valid order, with lifetimes as documented on arena_plan, and per vertex the
/// output buffer that holds it (memory_step::none for an empty output). Zero-size buffers are left
/// out: they take no room and may share any offset. O(n + m).
inline std::vector<arena_buffer> arena_buffers(const memory_graph& g, std::span<const std::size_t> order,
                                               std::vector<std::size_t>& first, std::vector<std::size_t>& last,
                                               std::vector<std::size_t>& buffer_of) {
  const std::size_t n = g.size();
  first.assign(n, 0);
  last.assign(n, 0);
  buffer_of.assign(n, memory_step::none);
  // The memory model's lifetimes: to the last consumer, to the end for an output, k when unread.
  const std::vector<std::size_t> free_after = sequence_lifetimes(g, order);
  const std::vector<std::size_t> reused = sequence_reuses(g, order, free_after);
  for (std::size_t k = 0; k < order.size(); ++k) {
    first[order[k]] = k;
    last[order[k]] = free_after[k] == kept_to_end ? n - 1 : free_after[k];
  }
  std::vector<arena_buffer> buffers;
  buffers.reserve(n);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t v = order[k];
    if (reused[k] != memory_step::none) {
      // v's output takes over the buffer of the input that dies here (sizes are equal and > 0).
      const std::size_t b = buffer_of[order[reused[k]]];
      buffers[b].last = last[v];
      buffers[b].holder = v;
      buffer_of[v] = b;
    } else if (g.bytes(v) > 0) {
      buffers.push_back({v, false, g.bytes(v), first[v], last[v]});
      buffer_of[v] = buffers.size() - 1;
    }
    if (g.workspace(v) > 0) buffers.push_back({v, true, g.workspace(v), k, k});
  }
  return buffers;
}

/// "" when every vertex (or compute step) that shares a buffer in place has the offset of that
/// buffer; otherwise what is wrong. Owners are vertices (orders) or plan steps: `offset_of(k)` is
/// the offset given to owner k, `buffer_offset(b)` the offset of buffer b (its first owner's, as
/// check_buffers reads it), `name(k)` names owner k in the message. O(owners).
template <class OffsetOf, class BufferOffset, class Name>
std::string check_shared_offsets(const memory_graph& g, const std::vector<arena_buffer>& buffers,
                                 const std::vector<std::size_t>& buffer_of, OffsetOf offset_of, BufferOffset buffer_offset,
                                 Name name) {
  for (std::size_t k = 0; k < buffer_of.size(); ++k) {
    const std::size_t b = buffer_of[k];
    if (b == memory_step::none || offset_of(k) == buffer_offset(b)) continue;
    return name(k) + " reuses " + buffer_label(g, buffers[b]) + " at offset " + std::to_string(buffer_offset(b)) +
           " in place, but is at offset " + std::to_string(offset_of(k));
  }
  return {};
}

/// The placed buffers, queried by lifetime: a segment tree over allocation steps (buffers are
/// listed by `first`, so the buffers of one step are a contiguous range) holding the largest `last`
/// among the placed buffers below each node. A query returns the placed buffers that overlap
/// [first, last] in O((k + 1) log T) for k answers, instead of a scan over every placed buffer.
class placed_by_lifetime {
 public:
  explicit placed_by_lifetime(const std::vector<arena_buffer>& buffers) : buffers_(buffers) {
    const std::size_t steps = buffers.empty() ? 0 : buffers.back().first + 1;
    while (leaves_ < steps) leaves_ *= 2;
    max_last_.assign(2 * leaves_, none);
    begin_.assign(steps + 1, 0);
    for (const auto& b : buffers) ++begin_[b.first + 1];
    for (std::size_t k = 0; k < steps; ++k) begin_[k + 1] += begin_[k];
    placed_.assign(buffers.size(), 0);
  }

  void place(std::size_t i) {
    placed_[i] = 1;
    const auto last = static_cast<std::int64_t>(buffers_[i].last);
    for (std::size_t node = leaves_ + buffers_[i].first; node >= 1 && max_last_[node] < last; node /= 2) max_last_[node] = last;
  }

  /// Appends to `out` every placed buffer j with first_j <= last and last_j >= first.
  void overlapping(std::size_t first, std::size_t last, std::vector<std::size_t>& out) {
    const auto lo = static_cast<std::int64_t>(first);
    stack_.assign(1, 1);
    while (!stack_.empty()) {
      const std::size_t node = stack_.back();
      stack_.pop_back();
      if (max_last_[node] < lo) continue;
      // The steps below `node`: [begin, begin + width).
      const std::size_t level = std::size_t{1} << (std::bit_width(node) - 1);
      const std::size_t width = leaves_ / level, begin = (node - level) * width;
      if (begin > last) continue;
      if (width == 1) {
        for (std::size_t j = begin_[begin]; j < begin_[begin + 1]; ++j)
          if (placed_[j] && static_cast<std::int64_t>(buffers_[j].last) >= lo) out.push_back(j);
        continue;
      }
      stack_.push_back(2 * node + 1);
      stack_.push_back(2 * node);
    }
  }

 private:
  static constexpr std::int64_t none = -1;
  const std::vector<arena_buffer>& buffers_;
  std::size_t leaves_ = 1;
  std::vector<std::int64_t> max_last_;  // per tree node; `none` when nothing placed below
  std::vector<std::size_t> begin_;      // per step: index of its first buffer
  std::vector<char> placed_;
  std::vector<std::size_t> stack_;
};

/// Greedy by size: largest first (ties: earlier allocation, output before workspace, smaller
/// index); each goes into the smallest gap, among the already placed buffers whose lifetime
/// overlaps its own, that fits it, or above them all (lowest offset among equal gaps).
/// O(B log B + sum over buffers of k log(k T)), k = placed buffers overlapping it in time: near
/// linear when few tensors live at once (a chain), O(B^2 log B) when all of them do.
inline void place_greedy_by_size(std::vector<arena_buffer>& buffers, std::vector<std::int64_t>& offsets) {
  std::vector<std::size_t> by_size(buffers.size());
  for (std::size_t i = 0; i < by_size.size(); ++i) by_size[i] = i;
  std::sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = buffers[a];
    const auto& y = buffers[b];
    if (x.size != y.size) return x.size > y.size;
    if (x.first != y.first) return x.first < y.first;
    if (x.workspace != y.workspace) return !x.workspace;
    return x.node < y.node;
  });
  offsets.assign(buffers.size(), 0);
  placed_by_lifetime placed(buffers);
  std::vector<std::size_t> overlapping;
  for (std::size_t i : by_size) {
    const auto& b = buffers[i];
    overlapping.clear();
    placed.overlapping(b.first, b.last, overlapping);
    // Sizes are positive, so buffers at equal offsets give the same gaps in any order.
    std::sort(overlapping.begin(), overlapping.end(), [&](std::size_t x, std::size_t y) { return offsets[x] < offsets[y]; });
    std::int64_t current = 0, best = -1, best_gap = std::numeric_limits<std::int64_t>::max();
    for (std::size_t j : overlapping) {
      if (offsets[j] >= current) {
        const std::int64_t gap = offsets[j] - current;
        if (gap >= b.size && gap < best_gap) {
          best = current;
          best_gap = gap;
        }
      }
      current = std::max(current, offsets[j] + buffers[j].size);
    }
    offsets[i] = best >= 0 ? best : current;
    placed.place(i);
  }
}

/// First fit in order of allocation: step by step, release the buffers whose life ended at the
/// previous step, then place the step's output and then its workspace at the lowest offset where
/// they fit. O(B * L) for B buffers and at most L live at once.
inline void place_first_fit(const std::vector<arena_buffer>& buffers, std::size_t steps, std::vector<std::int64_t>& offsets) {
  offsets.assign(buffers.size(), 0);
  std::vector<std::vector<std::size_t>> ending(steps + 1);
  std::map<std::int64_t, std::int64_t> live;  // offset -> end of the live buffers
  std::size_t next = 0;
  for (std::size_t k = 0; k < steps; ++k) {
    if (k > 0)
      for (std::size_t i : ending[k - 1]) live.erase(offsets[i]);
    for (; next < buffers.size() && buffers[next].first == k; ++next) {
      const auto& b = buffers[next];
      std::int64_t at = 0;
      for (auto [start, end] : live) {
        if (start - at >= b.size) break;
        at = std::max(at, end);
      }
      offsets[next] = at;
      live.emplace(at, at + b.size);
      ending[b.last].push_back(next);
    }
  }
}

}  // namespace detail

/// Checks that `plan` places every tensor of `order` inside [0, plan.arena_bytes) and that no two
/// tensors (outputs or workspaces, lifetimes as documented on arena_plan, recomputed from the
/// order) live at the same step overlap. Zero-size tensors are ignored. O(n log n + m). Never
/// throws for a bad plan (the verdict names two overlapping tensors); throws invalid_order for a
/// bad order and what make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] arena_check check_arena(const G& graph, std::span<const std::size_t> order, const arena_plan& plan,
                                      const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  detail::check_order(g, order, "check_arena");
  if (plan.offset.size() != g.size() || plan.workspace_offset.size() != g.size())
    return {false, "the plan has " + std::to_string(plan.offset.size()) + " offsets and " +
                       std::to_string(plan.workspace_offset.size()) + " workspace offsets for " + std::to_string(g.size()) +
                       " vertices"};
  std::vector<std::size_t> first, last, buffer_of;
  const auto buffers = detail::arena_buffers(g, order, first, last, buffer_of);
  auto buffer_offset = [&](std::size_t i) {
    return buffers[i].workspace ? plan.workspace_offset[buffers[i].node] : plan.offset[buffers[i].node];
  };
  std::string shared = detail::check_shared_offsets(
      g, buffers, buffer_of, [&](std::size_t v) { return plan.offset[v]; }, buffer_offset,
      [&](std::size_t v) { return "the output of " + g.label(v); });
  if (!shared.empty()) return {false, std::move(shared)};
  return detail::check_buffers(g, buffers, order.size(), plan.arena_bytes, buffer_offset);
}

/// Places every tensor of `order` (output tensors and workspaces, lifetimes as documented on
/// arena_plan) in one arena with `strategy`. Returns the offsets, the arena size (>= the order's
/// peak), the peak and the fragmentation arena / peak - 1. Deterministic.
/// O(B log B + B L log B) for greedy_by_size and O(B * L) for first_fit, B = number of non-empty
/// tensors and workspaces, L = most of them live at once. Throws invalid_order when `order` is not a
/// topological order of every vertex; what make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] arena_plan plan_arena(const G& graph, std::span<const std::size_t> order, arena_strategy strategy,
                                    const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  detail::check_order(g, order, "plan_arena");
  arena_plan plan;
  plan.strategy = strategy;
  std::vector<std::size_t> buffer_of;
  auto buffers = detail::arena_buffers(g, order, plan.first_step, plan.last_step, buffer_of);
  std::vector<std::int64_t> offsets;
  if (strategy == arena_strategy::greedy_by_size)
    detail::place_greedy_by_size(buffers, offsets);
  else
    detail::place_first_fit(buffers, order.size(), offsets);
  plan.offset.assign(g.size(), 0);
  plan.workspace_offset.assign(g.size(), 0);
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].workspace) plan.workspace_offset[buffers[i].node] = offsets[i];
    plan.arena_bytes = std::max(plan.arena_bytes, offsets[i] + buffers[i].size);
  }
  for (std::size_t v = 0; v < g.size(); ++v)
    if (buffer_of[v] != memory_step::none) plan.offset[v] = offsets[buffer_of[v]];
  plan.peak_bytes = detail::order_peak_unchecked(g, order);
  plan.fragmentation = plan.peak_bytes > 0 ? static_cast<double>(plan.arena_bytes) / static_cast<double>(plan.peak_bytes) - 1.0 : 0.0;
  plan.status = plan.arena_bytes == plan.peak_bytes ? solve_status::optimal : solve_status::feasible;
  return plan;
}

/// Checks a layout of `plan`'s tensors as check_arena does for orders: every copy (lifetimes as
/// documented on plan_arena_layout, recomputed from the plan) inside [0, layout.arena_bytes) and
/// no two live at the same step overlapping. O(steps log steps). Never throws for a bad layout;
/// throws invalid_plan for an invalid plan and what make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] arena_check check_arena(const G& graph, const execution_plan& plan, const plan_arena_layout& layout,
                                      const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  plan_simulation sim;
  const plan_check verdict = detail::check_plan(g, plan, &sim);
  if (!verdict.valid) throw invalid_plan("check_arena: " + verdict.error, verdict.step.value_or(plan.steps.size()));
  const std::size_t steps = plan.steps.size();
  if (layout.offset.size() != steps || layout.workspace_offset.size() != steps)
    return {false, "the layout has " + std::to_string(layout.offset.size()) + " offsets and " +
                       std::to_string(layout.workspace_offset.size()) + " workspace offsets for " + std::to_string(steps) +
                       " plan steps"};
  std::vector<std::size_t> buffer_of_step;
  const auto buffers = detail::plan_arena_buffers(g, plan, sim.reused, buffer_of_step);
  auto buffer_offset = [&](std::size_t i) {
    return buffers[i].workspace ? layout.workspace_offset[buffers[i].first] : layout.offset[buffers[i].first];
  };
  std::string shared = detail::check_shared_offsets(
      g, buffers, buffer_of_step, [&](std::size_t k) { return layout.offset[k]; }, buffer_offset,
      [&](std::size_t k) { return "the output of " + g.label(plan.steps[k].node) + " computed at step " + std::to_string(k); });
  if (!shared.empty()) return {false, std::move(shared)};
  return detail::check_buffers(g, buffers, steps, layout.arena_bytes, buffer_offset);
}

/// Places every tensor copy of an execution plan (recomputations are separate copies; lifetimes as
/// documented on plan_arena_layout) in one arena with `strategy`. Returns per-step offsets, the
/// arena size (>= the plan's peak), the peak and the fragmentation. Deterministic. Complexity as
/// the order version with B = non-empty copies and workspaces. Throws invalid_plan naming the
/// first violated rule when the plan is not valid; what make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] plan_arena_layout plan_arena(const G& graph, const execution_plan& plan, arena_strategy strategy,
                                           const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  plan_simulation sim;
  const plan_check verdict = detail::check_plan(g, plan, &sim);
  if (!verdict.valid) throw invalid_plan("plan_arena: " + verdict.error, verdict.step.value_or(plan.steps.size()));
  plan_arena_layout layout;
  layout.strategy = strategy;
  std::vector<std::size_t> buffer_of_step;
  auto buffers = detail::plan_arena_buffers(g, plan, sim.reused, buffer_of_step);
  std::vector<std::int64_t> offsets;
  if (strategy == arena_strategy::greedy_by_size)
    detail::place_greedy_by_size(buffers, offsets);
  else
    detail::place_first_fit(buffers, plan.steps.size(), offsets);
  layout.offset.assign(plan.steps.size(), 0);
  layout.workspace_offset.assign(plan.steps.size(), 0);
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].workspace) layout.workspace_offset[buffers[i].first] = offsets[i];
    layout.arena_bytes = std::max(layout.arena_bytes, offsets[i] + buffers[i].size);
  }
  for (std::size_t k = 0; k < plan.steps.size(); ++k)
    if (buffer_of_step[k] != memory_step::none) layout.offset[k] = offsets[buffer_of_step[k]];
  layout.peak_bytes = sim.peak_bytes;
  layout.fragmentation =
      layout.peak_bytes > 0 ? static_cast<double>(layout.arena_bytes) / static_cast<double>(layout.peak_bytes) - 1.0 : 0.0;
  layout.status = layout.arena_bytes == layout.peak_bytes ? solve_status::optimal : solve_status::feasible;
  return layout;
}

}  // namespace memsched
