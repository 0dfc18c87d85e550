// A hand-sized training chain shared by the remat tests (worked examples in each test).
#pragma once

#include <memsched/graph/memory_graph.hpp>

#include <cstddef>
#include <vector>

namespace memsched::testing {

/// x0 -> x1 -> x2 -> x3 (loss); g2 reads x3, x2; g1 reads g2, x1; g0 reads g1, x0 (the output).
/// Every value 10 bytes, cost 1. Order 0..6: no-remat peak 50 (at g2), g2 alone needs 30. No
/// training roles (training_chain_with_roles adds them).
inline memory_graph_data training_chain_data() {
  memory_graph_data d;
  d.num_nodes = 7;
  d.edges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {2, 4}, {4, 5}, {1, 5}, {5, 6}, {0, 6}};
  d.bytes.assign(7, 10);
  d.cost.assign(7, 1.0);
  d.outputs = std::vector<std::size_t>{6};
  return d;
}

/// training_chain_data with its roles: x0-x2 forward, x3 the loss, g2-g0 backward, g_i the
/// gradient of x_i.
inline memory_graph_data training_chain_with_roles_data() {
  memory_graph_data d = training_chain_data();
  d.roles = {node_role::forward, node_role::forward, node_role::forward, node_role::loss,
             node_role::backward, node_role::backward, node_role::backward};
  d.grad_of = {std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::size_t{2}, std::size_t{1}, std::size_t{0}};
  return d;
}

/// training_chain_with_roles_data as a graph.
inline memory_graph training_chain_with_roles() { return memory_graph(training_chain_with_roles_data()); }

}  // namespace memsched::testing
