#pragma once
// Execution plans with recomputation: sequences of compute and free steps.

#include <cstddef>
#include <string_view>
#include <vector>

namespace memsched {

enum class plan_op : unsigned char { compute, free };

[[nodiscard]] constexpr std::string_view to_string(plan_op op) noexcept {
  return op == plan_op::compute ? "compute" : "free";
}

/// One step of a plan: compute a vertex (allocating its output) or free its output.
struct plan_step {
  plan_op op = plan_op::compute;
  std::size_t node = 0;  ///< Vertex index.
  friend bool operator==(const plan_step&, const plan_step&) = default;
};

/// `compute v` needs every predecessor of v resident and v not resident, and allocates bytes(v)
/// (plus workspace(v) while it runs); `free v` needs v resident. At the end every vertex has been
/// computed at least once and every output is resident.
struct execution_plan {
  std::vector<plan_step> steps;
  friend bool operator==(const execution_plan&, const execution_plan&) = default;
};

}  // namespace memsched
