#pragma once

#include "../support/temp_dir.hpp"
// Helpers of the graph file tests: catching a reader's error message, comparing two graphs by node
// id (independent of vertex numbering), a temporary directory, and the test data files.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/memory_graph.hpp>

#include "../support/file_errors.hpp"
#include "../support/random_dag.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace memsched::testing {

/// A graph described by ids only: equal for the same graph whatever the vertex numbering.
struct canonical_graph {
  using node_fields =
      std::tuple<std::string, std::string, std::int64_t, double, std::int64_t, node_role, std::optional<std::int64_t>, bool>;
  std::string name, kind;
  std::map<std::int64_t, node_fields> nodes;
  std::set<std::pair<std::int64_t, std::int64_t>> edges;
  std::optional<std::set<std::int64_t>> outputs;
  std::vector<std::int64_t> order;
  bool operator==(const canonical_graph&) const = default;
};

inline canonical_graph canonical(const dataflow_graph& g) {
  canonical_graph c;
  const auto& info = g[boost::graph_bundle];
  c.name = info.name;
  c.kind = info.kind;
  for (std::size_t v = 0; v < num_vertices(g); ++v) {
    const node& x = g[v];
    c.nodes[x.id] = {x.name, x.op, x.bytes, x.cost, x.workspace, x.role, x.grad_of, x.inplace};
  }
  for (auto [e, end] = edges(g); e != end; ++e) c.edges.emplace(g[source(*e, g)].id, g[target(*e, g)].id);
  if (info.outputs) {
    c.outputs.emplace();
    for (auto v : *info.outputs) c.outputs->insert(g[v].id);
  }
  for (auto v : info.order) c.order.push_back(g[v].id);
  return c;
}



/// Every .json graph of tests/data/{checkmate,moccasin,torch}, sorted.
inline std::vector<std::filesystem::path> data_graphs() {
  std::vector<std::filesystem::path> files;
  for (const char* folder : {"checkmate", "moccasin", "torch"})
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / folder))
      if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

inline bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// A random 12-vertex graph exercising every field a file format must keep: negative and large
/// ids, bytes up to 10^12, workspace, fractional costs, a stored order, (odd seeds) outputs and
/// (seeds 1 and 2 mod 3) training roles: the vertices of the last third of the order backward
/// or loss, some with a grad_of of a forward vertex; seed 2 mod 3 also has a forward op "loss";
/// (seeds 1 and 2 mod 4) every third vertex in-place.
inline dataflow_graph round_trip_graph(std::uint64_t seed) {
  const memory_graph_data d = random_dag(12, 0.3, seed, 1'000'000'000'000, true);
  dataflow_graph g(d.num_nodes);
  for (std::size_t v = 0; v < d.num_nodes; ++v) {
    g[v].id = static_cast<std::int64_t>(v * 7919) - 40 + static_cast<std::int64_t>(seed);
    g[v].bytes = d.bytes[v];
    g[v].workspace = d.workspace[v];
    g[v].cost = d.cost[v] / 3.0 + 1e-9 * static_cast<double>(seed);
    g[v].inplace = (seed % 4 == 1 || seed % 4 == 2) && v % 3 == 1;
  }
  for (auto [u, v] : d.edges) add_edge(u, v, g);
  const memory_graph m(d);
  g[boost::graph_bundle].order.assign(m.topological_order().begin(), m.topological_order().end());
  if (seed % 2) g[boost::graph_bundle].outputs = std::vector<std::size_t>{0, d.num_nodes - 1};
  if (seed % 3 != 0) {
    const auto& topo = m.topological_order();
    const std::size_t first_backward = 2 * topo.size() / 3;
    for (std::size_t k = first_backward; k < topo.size(); ++k) {
      node& x = g[topo[k]];
      x.role = k == first_backward ? node_role::loss : node_role::backward;
      if (k % 2 == 0) x.grad_of = g[topo[k - first_backward]].id;
    }
    if (seed % 3 == 2) g[topo[0]].op = "loss";
  }
  return g;
}

}  // namespace memsched::testing
