#pragma once
// Internals of the eviction heuristics (DTR, Checkmate's eviction greedy): the values resident in
// memory, as a set that lists its members. Why: choosing a victim scans the resident values, not
// every vertex of the graph; at a tight budget only a small part of a large graph is resident, and
// a scan over all n vertices per eviction made those heuristics quadratic (68% and 20% of
// `memsched remat --algo hiremate` on an 11,534-node GPT stack at 30%).

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace memsched::detail {

/// A subset of the vertices {0, ..., n - 1} (n < 2^32, as memory_graph's vertices): O(1) insert,
/// erase and membership; members() lists them in no particular order (a scan that must not depend
/// on that order breaks ties by index).
class resident_set {
 public:
  explicit resident_set(std::size_t n) : slot_(n, absent) {}

  [[nodiscard]] bool contains(std::size_t v) const noexcept { return slot_[v] != absent; }

  void insert(std::size_t v) {
    if (contains(v)) return;
    slot_[v] = static_cast<std::uint32_t>(members_.size());
    members_.push_back(static_cast<std::uint32_t>(v));
  }

  void erase(std::size_t v) noexcept {
    if (!contains(v)) return;
    const std::uint32_t s = slot_[v], moved = members_.back();
    members_[s] = moved;
    slot_[moved] = s;
    members_.pop_back();
    slot_[v] = absent;
  }

  [[nodiscard]] std::span<const std::uint32_t> members() const noexcept { return members_; }

 private:
  static constexpr std::uint32_t absent = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> slot_;     // per vertex: its index in members_, or absent
  std::vector<std::uint32_t> members_;
};

}  // namespace memsched::detail
