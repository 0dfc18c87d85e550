#include <memsched/graph/darts.hpp>
#include <memsched/graph/identity_rewrite.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>

using namespace memsched;
using namespace memsched::testing;

namespace {

struct builder {
  dataflow_graph g;
  std::size_t add(const std::string& name, const std::string& op, std::int64_t bytes, double cost, std::vector<std::size_t> inputs = {}) {
    node n;
    n.id = static_cast<std::int64_t>(num_vertices(g));
    n.name = name;
    n.op = op;
    n.bytes = bytes;
    n.cost = cost;
    const std::size_t v = add_vertex(n, g);
    for (auto u : inputs) add_edge(u, v, g);
    return v;
  }
};

// The best peak over all topological orders (brute force), re-checked by simulate_order.
std::int64_t best_peak(const dataflow_graph& g) {
  const memory_graph m = make_memory_graph(g);
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for_each_topological_order(m, [&](const std::vector<std::size_t>& order) {
    best = std::min(best, detail::order_peak_unchecked(m, order));
  });
  return best;
}

double total_cost(const dataflow_graph& g) {
  double c = 0;
  for (std::size_t v = 0; v < num_vertices(g); ++v) c += g[v].cost;
  return c;
}

std::map<std::string, std::size_t> by_name(const dataflow_graph& g) {
  std::map<std::string, std::size_t> m;
  for (std::size_t v = 0; v < num_vertices(g); ++v) m[g[v].name] = v;
  return m;
}

// Every vertex maps to an input vertex; kept vertices are identical to their original.
void check_mapping(const dataflow_graph& before, const identity_rewrite_result& r) {
  REQUIRE(r.original.size() == num_vertices(r.graph));
  std::int64_t max_id = 0;
  for (std::size_t v = 0; v < num_vertices(before); ++v) max_id = std::max(max_id, before[v].id);
  std::set<std::int64_t> ids;
  for (std::size_t v = 0; v < num_vertices(r.graph); ++v) {
    REQUIRE(r.original[v] < num_vertices(before));
    const node& n = r.graph[v];
    const node& o = before[r.original[v]];
    CHECK(ids.insert(n.id).second);  // unique ids
    if (n.id == o.id) {
      CHECK(n.name == o.name);
      CHECK(n.bytes == o.bytes);
    } else {
      CHECK(n.id > max_id);
      CHECK(n.name.rfind(o.name, 0) == 0);  // partials are named after their original
    }
  }
}

}  // namespace

TEST_CASE("rewrite_identities: concat -> conv2d becomes accumulating partial convs (peak sum(x)+y -> max(x)+y)") {
  builder b;
  const auto s = b.add("s", "input", 1, 0);
  const auto x1 = b.add("x1", "conv2d", 10, 100, {s}), x2 = b.add("x2", "conv2d", 20, 100, {s}), x3 = b.add("x3", "conv2d", 30, 100, {s});
  const auto cat = b.add("cat", "concat", 60, 6, {x1, x2, x3});
  const auto y = b.add("y", "conv2d", 5, 600, {cat});
  b.add("z", "relu", 5, 1, {y});
  const auto r = rewrite_identities(b.g);
  CHECK(r.concat_conv_rewrites == 1);
  CHECK(r.concat_depthwise_rewrites == 0);
  CHECK(r.concats_removed == 1);
  CHECK(num_vertices(r.graph) == num_vertices(b.g) - 2 + 3);
  check_mapping(b.g, r);
  // Before: the concat needs all inputs and its own copy: 60 + 60. After: s + max(x) + y = 1 + 30 + 5.
  CHECK(best_peak(b.g) == 120);
  CHECK(best_peak(r.graph) == 36);
  // Partials: p_1 holds y (5 bytes), the others accumulate (0 bytes); costs 100, 200, 300 (by input size).
  const auto idx = by_name(r.graph);
  CHECK(r.graph[idx.at("y.part0")].bytes == 5);
  CHECK(r.graph[idx.at("y.part1")].bytes == 0);
  CHECK(r.graph[idx.at("y.part2")].bytes == 0);
  CHECK(r.graph[idx.at("y.part0")].cost == doctest::Approx(100));
  CHECK(r.graph[idx.at("y.part1")].cost == doctest::Approx(200));
  CHECK(r.graph[idx.at("y.part2")].cost == doctest::Approx(300));
  CHECK(r.graph[idx.at("y.part0")].op == "partial_conv2d");
  for (auto p : {"y.part0", "y.part1", "y.part2"}) CHECK(r.original[idx.at(p)] == y);
  CHECK(edge(idx.at("x1"), idx.at("y.part0"), r.graph).second);
  CHECK(edge(idx.at("x3"), idx.at("y.part2"), r.graph).second);
  CHECK(edge(idx.at("y.part0"), idx.at("y.part2"), r.graph).second);  // keeps the accumulator alive
  CHECK(edge(idx.at("y.part0"), idx.at("z"), r.graph).second);
  CHECK(edge(idx.at("y.part2"), idx.at("z"), r.graph).second);
  // The concat's cost disappears with it; everything else is preserved.
  CHECK(total_cost(r.graph) == doctest::Approx(total_cost(b.g) - 6));
  // A simulated order of the rewritten graph: the accumulator stays resident through p_3 and until z.
  const memory_graph m = make_memory_graph(r.graph);
  std::vector<std::size_t> order;
  for (auto name : {"s", "x1", "y.part0", "x2", "y.part1", "x3", "y.part2", "z"}) order.push_back(idx.at(name));
  const auto sim = simulate_order(m, order);
  CHECK(sim.peak_bytes == 36);
  CHECK(sim.live_after[6] == 5);  // after p_3: only the accumulator (z not run yet)
}

TEST_CASE("rewrite_identities: concat -> depthwise conv becomes per-input depthwise convs and a concat") {
  builder b;
  const auto s = b.add("s", "input", 1, 0);
  const auto x1 = b.add("x1", "conv2d", 40, 10, {s}), x2 = b.add("x2", "conv2d", 40, 10, {s});
  const auto cat = b.add("cat", "concat", 80, 8, {x1, x2});
  const auto dw = b.add("blk.dw", "depthwise_conv2d", 20, 50, {cat});  // stride 2
  const auto z = b.add("z", "add", 5, 1, {dw});
  const auto r = rewrite_identities(b.g);
  CHECK(r.concat_conv_rewrites == 0);
  CHECK(r.concat_depthwise_rewrites == 1);
  check_mapping(b.g, r);
  const auto idx = by_name(r.graph);
  CHECK(r.graph[idx.at("blk.dw.part0")].bytes == 10);
  CHECK(r.graph[idx.at("blk.dw.part1")].bytes == 10);
  CHECK(r.graph[idx.at("blk.dw.part0")].cost == doctest::Approx(25));
  CHECK(r.graph[idx.at("blk.dw.concat")].op == "concat");
  CHECK(r.graph[idx.at("blk.dw.concat")].bytes == 20);
  CHECK(r.original[idx.at("blk.dw.concat")] == dw);
  CHECK(total_cost(r.graph) == doctest::Approx(total_cost(b.g)));  // the concat's cost moves
  // Before: x1 + x2 + concat = 160. After: d_1 + x2 + d_2 = 10 + 40 + 10 = 60.
  CHECK(best_peak(b.g) == 160);
  CHECK(best_peak(r.graph) == 60);
  // If the depthwise conv feeds a dense conv, the new concat is rewritten channel-wise in a second pass.
  b.g[z].op = "conv2d";
  const auto r2 = rewrite_identities(b.g);
  CHECK(r2.concat_depthwise_rewrites == 1);
  CHECK(r2.concat_conv_rewrites == 1);
  CHECK(r2.concats_removed == 2);
  CHECK(r2.passes == 2);
  check_mapping(b.g, r2);
  CHECK(r2.original[by_name(r2.graph).at("z.part1")] == z);
  CHECK(best_peak(r2.graph) == 55);  // x2 + d_1 + d_2 + ... : 40 + 10 + 5 (z accumulator)
  CHECK(rewrite_identities(b.g, {.max_passes = 1}).passes == 1);
  // The torch exports' convention: a conv2d named "*.dw" is depthwise too; "*.pw" is dense.
  node n;
  n.op = "conv2d";
  n.name = "nodes.3.dw";
  CHECK(is_depthwise_conv(n));
  n.name = "nodes.3.pw";
  CHECK(!is_depthwise_conv(n));
  CHECK(is_dense_conv(n));
}

TEST_CASE("rewrite_identities: through elementwise ops, with several consumers") {
  // cat -> relu -> {conv a, conv b}, and cat -> conv c: all paths end at convs.
  builder b;
  const auto s = b.add("s", "input", 3, 0);
  const auto x1 = b.add("x1", "conv2d", 10, 1, {s}), x2 = b.add("x2", "conv2d", 30, 1, {s});
  const auto cat = b.add("cat", "concat", 40, 4, {x1, x2});
  const auto relu = b.add("relu", "relu", 40, 40, {cat});
  const auto a = b.add("a", "conv2d", 8, 80, {relu});
  const auto bb = b.add("b", "conv2d", 4, 40, {relu});
  const auto c = b.add("c", "conv2d", 2, 20, {cat});
  b.add("out", "add", 2, 2, {a, bb, c});
  const auto r = rewrite_identities(b.g);
  CHECK(r.concat_conv_rewrites == 3);
  CHECK(r.concats_removed == 1);
  check_mapping(b.g, r);
  const auto idx = by_name(r.graph);
  CHECK(r.graph[idx.at("relu.part0")].bytes == 10);
  CHECK(r.graph[idx.at("relu.part1")].bytes == 30);
  CHECK(r.graph[idx.at("relu.part0")].cost == doctest::Approx(10));
  CHECK(r.original[idx.at("relu.part1")] == relu);
  CHECK(edge(idx.at("x2"), idx.at("relu.part1"), r.graph).second);
  CHECK(edge(idx.at("relu.part1"), idx.at("a.part1"), r.graph).second);
  CHECK(edge(idx.at("relu.part1"), idx.at("b.part1"), r.graph).second);
  CHECK(edge(idx.at("x2"), idx.at("c.part1"), r.graph).second);
  CHECK(total_cost(r.graph) == doctest::Approx(total_cost(b.g) - 4));
  CHECK(best_peak(r.graph) <= best_peak(b.g));
  // Without through_elementwise the relu blocks the rewrite.
  const auto plain = rewrite_identities(b.g, {.through_elementwise = false});
  CHECK(plain.concats_removed == 0);
  CHECK(to_json(plain.graph) == to_json(b.g));
  // Without channel_wise nothing applies either.
  CHECK(rewrite_identities(b.g, {.channel_wise = false}).concats_removed == 0);
}

TEST_CASE("rewrite_identities: graphs without the pattern are unchanged") {
  builder b;
  const auto s = b.add("s", "input", 1, 0);
  const auto x1 = b.add("x1", "conv2d", 10, 1, {s}), x2 = b.add("x2", "conv2d", 20, 1, {s});
  const auto cat = b.add("cat", "concat", 30, 1, {x1, x2});
  const auto y = b.add("y", "conv2d", 5, 1, {cat});
  const auto other = b.add("other", "add", 30, 1, {cat});  // a non-conv consumer blocks the rewrite
  b.add("z", "add", 5, 1, {y, other});
  auto r = rewrite_identities(b.g);
  CHECK(r.concats_removed == 0);
  CHECK(r.passes == 0);
  CHECK(to_json(r.graph) == to_json(b.g));
  CHECK(r.original == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6});
  // A concat that is a graph output stays.
  builder c;
  const auto u = c.add("u", "input", 1, 0), v = c.add("v", "input", 1, 0);
  const auto cc = c.add("cat", "concat", 2, 1, {u, v});
  c.add("conv", "conv2d", 2, 1, {cc});
  c.g[boost::graph_bundle].outputs = std::vector<std::size_t>{cc, 3};
  CHECK(rewrite_identities(c.g).concats_removed == 0);
  // Random DAGs without op names: nothing to rewrite.
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const dataflow_graph g = to_dataflow_graph(random_dag(12, 0.3, seed));
    CHECK(to_json(rewrite_identities(g).graph) == to_json(g));
  }
}

TEST_CASE("rewrite_identities: on random small graphs the best peak never gets worse (brute force)") {
  // A random DAG; a concat (bytes = sum of its inputs) of random vertices feeding a conv or a
  // depthwise conv (sometimes through a relu) whose output feeds a sink.
  std::mt19937_64 rng(11);
  std::size_t checked = 0;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const auto d = random_dag(5, 0.4, seed, 50);
    dataflow_graph g = to_dataflow_graph(d);
    for (std::size_t v = 0; v < num_vertices(g); ++v) g[v].op = "conv2d", g[v].name = "n" + std::to_string(v);
    std::vector<std::size_t> inputs;
    for (std::size_t v = 0; v < 5; ++v)
      if (rng() % 2) inputs.push_back(v);
    if (inputs.size() < 2) continue;
    node cat;
    cat.id = 100;
    cat.op = "concat";
    cat.name = "cat";
    for (auto x : inputs) cat.bytes += g[x].bytes;
    const auto c = add_vertex(cat, g);
    for (auto x : inputs) add_edge(x, c, g);
    std::size_t head = c;
    if (seed % 2) {
      node relu{.id = 101, .name = "relu", .op = "relu", .bytes = cat.bytes, .cost = 1};
      head = add_vertex(relu, g);
      add_edge(c, head, g);
    }
    // Every third graph: a depthwise conv (output no larger than its input, as with stride >= 1).
    const bool depthwise = seed % 3 == 2;
    node conv{.id = 102,
              .name = "conv",
              .op = depthwise ? "depthwise_conv2d" : "conv2d",
              .bytes = static_cast<std::int64_t>(1 + rng() % static_cast<std::uint64_t>(depthwise ? cat.bytes : 60)),
              .cost = 9};
    const auto y = add_vertex(conv, g);
    add_edge(head, y, g);
    node sink{.id = 103, .name = "sink", .op = "add", .bytes = 1, .cost = 1};
    const auto z = add_vertex(sink, g);
    add_edge(y, z, g);
    const auto r = rewrite_identities(g);
    REQUIRE(r.concat_conv_rewrites + r.concat_depthwise_rewrites == 1);
    CHECK(r.concat_depthwise_rewrites == (depthwise ? 1u : 0u));
    CHECK(total_cost(r.graph) == doctest::Approx(total_cost(g) - (depthwise ? 0.0 : cat.cost)));
    check_mapping(g, r);
    CHECK(best_peak(r.graph) <= best_peak(g));
    ++checked;
  }
  CHECK(checked >= 10);
}

TEST_CASE("rewrite_identities: the torch graphs and the DARTS network") {
  // Counts on tests/data/torch (inference and training): only U-Net's four skip concats feed convs
  // directly; GoogLeNet's concats also feed max pools (rewritable with pooling_is_kernel_wise).
  std::map<std::string, std::size_t> expected{{"unet.inference", 4}};
  for (const auto& entry : std::filesystem::directory_iterator(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch")) {
    const dataflow_graph g = read_json_graph(entry.path());
    const auto r = rewrite_identities(g);
    const std::string name = entry.path().stem().string();
    const auto it = expected.find(name);
    CHECK_MESSAGE(r.concat_conv_rewrites + r.concat_depthwise_rewrites == (it == expected.end() ? 0 : it->second), name);
    check_mapping(g, r);
    const auto before = kahn_order(g).peak_bytes, after = kahn_order(r.graph).peak_bytes;
    MESSAGE(name << ": " << r.concat_conv_rewrites << " channel-wise, " << r.concat_depthwise_rewrites << " kernel-wise; kahn peak " << before
                 << " -> " << after);
    if (name == "unet.inference") CHECK(after < before);
    if (name.rfind("googlenet", 0) == 0) {
      const auto p = rewrite_identities(g, {.pooling_is_kernel_wise = true});
      MESSAGE(name << " with pools: " << p.concat_conv_rewrites << " channel-wise, " << p.concat_depthwise_rewrites << " kernel-wise, "
                   << p.passes << " passes; kahn peak " << kahn_order(p.graph).peak_bytes);
      if (name == "googlenet.inference") {
        CHECK(p.concat_depthwise_rewrites > 0);
        CHECK(p.passes >= 2);  // a pooled concat's new concat feeds convs: rewritten in the next pass
        check_mapping(g, p);
      }
    }
  }
  const dataflow_graph darts = make_darts_network();
  const auto r = rewrite_identities(darts);
  // Cells 0..18 outputs feed two cells through relu -> conv (cell 18's only one; after the
  // reduction cells a FactorizedReduce has two convs): 16 x 2 + 2 x 3 + 1.
  CHECK(r.concats_removed == 19);
  CHECK(r.concat_conv_rewrites == 39);
  CHECK(kahn_order(r.graph).peak_bytes < kahn_order(darts).peak_bytes);
  MESSAGE("darts 20 cells: kahn peak " << kahn_order(darts).peak_bytes << " -> " << kahn_order(r.graph).peak_bytes);
}

TEST_CASE("original_order: a rewritten graph's order mapped back to the original nodes") {
  builder b;
  const auto s = b.add("s", "input", 1, 0);
  const auto x1 = b.add("x1", "conv2d", 10, 100, {s}), x2 = b.add("x2", "conv2d", 20, 100, {s}), x3 = b.add("x3", "conv2d", 30, 100, {s});
  const auto cat = b.add("cat", "concat", 60, 6, {x1, x2, x3});
  const auto y = b.add("y", "conv2d", 5, 600, {cat});
  const auto z = b.add("z", "relu", 5, 1, {y});
  const auto r = rewrite_identities(b.g);
  const auto idx = by_name(r.graph);
  std::vector<std::size_t> rewritten;
  for (auto name : {"s", "x1", "y.part0", "x2", "y.part1", "x3", "y.part2", "z"}) rewritten.push_back(idx.at(name));
  // Each node at the position of its last part (y: y.part2, position 6); the removed concat runs
  // as soon as its inputs have run (before y).
  CHECK(original_order(r, b.g, rewritten) == std::vector<std::size_t>{s, x1, x2, x3, cat, y, z});
  // Another order of the rewritten graph: x3 first.
  rewritten.clear();
  for (auto name : {"s", "x3", "x1", "y.part0", "x2", "y.part1", "y.part2", "z"}) rewritten.push_back(idx.at(name));
  CHECK(original_order(r, b.g, rewritten) == std::vector<std::size_t>{s, x3, x1, x2, cat, y, z});
  // Not a permutation, or a rewrite of another graph: errors naming the function.
  rewritten.pop_back();
  CHECK_THROWS_WITH_AS((void)original_order(r, b.g, rewritten), doctest::Contains("original_order"), std::invalid_argument);
  rewritten.push_back(idx.at("s"));
  CHECK_THROWS_WITH_AS((void)original_order(r, b.g, rewritten), doctest::Contains("repeats"), std::invalid_argument);
  builder small;
  small.add("a", "input", 1, 0);
  rewritten.back() = idx.at("z");
  CHECK_THROWS_WITH_AS((void)original_order(r, small.g, rewritten), doctest::Contains("original_order"), std::invalid_argument);
}

TEST_CASE("original_order: valid orders of the original graph for random rewritten graphs and random orders") {
  // The same generator as the brute-force test above; every order of the rewritten graph maps to
  // a topological order of the original (simulate_order re-checks it) that keeps the relative
  // order of the nodes' last parts.
  std::mt19937_64 rng(5);
  std::size_t checked = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const auto d = random_dag(6, 0.4, seed, 50);
    dataflow_graph g = to_dataflow_graph(d);
    for (std::size_t v = 0; v < num_vertices(g); ++v) g[v].op = "conv2d", g[v].name = "n" + std::to_string(v);
    node cat;
    cat.id = 100;
    cat.op = "concat";
    cat.name = "cat";
    const auto c = add_vertex(cat, g);
    for (std::size_t x : {std::size_t{0}, std::size_t{1}, std::size_t{2}}) add_edge(x, c, g);
    node conv{.id = 101, .name = "conv", .op = seed % 2 ? "depthwise_conv2d" : "conv2d", .bytes = 7, .cost = 1};
    const auto y = add_vertex(conv, g);
    add_edge(c, y, g);
    const auto r = rewrite_identities(g);
    REQUIRE(r.concats_removed == 1);
    const memory_graph m = make_memory_graph(r.graph);
    for (int rep = 0; rep < 5; ++rep) {
      // A random topological order of the rewritten graph.
      std::vector<std::size_t> indegree(m.size()), ready, order;
      for (std::size_t v = 0; v < m.size(); ++v)
        if ((indegree[v] = m.in_degree(v)) == 0) ready.push_back(v);
      while (!ready.empty()) {
        const std::size_t k = rng() % ready.size();
        const std::size_t v = ready[k];
        ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(k));
        order.push_back(v);
        for (auto w : m.successors(v))
          if (--indegree[w] == 0) ready.push_back(w);
      }
      const auto mapped = original_order(r, g, order);
      REQUIRE(mapped.size() == num_vertices(g));
      CHECK_NOTHROW((void)simulate_order(g, mapped));
      // Nodes kept by the rewrite (every node but the concat) appear in the order of their last part.
      std::vector<std::size_t> last(num_vertices(g), 0);
      for (std::size_t k = 0; k < order.size(); ++k) last[r.original[order[k]]] = k;
      std::vector<std::size_t> kept;
      for (auto v : mapped)
        if (v != c) kept.push_back(v);
      for (std::size_t k = 1; k < kept.size(); ++k) CHECK(last[kept[k - 1]] < last[kept[k]]);
      ++checked;
    }
  }
  CHECK(checked == 200);
}
