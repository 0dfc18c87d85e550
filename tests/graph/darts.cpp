#include <memsched/graph/darts.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

using namespace memsched;

namespace {

std::map<std::string, std::size_t> by_name(const dataflow_graph& g) {
  std::map<std::string, std::size_t> m;
  for (std::size_t v = 0; v < num_vertices(g); ++v) m[g[v].name] = v;
  return m;
}

std::vector<std::size_t> preds(const dataflow_graph& g, std::size_t v) {
  std::vector<std::size_t> p;
  for (auto [e, end] = in_edges(v, g); e != end; ++e) p.push_back(source(*e, g));
  std::sort(p.begin(), p.end());
  return p;
}

}  // namespace

TEST_CASE("make_darts_network: the 20-cell CIFAR network") {
  const dataflow_graph g = make_darts_network();
  const memory_graph m = make_memory_graph(g);
  const auto& info = g[boost::graph_bundle];
  CHECK_NOTHROW((void)simulate_order(m, info.order));
  // 3 stem + 16 normal cells x 55 + 2 normal cells after a reduction x 57 + 2 reduction cells x 16 + 2 head.
  CHECK(num_vertices(g) == 3 + 16 * 55 + 2 * 57 + 2 * 16 + 2);
  MESSAGE("darts 20 cells: " << num_vertices(g) << " nodes, " << num_edges(g) << " edges");
  for (std::size_t v = 0; v < num_vertices(g); ++v) {
    CHECK(g[v].bytes > 0);
    if (g[v].op != "input") CHECK(g[v].cost > 0);
  }
  const auto idx = by_name(g);
  // Cell i reads cells i-1 and i-2 (the stem for the first two).
  for (std::size_t i = 2; i < 20; ++i) {
    const std::string c = "cells." + std::to_string(i);
    CHECK(preds(g, idx.at(c + ".pre0.relu")) == std::vector{idx.at("cells." + std::to_string(i - 2) + ".concat")});
    CHECK(preds(g, idx.at(c + ".pre1.relu")) == std::vector{idx.at("cells." + std::to_string(i - 1) + ".concat")});
    CHECK(preds(g, idx.at(c + ".concat")).size() == 4);
  }
  CHECK(preds(g, idx.at("cells.0.pre0.relu")) == std::vector{idx.at("stem.bn")});
  CHECK(preds(g, idx.at("cells.1.pre0.relu")) == std::vector{idx.at("stem.bn")});
  // Reduction cells 6 and 13 halve the side and double C: 36 x 32 x 32, 72 x 16 x 16, 144 x 8 x 8.
  CHECK(g[idx.at("cells.5.concat")].bytes == 4 * 4 * 36 * 32 * 32);
  CHECK(g[idx.at("cells.6.concat")].bytes == 4 * 4 * 72 * 16 * 16);
  CHECK(g[idx.at("cells.13.concat")].bytes == 4 * 4 * 144 * 8 * 8);
  CHECK(g[idx.at("cells.6.ops.0.maxpool")].op == "maxpool2d");
  CHECK(g[idx.at("cells.7.pre0.concat")].op == "concat");  // FactorizedReduce after a reduction cell
  CHECK(g[idx.at("classifier")].bytes == 4 * 10);
}

TEST_CASE("make_darts_network: no single-node cut inside the cells") {
  // A cut node: every other node is its ancestor or its descendant. Each cell reads the two
  // previous cells, so only the stem, the last cell's output and the head are cuts.
  const dataflow_graph g = make_darts_network({.cells = 8});
  const std::size_t n = num_vertices(g);
  const auto& order = g[boost::graph_bundle].order;
  std::vector<std::vector<char>> anc(n, std::vector<char>(n, 0));
  for (auto v : order)
    for (auto p : preds(g, v)) {
      anc[v][p] = 1;
      for (std::size_t a = 0; a < n; ++a) anc[v][a] |= anc[p][a];
    }
  std::set<std::string> cuts;
  for (std::size_t v = 0; v < n; ++v) {
    bool cut = true;
    for (std::size_t u = 0; u < n && cut; ++u) cut = u == v || anc[v][u] || anc[u][v];
    if (cut) cuts.insert(g[v].name);
  }
  CHECK(cuts == std::set<std::string>{"x", "stem.conv", "stem.bn", "cells.7.concat", "global_pooling", "classifier"});
}

TEST_CASE("make_darts_network: one normal cell matches the torch export's sizes and costs") {
  // The export: one DARTS-V2 normal cell, C = 36, inputs 144 x 32 x 32 (stem_multiplier 4 gives that).
  const dataflow_graph torch = read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/darts_v2_normal_cell.inference.json");
  const dataflow_graph ours = make_darts_network({.cells = 1, .stem_multiplier = 4});
  auto kinds = [](const dataflow_graph& g, bool ours_) {
    std::multiset<std::tuple<std::string, std::int64_t, double>> s;
    for (std::size_t v = 0; v < num_vertices(g); ++v) {
      const auto& n = g[v];
      if (ours_ && n.name.rfind("cells.0.", 0) != 0) continue;
      if (n.op == "input") continue;
      s.emplace(n.op == "depthwise_conv2d" ? "conv2d" : n.op, n.bytes, n.cost);
    }
    return s;
  };
  CHECK(kinds(ours, true) == kinds(torch, false));
  std::size_t cell_nodes = 0;
  for (std::size_t v = 0; v < num_vertices(ours); ++v) cell_nodes += ours[v].name.rfind("cells.0.", 0) == 0;
  CHECK(cell_nodes == num_vertices(torch) - 2);
  CHECK(num_edges(ours) - 2 /* x->stem->bn */ - 2 /* concat -> pool -> fc */ == num_edges(torch));
}

TEST_CASE("make_darts_network: deterministic; bad options throw") {
  CHECK(to_json(make_darts_network({.cells = 5})) == to_json(make_darts_network({.cells = 5})));
  CHECK_THROWS_WITH_AS((void)make_darts_network({.cells = 0}), doctest::Contains("cells"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)make_darts_network({.channels = 1}), doctest::Contains("channels"), std::invalid_argument);
}
