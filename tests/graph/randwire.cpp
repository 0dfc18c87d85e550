#include <memsched/graph/json_io.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/graph/randwire.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>

using namespace memsched;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The checks every generated graph must pass: a valid DAG whose `order` is topological, positive
// sizes, non-negative costs, ids 0..n-1.
void check_well_formed(const dataflow_graph& g) {
  const memory_graph m = make_memory_graph(g);  // throws on a cycle
  const auto& info = g[boost::graph_bundle];
  REQUIRE(info.order.size() == num_vertices(g));
  CHECK_NOTHROW((void)simulate_order(m, info.order));
  for (std::size_t v = 0; v < num_vertices(g); ++v) {
    CHECK(g[v].id == static_cast<std::int64_t>(v));
    CHECK(g[v].bytes > 0);
    CHECK(g[v].cost >= 0);
    CHECK(!g[v].op.empty());
    if (g[v].op != "input") CHECK(g[v].cost > 0);
  }
}

}  // namespace

TEST_CASE("make_randwire: default small regime, 3 stages of WS(32, 4, 0.75)") {
  const dataflow_graph g = make_randwire();
  check_well_formed(g);
  // Stem 6 + head 6, 4 ops per RandWire node, plus wsum and mean_n nodes.
  CHECK(num_vertices(g) >= 6 + 6 + 3 * 4 * 32);
  CHECK(num_vertices(g) <= 6 + 6 + 3 * (5 * 32 + 1));
  MESSAGE("randwire 3 stages: " << num_vertices(g) << " nodes, " << num_edges(g) << " edges");
  std::size_t relus = 0, dws = 0, pws = 0, bns = 0;
  for (std::size_t v = 0; v < num_vertices(g); ++v) {
    const auto& n = g[v];
    if (n.name.rfind("stage", 0) != 0) continue;
    relus += n.op == "relu";
    dws += n.op == "depthwise_conv2d";
    pws += n.op == "conv2d";
    bns += n.op == "batchnorm";
    if (n.op == "wsum") CHECK(in_degree(v, g) > 1);
    if (n.op == "depthwise_conv2d") CHECK(ends_with(n.name, ".dw"));
  }
  CHECK(relus == 96);
  CHECK(dws == 96);
  CHECK(pws == 96);
  CHECK(bns == 96);
  // Channels 78, 156, 312 at 28, 14, 7 (224 input): the stage outputs' sizes.
  std::map<std::string, std::int64_t> bytes;
  for (std::size_t v = 0; v < num_vertices(g); ++v) bytes[g[v].name] = g[v].bytes;
  CHECK(bytes.at("stage1.nodes.31.bn") == 4 * 78 * 28 * 28);
  CHECK(bytes.at("stage2.nodes.31.bn") == 4 * 156 * 14 * 14);
  CHECK(bytes.at("stage3.nodes.31.bn") == 4 * 312 * 7 * 7);
  CHECK(bytes.at("x") == 4 * 3 * 224 * 224);
  CHECK(bytes.at("head.fc") == 4 * 1000);
  const auto& outputs = g[boost::graph_bundle].outputs;
  REQUIRE(outputs.has_value());
  CHECK(g[outputs->front()].name == "head.fc");
}

TEST_CASE("make_randwire: deterministic for a seed, different across seeds") {
  const auto a = to_json(make_randwire({.seed = 7})), b = to_json(make_randwire({.seed = 7})), c = to_json(make_randwire({.seed = 8}));
  CHECK(a == b);
  CHECK(a["edges"] != c["edges"]);
}

TEST_CASE("make_randwire: each stage is a WS graph oriented low -> high") {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const dataflow_graph g = make_randwire({.stages = 1, .seed = seed, .expand_ops = false, .stem_and_head = false});
    check_well_formed(g);
    std::vector<std::size_t> nodes;
    for (std::size_t v = 0; v < num_vertices(g); ++v)
      if (g[v].op == "randwire_node") nodes.push_back(v);
    REQUIRE(nodes.size() == 32);
    // WS keeps N*K/2 edges; orienting them from the lower index makes a DAG.
    std::size_t internal = 0, from_input = 0;
    for (auto [e, end] = edges(g); e != end; ++e) {
      const auto u = source(*e, g), v = target(*e, g);
      if (g[u].op == "randwire_node" && g[v].op == "randwire_node") {
        ++internal;
        CHECK(u < v);
      }
      if (g[u].op == "input") ++from_input;
    }
    CHECK(internal == 64);
    // Exactly the nodes without predecessors in the WS DAG read the stage input (node 0 always).
    std::size_t sources = 0;
    for (auto v : nodes) {
      std::size_t ws_preds = 0;
      for (auto [e, end] = in_edges(v, g); e != end; ++e) ws_preds += g[source(*e, g)].op == "randwire_node";
      sources += ws_preds == 0;
    }
    CHECK(sources == from_input);
    CHECK(sources >= 1);
  }
}

TEST_CASE("make_randwire: with p = 0 the stage is the ring lattice") {
  const dataflow_graph g = make_randwire({.stages = 1, .nodes = 8, .k = 4, .p = 0.0, .expand_ops = false, .stem_and_head = false});
  std::set<std::pair<std::int64_t, std::int64_t>> got;
  std::map<std::string, std::int64_t> index;  // "stage1.nodes.i.node" -> i
  for (std::size_t v = 0; v < num_vertices(g); ++v)
    if (g[v].op == "randwire_node") index[g[v].name] = std::stoll(g[v].name.substr(std::string("stage1.nodes.").size()));
  for (auto [e, end] = edges(g); e != end; ++e) {
    const auto& a = g[source(*e, g)].name;
    const auto& b = g[target(*e, g)].name;
    if (index.count(a) && index.count(b)) got.emplace(index[a], index[b]);
  }
  std::set<std::pair<std::int64_t, std::int64_t>> ring;
  for (std::int64_t i = 0; i < 8; ++i)
    for (std::int64_t j = 1; j <= 2; ++j) ring.emplace(std::min(i, (i + j) % 8), std::max(i, (i + j) % 8));
  CHECK(got == ring);
}

TEST_CASE("make_randwire: sizes and costs per op match the torch export of one stage") {
  // tests/data/torch/randwire_ws_stage: one WS(32,4,0.75) stage on a 32 x 56 x 56 input, 32 channels.
  const dataflow_graph torch = read_json_graph(std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "torch" / "randwire_ws_stage.inference.json");
  const dataflow_graph ours = make_randwire({.stages = 1, .channels = 32, .resolution = 224, .stem_and_head = false});
  check_well_formed(ours);
  // (name suffix, in-degree of the wsum, bytes, cost) triples: every kind of node we produce must
  // appear in the export with the same size and cost, and vice versa.
  auto kinds = [](const dataflow_graph& g) {
    std::set<std::tuple<std::string, std::size_t, std::int64_t, double>> s;
    for (std::size_t v = 0; v < num_vertices(g); ++v) {
      const auto& n = g[v];
      const std::string suffix = n.name.substr(n.name.rfind('.') + 1);
      if (n.op == "wsum" || n.op == "mean_n") continue;  // depend on the random wiring's degrees
      s.emplace(n.op == "input" ? "input" : suffix, 0, n.bytes, n.cost);
    }
    return s;
  };
  CHECK(kinds(ours) == kinds(torch));
  // wsum costs 2 * k * elements, as in the export.
  for (std::size_t v = 0; v < num_vertices(ours); ++v)
    if (ours[v].op == "wsum") CHECK(ours[v].cost == doctest::Approx(2.0 * double(in_degree(v, ours)) * double(ours[v].bytes / 4)));
  for (std::size_t v = 0; v < num_vertices(torch); ++v)
    if (torch[v].op == "wsum") CHECK(torch[v].cost == doctest::Approx(2.0 * double(in_degree(v, torch)) * double(torch[v].bytes / 4)));
}

TEST_CASE("make_randwire: one node per RandWire node keeps the total cost") {
  const dataflow_graph a = make_randwire({.seed = 3}), b = make_randwire({.seed = 3, .expand_ops = false});
  check_well_formed(b);
  double ca = 0, cb = 0;
  for (std::size_t v = 0; v < num_vertices(a); ++v) ca += a[v].cost;
  for (std::size_t v = 0; v < num_vertices(b); ++v) cb += b[v].cost;
  CHECK(ca == doctest::Approx(cb));
  std::size_t means = 0;
  for (std::size_t v = 0; v < num_vertices(b); ++v) means += b[v].op == "mean_n";
  CHECK(means <= 3);  // one per stage with several sinks
  CHECK(num_vertices(b) == 6 + 6 + 3 * 32 + means);
  for (std::size_t v = 0; v < num_vertices(b); ++v)
    if (b[v].op == "randwire_node") CHECK(b[v].workspace > 0);
}

TEST_CASE("make_randwire: bad options throw, naming the field") {
  CHECK_THROWS_WITH_AS((void)make_randwire({.stages = 0}), doctest::Contains("stages"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)make_randwire({.k = 3}), doctest::Contains("k must be even"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)make_randwire({.nodes = 4, .k = 4}), doctest::Contains("k must be"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)make_randwire({.p = 1.5}), doctest::Contains("p must"), std::invalid_argument);
  CHECK_THROWS_AS((void)make_randwire({.channels = 0}), std::invalid_argument);
  try {
    (void)make_randwire({.k = 3});
    FAIL("no exception");
  } catch (const option_error& e) {  // the field, for a front end to name its flag
    CHECK(e.option() == "k");
    CHECK(e.requirement() == "must be even with 2 <= k < nodes, got 3");
  }
}
