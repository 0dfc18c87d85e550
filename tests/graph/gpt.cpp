#include "../support/same_graph.hpp"

#include <memsched/graph/gpt.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

using namespace memsched;

using memsched::testing::check_same_graph;
using memsched::testing::edge_ids;

TEST_CASE("make_gpt: a one-layer tiny config, every node by hand") {
  // d = 4, 2 heads, S = 3, B = 2 (T = 6 tokens), vocab 5, MLP 2d = 8.
  const dataflow_graph g = make_gpt({.layers = 1, .hidden = 4, .heads = 2, .sequence = 3, .batch = 2, .vocab = 5, .mlp_ratio = 2});
  REQUIRE(num_vertices(g) == 15 + 8);
  struct expect {
    const char* name;
    const char* op;
    std::int64_t bytes;
    double cost;
    std::vector<std::size_t> preds;
  };
  // scores: B*h*S*S = 2*2*3*3 = 36 elements; bmm cost 2*B*S*S*d = 144.
  const std::vector<expect> nodes{
      {"idx", "input", 6 * 4, 0, {}},
      {"pos", "input", 3 * 4, 0, {}},
      {"mask", "input", 9 * 4, 0, {}},
      {"embedding", "embedding", 24 * 4, 24, {0}},
      {"embedding_1", "embedding", 12 * 4, 12, {1}},
      {"add", "add", 24 * 4, 24, {3, 4}},
      {"native_layer_norm", "layernorm", 24 * 4, 120, {5}},
      {"addmm", "addmm", 72 * 4, 2 * 6 * 4 * 12 + 72, {6}},  // 648
      {"bmm", "bmm", 36 * 4, 144, {7}},
      {"mul", "mul", 36 * 4, 36, {8}},
      {"add_1", "add", 36 * 4, 36, {2, 9}},
      {"_softmax", "softmax", 36 * 4, 180, {10}},
      {"bmm_1", "bmm", 24 * 4, 144, {7, 11}},
      {"clone", "copy", 24 * 4, 24, {12}},
      {"addmm_1", "addmm", 24 * 4, 2 * 6 * 4 * 4 + 24, {13}},  // 216
      {"add_2", "add", 24 * 4, 24, {5, 14}},
      {"native_layer_norm_1", "layernorm", 24 * 4, 120, {15}},
      {"addmm_2", "addmm", 48 * 4, 2 * 6 * 4 * 8 + 48, {16}},  // 432
      {"gelu", "gelu", 48 * 4, 384, {17}},
      {"addmm_3", "addmm", 24 * 4, 2 * 6 * 8 * 4 + 24, {18}},  // 408
      {"add_3", "add", 24 * 4, 24, {15, 19}},
      {"native_layer_norm_2", "layernorm", 24 * 4, 120, {20}},
      {"mm", "mm", 30 * 4, 2 * 6 * 4 * 5, {21}},  // 240
  };
  std::set<std::pair<std::int64_t, std::int64_t>> edges;
  for (std::size_t v = 0; v < nodes.size(); ++v) {
    CAPTURE(v);
    CHECK(g[v].id == static_cast<std::int64_t>(v));
    CHECK(g[v].name == nodes[v].name);
    CHECK(g[v].op == nodes[v].op);
    CHECK(g[v].bytes == nodes[v].bytes);
    CHECK(g[v].cost == doctest::Approx(nodes[v].cost));
    for (auto p : nodes[v].preds) edges.emplace(p, v);
  }
  CHECK(edge_ids(g) == edges);
  CHECK(*g[boost::graph_bundle].outputs == std::vector<std::size_t>{22});
  CHECK(g[boost::graph_bundle].kind == "inference");
  // The stored order is topological: the simulator accepts it.
  CHECK_NOTHROW((void)simulate_order(make_memory_graph(g), g[boost::graph_bundle].order));
}

TEST_CASE("make_gpt: the defaults are the traced GPT-2 small, node for node") {
  const dataflow_graph expected = read_json_graph(std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "gpt" / "gpt2_small.inference.json");
  const dataflow_graph built = make_gpt({.name = "gpt2_small"});
  check_same_graph(built, expected);
  CHECK(built[boost::graph_bundle].name == "gpt2_small");
  CHECK(num_vertices(make_training_graph(built)) == 374);
}

TEST_CASE("make_gpt: sizes grow by 15 forward and 30 training nodes per layer") {
  for (std::size_t layers : {1u, 2u, 7u, 96u}) {
    CAPTURE(layers);
    const dataflow_graph f = make_gpt({.layers = layers, .hidden = 64, .heads = 4, .sequence = 16, .vocab = 100});
    CHECK(num_vertices(f) == 15 * layers + 8);
    CHECK(num_edges(f) == 19 * layers + 6);
    const dataflow_graph t = make_training_graph(f);
    CHECK(num_vertices(t) == 30 * layers + 14);
    const memory_graph m = make_memory_graph(t);
    CHECK(m.has_training_roles());
  }
  // layers = 96: the paper's GPT 96 has 2,894 forward + backward nodes.
  CHECK(num_vertices(make_training_graph(make_gpt({.layers = 96, .hidden = 512, .heads = 8, .vocab = 32000}))) == 2894);
  // 384 layers: beyond 11,000 nodes, the scale of issue 10's largest benchmark graph.
  const dataflow_graph big = make_training_graph(make_gpt({.layers = 384, .hidden = 512, .heads = 8, .vocab = 32000}));
  CHECK(num_vertices(big) == 11534);
  const memory_graph m = make_memory_graph(big);  // valid, acyclic
  CHECK(m.size() == 11534);
}

TEST_CASE("make_gpt: identical blocks, batch scales activations, bad options name the field") {
  const dataflow_graph g = make_gpt({.layers = 3});
  for (std::size_t v = 6; v < 6 + 15; ++v) {
    CHECK(g[v].op == g[v + 15].op);
    CHECK(g[v].bytes == g[v + 30].bytes);
    CHECK(g[v].cost == g[v + 30].cost);
  }
  const dataflow_graph g2 = make_gpt({.layers = 1, .batch = 2});
  const dataflow_graph g1 = make_gpt({.layers = 1});
  CHECK(g2[1].bytes == g1[1].bytes);          // positions are shared by the batch
  CHECK(g2[2].bytes == g1[2].bytes);          // so is the mask
  CHECK(g2[7].bytes == 2 * g1[7].bytes);      // QKV
  CHECK(g2[8].bytes == 2 * g1[8].bytes);      // attention scores
  CHECK(g2[22].cost == doctest::Approx(2 * g1[22].cost));  // head
  auto throws_naming = [](const gpt_options& o, const std::string& field) {
    try {
      (void)make_gpt(o);
      FAIL("no exception for " << field);
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      CHECK(what.find("make_gpt") != std::string::npos);
      CHECK(what.find(field) != std::string::npos);
    }
  };
  throws_naming({.layers = 0}, "layers");
  throws_naming({.hidden = 0}, "hidden");
  throws_naming({.hidden = 10, .heads = 4}, "heads");
  throws_naming({.sequence = 0}, "sequence");
  throws_naming({.batch = -1}, "batch");
  throws_naming({.vocab = 0}, "vocab");
  throws_naming({.mlp_ratio = 0}, "mlp_ratio");
  throws_naming({.hidden = std::int64_t{1} << 40, .heads = 1, .sequence = 1 << 20}, "2^62");
}
