#pragma once
// The memory model, written once. Every simulator, baseline order, off-chip traffic count and
// rematerialization plan builder in memsched accounts memory with this rule:
//   - running v allocates bytes(v) while all its inputs are resident; workspace(v) is held only
//     while v runs, so the memory in use during v is live + bytes(v) + workspace(v);
//   - after v, each input whose consumers have all run is freed, unless it is a graph output;
//   - a value nobody reads (no consumer, not an output) is freed right after it is computed;
//   - graph outputs stay resident to the end.
// Two forms: memory_model walks an order (every vertex once) step by step, for simulators and
// searches that extend an order; sequence_lifetimes / simulate_sequence apply the same rule to a
// compute sequence in which a vertex may be computed again after being freed (recomputation),
// where a value lives until its last read before it is computed again.
// (Issue 12, in-place outputs, changes running_bytes and the frees of one step: only here.)

#include <memsched/graph/memory_graph.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace memsched {

/// What one step of the model does to memory.
struct memory_step {
  std::int64_t live_before = 0;  ///< Resident bytes before the vertex runs.
  std::int64_t transient = 0;    ///< Bytes in use while it runs: live_before + bytes + workspace (peak candidate).
  std::int64_t freed = 0;        ///< Bytes freed right after it (dead inputs, its own output if unread).
  std::int64_t live_after = 0;   ///< live_before + bytes - freed.
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

  /// Bytes in use while v runs on top of `live_before` resident bytes. O(1).
  [[nodiscard]] static std::int64_t running_bytes(const memory_graph& g, std::size_t v, std::int64_t live_before) noexcept {
    return live_before + g.bytes(v) + g.workspace(v);
  }
  /// Whether v's output is freed right after v runs because nothing reads it. O(1).
  [[nodiscard]] static bool dies_unread(const memory_graph& g, std::size_t v) noexcept {
    return g.out_degree(v) == 0 && !g.is_output(v);
  }

  /// Runs v and calls on_free(u) for every vertex u whose output is freed right after it (v's
  /// dead inputs in predecessor order, then v itself when nothing reads it).
  /// Preconditions (not checked): v has not run, all its predecessors have. O(in-degree of v).
  template <class OnFree>
  memory_step step(std::size_t v, OnFree&& on_free) {
    const memory_graph& g = *g_;
    memory_step s;
    s.live_before = live_;
    s.transient = running_bytes(g, v, live_);
    for (auto p : g.predecessors(v))
      if (--remaining_[p] == 0 && !g.is_output(p)) {
        s.freed += g.bytes(p);
        on_free(static_cast<std::size_t>(p));
      }
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
    s.transient = running_bytes(g, v, live_);
    for (auto p : g.predecessors(v))
      if (remaining_[p] == 1 && !g.is_output(p)) s.freed += g.bytes(p);
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
  std::vector<std::size_t> last_read(len, none), current(g.size(), none);
  std::vector<char> recomputed_later(len, 0);
  for (std::size_t k = 0; k < len; ++k) {
    const std::size_t v = computes[k];
    for (auto p : g.predecessors(v))
      if (current[p] != none) last_read[current[p]] = k;
    if (current[v] != none) recomputed_later[current[v]] = 1;
    current[v] = k;
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

/// The model along a compute sequence: one memory_step per position (frees as sequence_lifetimes).
/// For an order it equals memory_model's steps. O(len + sum of in-degrees). Preconditions (not
/// checked): every entry is a vertex, computed after its inputs' latest computation.
[[nodiscard]] inline std::vector<memory_step> simulate_sequence(const memory_graph& g, std::span<const std::size_t> computes) {
  const std::vector<std::size_t> free_after = sequence_lifetimes(g, computes);
  std::vector<std::int64_t> freed(computes.size(), 0);
  for (std::size_t k = 0; k < computes.size(); ++k)
    if (free_after[k] != kept_to_end) freed[free_after[k]] += g.bytes(computes[k]);
  std::vector<memory_step> steps(computes.size());
  std::int64_t live = 0;
  for (std::size_t k = 0; k < computes.size(); ++k) {
    const std::size_t v = computes[k];
    memory_step& s = steps[k];
    s.live_before = live;
    s.transient = memory_model::running_bytes(g, v, live);
    s.freed = freed[k];
    live += g.bytes(v) - freed[k];
    s.live_after = live;
  }
  return steps;
}

}  // namespace memsched
