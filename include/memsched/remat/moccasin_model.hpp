#pragma once
// The public types of Moccasin's CP model (remat/moccasin.hpp builds, solves and decodes it): the
// two phases and the model with its variable maps, so callers can inspect or extend it.

#include <memsched/solver/cp_model.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace memsched {

/// The two models of Moccasin's two-phase solve.
enum class moccasin_phase : unsigned char {
  min_peak,  ///< Phase 1: minimise max(peak, budget) (the capacity is a variable).
  min_cost,  ///< Phase 2: minimise the total cost with the capacity fixed to the budget.
};

/// "min_peak" or "min_cost". O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(moccasin_phase p) noexcept {
  return p == moccasin_phase::min_peak ? "min_peak" : "min_cost";
}

/// What make_moccasin_model builds (plain aggregate).
struct moccasin_model_options {
  /// The input topological order (vertex indices) that fixes the staged time domain; nullopt: the
  /// graph's topological order (memory_graph::topological_order()).
  std::optional<std::vector<std::size_t>> order;
  unsigned max_intervals = 2;  ///< C_v: retention intervals (computations) per vertex, >= 1.
};

/// The retention-interval model of Moccasin (Bartan et al., ICML 2023) over the staged time domain
/// of an input order o_0..o_{n-1}: stage j has j + 1 time slots, slot i of stage j computes o_i
/// (i <= j), and the last slot of stage j computes o_j for the first time. A vertex v has up to
/// `intervals[v].size()` retention intervals [start, end): it is computed at `start` and resident
/// until just before `end` (end - 1 is its last use). Memory is in units of `byte_unit` bytes,
/// costs in units of `cost_unit`.
struct moccasin_model {
  /// Variables of one retention interval (presence is a constant 1 for the first interval).
  struct interval_vars {
    std::size_t presence = 0, start = 0, length = 0, end = 0;
    std::size_t cp_interval = 0;  ///< Index of the interval in `model`.
    std::optional<std::size_t> workspace_end;  ///< start + 1, the end of the workspace task (workspace > 0).
  };
  cp_model model;
  std::vector<std::size_t> order;     ///< The input order (vertex indices).
  std::vector<std::size_t> position;  ///< position[v]: index of v in `order`.
  std::int64_t slots = 0;             ///< Number of time slots, n (n + 1) / 2; every end is <= slots.
  /// Bytes per memory unit: the gcd of the sizes and workspaces, or, when the sizes in those units
  /// would pass the backend's integer range, a coarser unit with sizes rounded up (`rounded`).
  std::int64_t byte_unit = 1;
  std::int64_t budget_units = 0;      ///< floor(budget / byte_unit) (at most the backend's largest value).
  /// Sizes are rounded up to byte_unit (and the budget down): every plan of the model fits the
  /// budget in bytes, but the model may miss plans that fit only by the rounded-off bytes, so its
  /// optimum and infeasibility are not proofs in bytes.
  bool rounded = false;
  /// A size in units: exact for the gcd unit, rounded up for a coarser one.
  [[nodiscard]] std::int64_t units(std::int64_t bytes) const noexcept { return bytes / byte_unit + (bytes % byte_unit != 0); }
  double cost_unit = 1;               ///< Real cost of one objective unit.
  std::vector<std::vector<interval_vars>> intervals;  ///< Per vertex, in time order.
  std::size_t capacity = 0;           ///< The memory capacity variable (units).
  moccasin_phase phase = moccasin_phase::min_cost;

  /// The slot where stage `stage` computes the vertex at input position `pos` (pos <= stage).
  [[nodiscard]] static std::int64_t slot(std::size_t stage, std::size_t pos) noexcept {
    return static_cast<std::int64_t>(stage * (stage + 1) / 2 + pos);
  }
};

}  // namespace memsched
