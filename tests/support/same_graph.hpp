#pragma once
// check_same_graph: two dataflow graphs equal node by node and edge by edge (a generator against
// the trace it models).

#include "edge_ids.hpp"

#include <memsched/graph/dataflow_graph.hpp>

#include <doctest/doctest.h>

namespace memsched::testing {

// Node by node and edge by edge: the generated graph is the traced one.
inline void check_same_graph(const dataflow_graph& built, const dataflow_graph& expected) {
  REQUIRE(num_vertices(built) == num_vertices(expected));
  for (std::size_t v = 0; v < num_vertices(built); ++v) {
    CAPTURE(v);
    CHECK(built[v].id == expected[v].id);
    CHECK(built[v].name == expected[v].name);
    CHECK(built[v].op == expected[v].op);
    CHECK(built[v].bytes == expected[v].bytes);
    CHECK(built[v].cost == doctest::Approx(expected[v].cost));
  }
  CHECK(edge_ids(built) == edge_ids(expected));
  REQUIRE(expected[boost::graph_bundle].outputs.has_value());
  REQUIRE(built[boost::graph_bundle].outputs.has_value());
  CHECK(*built[boost::graph_bundle].outputs == *expected[boost::graph_bundle].outputs);
}


}  // namespace memsched::testing
