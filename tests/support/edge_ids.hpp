#pragma once
// The edges of a dataflow_graph as (source id, target id) pairs: compares graphs whatever their
// vertex numbering.

#include <memsched/graph/dataflow_graph.hpp>

#include <cstdint>
#include <set>
#include <utility>

namespace memsched::testing {

inline std::set<std::pair<std::int64_t, std::int64_t>> edge_ids(const dataflow_graph& g) {
  std::set<std::pair<std::int64_t, std::int64_t>> s;
  for (auto [e, end] = boost::edges(g); e != end; ++e) s.emplace(g[source(*e, g)].id, g[target(*e, g)].id);
  return s;
}

}  // namespace memsched::testing
