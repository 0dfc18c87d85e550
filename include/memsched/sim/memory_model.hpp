#pragma once
// The memory model, written once. Every simulator, baseline order, off-chip traffic count and
// rematerialization plan builder in memsched accounts memory with this rule:
//   - running v allocates bytes(v) while all its inputs are resident; workspace(v) is held only
//     while v runs, so the memory in use during v is live + bytes(v) + workspace(v);
//   - after v, each input whose consumers have all run is freed, unless it is a graph output;
//   - a value nobody reads (no consumer, not an output) is freed right after it is computed;
//   - graph outputs stay resident to the end;
//   - in-place outputs: v REUSES its input p when v is in-place (memory_graph::inplace),
//     bytes(p) == bytes(v) > 0, p is not a graph output and p dies at v (v is its last pending
//     consumer; with recomputation: p's current value is freed right after this step). Then v's
//     output takes over p's buffer: the memory in use during v is live + workspace(v), without
//     bytes(v). Nothing else changes: p's bytes are freed and v's allocated as before (the same
//     buffer changes hands), so what is live after a set of vertices still depends only on the set.
//     The buffer taken over is the first such p in predecessor order (it matters to the arena only).
// Two forms: memory_model walks an order (every vertex once) step by step, for simulators and
// searches that extend an order; sequence_lifetimes / simulate_sequence apply the same rule to a
// compute sequence in which a vertex may be computed again after being freed (recomputation),
// where a value lives until its last read before it is computed again. Plans with explicit frees
// (sim/simulate_plan.hpp) apply it with "p's free follows this compute before the next compute".

#include <memsched/graph/memory_graph.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace memsched {

/// What one step of the model does to memory.
struct memory_step {
  /// The value of `reused` when the vertex's output takes over no input's buffer.
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::int64_t live_before = 0;  ///< Resident bytes before the vertex runs.
  /// Bytes in use while it runs (peak candidate): live_before + workspace, + bytes unless it reuses an input's buffer.
  std::int64_t transient = 0;
  std::int64_t freed = 0;        ///< Bytes freed right after it (dead inputs, its own output if unread).
  std::int64_t live_after = 0;   ///< live_before + bytes - freed.
  std::size_t reused = none;     ///< The input (vertex) whose buffer the output takes over in place, or none.
  friend bool operator==(const memory_step&, const memory_step&) = default;
};

/// The memory model along an order in which every vertex runs once, each after its inputs.
/// Holds a reference to the graph, the unread-consumer count of every vertex and the resident
/// bytes. O(n) to build and to reset; step(v) is O(in-degree of v).
class memory_model {
 public:
  /// Precondition: `g` outlives the model.
  explicit memory_model(const memory_graph& g) : g_(&g), remaining_(g.size()) { reset(); }

  /// Back to "nothing has run". O(n).
  void reset() noexcept {
    for (std::size_t v = 0; v < g_->size(); ++v) remaining_[v] = static_cast<std::uint32_t>(g_->out_degree(v));
    live_ = 0;
  }

  /// Whether in-place v may take over the buffer of its input p when p dies at v: v in-place,
  /// bytes(p) == bytes(v) > 0 and p not a graph output (whether p dies at v depends on the
  /// order). Precondition: p is a predecessor of v. O(1).
  [[nodiscard]] static bool may_reuse(const memory_graph& g, std::size_t v, std::size_t p) noexcept {
    return g.inplace(v) && g.bytes(p) == g.bytes(v) && g.bytes(v) > 0 && !g.is_output(p);
  }
  /// Bytes in use while v runs on top of `live_before` resident bytes: its workspace, and its
  /// output unless it `reuses` the buffer of an input that dies at it. O(1).
  [[nodiscard]] static std::int64_t running_bytes(const memory_graph& g, std::size_t v, std::int64_t live_before,
                                                  bool reuses) noexcept {
    return live_before + g.workspace(v) + (reuses ? 0 : g.bytes(v));
  }
  /// The least memory in use while v runs in any order or plan: its inputs, its workspace and
  /// its output, less the output when some input may die at v and lend it its buffer (may_reuse).
  /// A valid lower bound under the in-place rule. O(in-degree of v).
  [[nodiscard]] static std::int64_t min_running_bytes(const memory_graph& g, std::size_t v) noexcept {
    std::int64_t need = g.workspace(v);
    bool reuses = false;
    for (auto p : g.predecessors(v)) {
      need += g.bytes(p);
      reuses = reuses || may_reuse(g, v, p);
    }
    return reuses ? need : need + g.bytes(v);
  }
  /// Whether v's output is freed right after v runs because nothing reads it. O(1).
  [[nodiscard]] static bool dies_unread(const memory_graph& g, std::size_t v) noexcept {
    return g.out_degree(v) == 0 && !g.is_output(v);
  }

  /// Runs v and calls on_free(u) for every vertex u whose output is freed right after it (v's
  /// dead inputs in predecessor order, then v itself when nothing reads it). `reused` names the
  /// first dead input whose buffer v takes over (the in-place rule above).
  /// Preconditions (not checked): v has not run, all its predecessors have. O(in-degree of v).
  template <class OnFree>
  memory_step step(std::size_t v, OnFree&& on_free) {
    const memory_graph& g = *g_;
    memory_step s;
    s.live_before = live_;
    for (auto p : g.predecessors(v))
      if (--remaining_[p] == 0 && !g.is_output(p)) {
        s.freed += g.bytes(p);
        if (s.reused == memory_step::none && may_reuse(g, v, p)) s.reused = p;
        on_free(static_cast<std::size_t>(p));
      }
    s.transient = running_bytes(g, v, live_, s.reused != memory_step::none);
    if (dies_unread(g, v)) {
      s.freed += g.bytes(v);
      on_free(v);
    }
    live_ += g.bytes(v) - s.freed;
    s.live_after = live_;
    return s;
  }
  /// step(v) without the callback.
  memory_step step(std::size_t v) {
    return step(v, [](std::size_t) {});
  }

  /// What step(v) would return now, without running v. Same preconditions. O(in-degree of v).
  [[nodiscard]] memory_step peek(std::size_t v) const noexcept {
    const memory_graph& g = *g_;
    memory_step s;
    s.live_before = live_;
    for (auto p : g.predecessors(v))
      if (remaining_[p] == 1 && !g.is_output(p)) {
        s.freed += g.bytes(p);
        if (s.reused == memory_step::none && may_reuse(g, v, p)) s.reused = p;
      }
    s.transient = running_bytes(g, v, live_, s.reused != memory_step::none);
    if (dies_unread(g, v)) s.freed += g.bytes(v);
    s.live_after = live_ + g.bytes(v) - s.freed;
    return s;
  }

  /// Bytes resident now.
  [[nodiscard]] std::int64_t live() const noexcept { return live_; }
  /// Consumers of v that have not run yet.
  [[nodiscard]] std::uint32_t unread_consumers(std::size_t v) const noexcept { return remaining_[v]; }
  /// Whether v's output is resident now. Precondition: v has run.
  [[nodiscard]] bool resident(std::size_t v) const noexcept { return remaining_[v] != 0 || g_->is_output(v); }
  [[nodiscard]] const memory_graph& graph() const noexcept { return *g_; }

 private:
  const memory_graph* g_;
  std::vector<std::uint32_t> remaining_;
  std::int64_t live_ = 0;
};

/// Marks a value of a compute sequence that is never freed (the last computation of an output).
inline constexpr std::size_t kept_to_end = std::numeric_limits<std::size_t>::max();

/// The model's lifetimes for a compute sequence (vertex indices; a vertex may appear several
/// times: recomputation). Entry k is the position right after which the value computed at
/// position k is freed: its last read before the vertex is computed again, k itself when
/// nothing reads it, or kept_to_end for the last computation of a graph output. For an order
/// (every vertex once) these are exactly memory_model's frees. O(len + sum of in-degrees).
/// Preconditions (not checked): every entry is a vertex.
[[nodiscard]] inline std::vector<std::size_t> sequence_lifetimes(const memory_graph& g, std::span<const std::size_t> computes) {
  const std::size_t len = computes.size();
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  // last_read[k]: the last position that reads the value computed at position k.
  std::vector<std::size_t> last_read(len, none);
  std::vector<char> recomputed_later(len, 0);
  {
    std::vector<std::size_t> current(g.size(), none);  // position of each vertex's latest computation
    for (std::size_t k = 0; k < len; ++k) {
      const std::size_t v = computes[k];
      for (auto p : g.predecessors(v))
        if (current[p] != none) last_read[current[p]] = k;
      if (current[v] != none) recomputed_later[current[v]] = 1;
      current[v] = k;
    }
  }
  std::vector<std::size_t> free_after(len);
  for (std::size_t k = 0; k < len; ++k) {
    if (!recomputed_later[k] && g.is_output(computes[k]))
      free_after[k] = kept_to_end;
    else
      free_after[k] = last_read[k] == none ? k : last_read[k];
  }
  return free_after;
}

/// The in-place reuse along a compute sequence with the lifetimes `free_after` of
/// sequence_lifetimes: entry k is the POSITION of the value whose buffer the computation at k
/// takes over (the current value of the first predecessor p with may_reuse that is freed right
/// after k), or memory_step::none. O(len + sum of in-degrees of in-place entries).
[[nodiscard]] inline std::vector<std::size_t> sequence_reuses(const memory_graph& g, std::span<const std::size_t> computes,
                                                              const std::vector<std::size_t>& free_after) {
  constexpr std::size_t none = memory_step::none;
  std::vector<std::size_t> reused(computes.size(), none);
  if (!g.has_inplace()) return reused;
  std::vector<std::size_t> current(g.size(), none);  // position of each vertex's latest computation
  for (std::size_t k = 0; k < computes.size(); ++k) {
    const std::size_t v = computes[k];
    if (g.inplace(v))
      for (auto p : g.predecessors(v))
        if (current[p] != none && free_after[current[p]] == k && memory_model::may_reuse(g, v, p)) {
          reused[k] = current[p];
          break;
        }
    current[v] = k;
  }
  return reused;
}

/// The model along a compute sequence: one memory_step per position (frees as sequence_lifetimes,
/// in-place reuse as sequence_reuses; `reused` names the vertex). For an order it equals
/// memory_model's steps. O(len + sum of in-degrees). Preconditions (not checked): every entry is
/// a vertex, computed after its inputs' latest computation.
[[nodiscard]] inline std::vector<memory_step> simulate_sequence(const memory_graph& g, std::span<const std::size_t> computes) {
  const std::vector<std::size_t> free_after = sequence_lifetimes(g, computes);
  const std::vector<std::size_t> reused = sequence_reuses(g, computes, free_after);
  std::vector<std::int64_t> freed(computes.size(), 0);
  for (std::size_t k = 0; k < computes.size(); ++k)
    if (free_after[k] != kept_to_end) freed[free_after[k]] += g.bytes(computes[k]);
  std::vector<memory_step> steps(computes.size());
  std::int64_t live = 0;
  for (std::size_t k = 0; k < computes.size(); ++k) {
    const std::size_t v = computes[k];
    memory_step& s = steps[k];
    s.live_before = live;
    if (reused[k] != memory_step::none) s.reused = computes[reused[k]];
    s.transient = memory_model::running_bytes(g, v, live, s.reused != memory_step::none);
    s.freed = freed[k];
    live += g.bytes(v) - freed[k];
    s.live_after = live;
  }
  return steps;
}

}  // namespace memsched
