#pragma once
// The role of a vertex in a training graph. Rematerialization needs it: forward values may be
// recomputed for the backward pass, gradients and the loss are computed once. An inference graph
// is all forward.

#include <cstdint>
#include <optional>
#include <string_view>

namespace memsched {

/// What a vertex computes in a training graph.
enum class node_role : std::uint8_t {
  forward,   ///< A forward (inference) operator; the default.
  backward,  ///< A gradient operator.
  loss,      ///< The loss: the first vertex of the backward pass.
};

/// "forward", "backward" or "loss" (the spelling of the graph files). O(1), never throws.
[[nodiscard]] constexpr std::string_view to_string(node_role role) noexcept {
  switch (role) {
    case node_role::backward:
      return "backward";
    case node_role::loss:
      return "loss";
    case node_role::forward:
      break;
  }
  return "forward";
}

/// The role spelled `name` ("forward", "backward", "loss"), or nullopt. O(1), never throws.
[[nodiscard]] constexpr std::optional<node_role> parse_node_role(std::string_view name) noexcept {
  if (name == "forward") return node_role::forward;
  if (name == "backward") return node_role::backward;
  if (name == "loss") return node_role::loss;
  return std::nullopt;
}

}  // namespace memsched
