#pragma once
// Static memory planning: an offset in one arena for every tensor of an order (or of an execution
// plan with recomputation), so that tensors live at the same time never overlap. Two strategies:
// greedy by size (TensorFlow Lite's arena planner; Pisarchyk and Lee, "Efficient Memory Management
// for Deep Neural Net Inference", 2020) and first fit in order of allocation (a classic heap
// allocator replayed over the steps). A third, exact, hands the tensors to solve_layout
// (sim/layout.hpp), which starts from the two and searches for the least arena.

#include <memsched/core/errors.hpp>
#include <memsched/core/status.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/detail/arena_placement.hpp>
#include <memsched/sim/execution_plan.hpp>
#include <memsched/sim/layout.hpp>
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
  exact,           ///< solve_layout: the least arena, proven unless a limit stops it.
  /// greedy_by_size, or first_fit when more than 2^24 pairs of tensors live at the same time
  /// (greedy by size is quadratic in them); the result's `strategy` says which was used.
  automatic,
};

/// "greedy-by-size", "first-fit", "exact" or "auto". O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(arena_strategy s) noexcept {
  switch (s) {
    case arena_strategy::greedy_by_size: return "greedy-by-size";
    case arena_strategy::first_fit: return "first-fit";
    case arena_strategy::exact: return "exact";
    case arena_strategy::automatic: return "auto";
  }
  return "unknown";
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
  std::int64_t lower_bound = 0;                ///< Proven: no layout of these tensors has a smaller arena.
  solve_status status = solve_status::feasible;  ///< optimal when arena_bytes == lower_bound.
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
  std::int64_t lower_bound = 0;                ///< Proven: no layout of these tensors has a smaller arena.
  solve_status status = solve_status::feasible;  ///< optimal when arena_bytes == lower_bound.
};

/// The verdict of check_arena.
struct arena_check {
  bool valid = true;
  std::string error;  ///< Empty when valid; otherwise names the two overlapping tensors.
};

namespace detail {

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


/// The buffers as solve_layout reads them: inclusive steps [first, last] are the half-open [first, last + 1).
inline std::vector<layout_buffer> layout_buffers_of(const std::vector<arena_buffer>& buffers) {
  std::vector<layout_buffer> intervals(buffers.size());
  for (std::size_t i = 0; i < buffers.size(); ++i)
    intervals[i] = {.first = static_cast<std::int64_t>(buffers[i].first), .last = static_cast<std::int64_t>(buffers[i].last) + 1,
                    .size = buffers[i].size, .alignment = 1, .offset = std::nullopt};
  return intervals;
}

/// Offsets of `buffers` by `strategy` (automatic is resolved in place to the strategy used);
/// `bound` is raised to the exact search's proven bound.
inline std::vector<std::int64_t> place_arena(const std::vector<arena_buffer>& buffers, std::size_t steps, arena_strategy& strategy,
                                             const layout_options& options, std::int64_t& bound) {
  if (strategy == arena_strategy::automatic)
    strategy = greedy_by_size_affordable(buffers) ? arena_strategy::greedy_by_size : arena_strategy::first_fit;
  std::vector<std::int64_t> offsets;
  if (strategy == arena_strategy::greedy_by_size) {
    place_greedy_by_size(buffers, offsets);
  } else if (strategy == arena_strategy::first_fit) {
    place_first_fit(buffers, steps, offsets);
  } else {
    layout_options free = options;
    free.capacity.reset();
    layout_result r = solve_layout(layout_buffers_of(buffers), free);
    bound = std::max(bound, r.lower_bound);
    offsets = std::move(r.offsets);
  }
  return offsets;
}

/// Fragmentation, bound and status of a finished arena (arena_plan or plan_arena_layout).
template <class Plan>
void finish_arena(Plan& plan, std::int64_t bound) {
  plan.fragmentation = plan.peak_bytes > 0 ? static_cast<double>(plan.arena_bytes) / static_cast<double>(plan.peak_bytes) - 1.0 : 0.0;
  plan.lower_bound = std::min(std::max(plan.peak_bytes, bound), plan.arena_bytes);
  plan.status = plan.arena_bytes == plan.lower_bound ? solve_status::optimal : solve_status::feasible;
}

/// Fills `plan` (whose strategy, first_step and last_step are set) from the offsets of the
/// buffers of `order` (arena_buffers) and the proven bound of their layout.
inline void fill_arena_plan(const memory_graph& g, std::span<const std::size_t> order, const std::vector<arena_buffer>& buffers,
                            const std::vector<std::size_t>& buffer_of, const std::vector<std::int64_t>& offsets, std::int64_t bound,
                            arena_plan& plan) {
  plan.arena_bytes = 0;
  plan.offset.assign(g.size(), 0);
  plan.workspace_offset.assign(g.size(), 0);
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].workspace) plan.workspace_offset[buffers[i].node] = offsets[i];
    plan.arena_bytes = std::max(plan.arena_bytes, offsets[i] + buffers[i].size);
  }
  for (std::size_t v = 0; v < g.size(); ++v)
    if (buffer_of[v] != memory_step::none) plan.offset[v] = offsets[buffer_of[v]];
  plan.peak_bytes = order_peak_unchecked(g, order);
  finish_arena(plan, bound);
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
/// O(B log B + P log B) for greedy_by_size, P = pairs of tensors live at the same time (quadratic
/// in B when all of them are), O(B log B) expected for first_fit and for automatic beyond 2^24
/// pairs, B = number of non-empty tensors and workspaces; exact is solve_layout without limits
/// (exponential in the worst case: plan_arena_with sets limits). Throws invalid_order when `order` is not a
/// topological order of every vertex; what make_memory_graph throws for a bad graph.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] arena_plan plan_arena(const G& graph, std::span<const std::size_t> order, arena_strategy strategy,
                                    const Maps&... maps) {
  return plan_arena_with(graph, order, strategy, layout_options{}, maps...);
}

/// plan_arena with the limits of the exact strategy (`options.capacity` is ignored: the least
/// arena is searched). With a limit the best layout found is returned, status feasible, and
/// lower_bound the proven bound. Throws as plan_arena, and option_error for bad options.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] arena_plan plan_arena_with(const G& graph, std::span<const std::size_t> order, arena_strategy strategy,
                                         const layout_options& options, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  detail::check_order(g, order, "plan_arena");
  arena_plan plan;
  plan.strategy = strategy;
  std::vector<std::size_t> buffer_of;
  auto buffers = detail::arena_buffers(g, order, plan.first_step, plan.last_step, buffer_of);
  std::int64_t bound = 0;
  const std::vector<std::int64_t> offsets = detail::place_arena(buffers, order.size(), plan.strategy, options, bound);
  detail::fill_arena_plan(g, order, buffers, buffer_of, offsets, bound, plan);
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
  return plan_arena_with(graph, plan, strategy, layout_options{}, maps...);
}

/// plan_arena of a plan with the limits of the exact strategy, as for orders.
template <class G, class... Maps>
  requires memory_graph_source<G, Maps...>
[[nodiscard]] plan_arena_layout plan_arena_with(const G& graph, const execution_plan& plan, arena_strategy strategy,
                                                const layout_options& options, const Maps&... maps) {
  const memory_graph& g = detail::to_memory_graph(graph, maps...);
  plan_simulation sim;
  const plan_check verdict = detail::check_plan(g, plan, &sim);
  if (!verdict.valid) throw invalid_plan("plan_arena: " + verdict.error, verdict.step.value_or(plan.steps.size()));
  plan_arena_layout layout;
  layout.strategy = strategy;
  std::vector<std::size_t> buffer_of_step;
  auto buffers = detail::plan_arena_buffers(g, plan, sim.reused, buffer_of_step);
  std::int64_t bound = 0;
  const std::vector<std::int64_t> offsets = detail::place_arena(buffers, plan.steps.size(), layout.strategy, options, bound);
  layout.offset.assign(plan.steps.size(), 0);
  layout.workspace_offset.assign(plan.steps.size(), 0);
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].workspace) layout.workspace_offset[buffers[i].first] = offsets[i];
    layout.arena_bytes = std::max(layout.arena_bytes, offsets[i] + buffers[i].size);
  }
  for (std::size_t k = 0; k < plan.steps.size(); ++k)
    if (buffer_of_step[k] != memory_step::none) layout.offset[k] = offsets[buffer_of_step[k]];
  layout.peak_bytes = sim.peak_bytes;
  detail::finish_arena(layout, bound);
  return layout;
}

}  // namespace memsched
