#include "../support/edge_ids.hpp"

#include <memsched/graph/json_io.hpp>
#include <memsched/remat/checkpoint_plan.hpp>
#include <memsched/remat/training_graph.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <tuple>

using namespace memsched;

namespace {

using memsched::testing::edge_ids;

}  // namespace

TEST_CASE("make_training_graph reproduces every shared torch training graph") {
  const std::filesystem::path dir = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "torch";
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".inference.json";
    if (file.size() <= suffix.size() || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string stem = file.substr(0, file.size() - suffix.size());
    CAPTURE(stem);
    const dataflow_graph fwd = read_json_graph(entry.path());
    const dataflow_graph expected = read_json_graph(dir / (stem + ".training.json"));
    const dataflow_graph built = make_training_graph(fwd);
    REQUIRE(num_vertices(built) == num_vertices(expected));
    for (std::size_t v = 0; v < num_vertices(built); ++v) {
      const node& a = built[v];
      const node& b = expected[v];
      CAPTURE(v);
      CHECK(a.id == b.id);
      CHECK(a.bytes == b.bytes);
      CHECK(a.cost == doctest::Approx(b.cost));
      CHECK(a.op == b.op);
      CHECK(a.name == b.name);
      CHECK(a.grad_of == b.grad_of);
      // The files mark gradients only through grad_of; the builder also sets `backward`.
      CHECK(a.role == b.role);
    }
    CHECK(edge_ids(built) == edge_ids(expected));
    REQUIRE(built[boost::graph_bundle].outputs.has_value());
    REQUIRE(expected[boost::graph_bundle].outputs.has_value());
    CHECK(*built[boost::graph_bundle].outputs == *expected[boost::graph_bundle].outputs);
    CHECK(built[boost::graph_bundle].kind == "training");
    ++checked;
  }
  CHECK(checked == 9);
}

TEST_CASE("make_training_graph on a three-node chain, by hand") {
  // x (input) -> a -> b; outputs [b].
  dataflow_graph f(3);
  f[0] = node{.id = 0, .name = "x", .op = "input", .bytes = 8, .cost = 0};
  f[1] = node{.id = 1, .name = "a", .op = "conv2d", .bytes = 16, .cost = 5};
  f[2] = node{.id = 2, .name = "b", .op = "relu", .bytes = 16, .cost = 1};
  add_edge(0, 1, f);
  add_edge(1, 2, f);
  const dataflow_graph t = make_training_graph(f);
  // 3 forward + loss + g(b) + g(a).
  REQUIRE(num_vertices(t) == 6);
  CHECK(t[3].op == "loss");
  CHECK(t[3].cost == doctest::Approx(4.0));  // 16 bytes / 4
  CHECK(t[4].name == "grad:b");
  CHECK(t[4].grad_of == 2);
  CHECK(t[4].cost == doctest::Approx(2.0));
  CHECK(t[5].name == "grad:a");
  CHECK(t[5].cost == doctest::Approx(10.0));
  const std::set<std::pair<std::int64_t, std::int64_t>> expected{
      {0, 1}, {1, 2},          // forward
      {2, 3}, {3, 4},          // output -> loss -> g(b)
      {4, 5}, {2, 5},          // edge a->b: g(b)->g(a), b->g(a)
      {1, 5}, {2, 4},          // v -> g(v)
      {0, 5}};                 // conv2d reads input x: x -> g(a)
  CHECK(edge_ids(t) == expected);
  CHECK(*t[boost::graph_bundle].outputs == std::vector<std::size_t>{3});
  CHECK(t[3].role != node_role::forward);
  CHECK(detail::forward_mask(make_memory_graph(t)) == std::vector<char>{1, 1, 1, 0, 0, 0});
}

TEST_CASE("make_training_graph: bilinear operands and options") {
  // x (input) -> p, x -> q, (p, q) -> m (mul).
  dataflow_graph f(4);
  f[0] = node{.id = 0, .op = "input", .bytes = 4, .cost = 0};
  f[1] = node{.id = 1, .op = "relu", .bytes = 4, .cost = 1};
  f[2] = node{.id = 2, .op = "relu", .bytes = 4, .cost = 1};
  f[3] = node{.id = 3, .op = "mul", .bytes = 4, .cost = 1};
  add_edge(0, 1, f);
  add_edge(0, 2, f);
  add_edge(1, 3, f);
  add_edge(2, 3, f);
  const dataflow_graph t = make_training_graph(f);
  // ids: loss 4, g(3) = 5, g(2) = 6, g(1) = 7.
  const auto e = edge_ids(t);
  CHECK(e.count({2, 7}) == 1);  // q -> g(p)
  CHECK(e.count({1, 6}) == 1);  // p -> g(q)
  const dataflow_graph plain = make_training_graph(f, {.bilinear_operands = false});
  CHECK(edge_ids(plain).count({2, 7}) == 0);
  CHECK(edge_ids(plain).size() + 2 == e.size());
}
