#include <memsched/graph/detail/generator_support.hpp>
#include <memsched/graph/gpt.hpp>
#include <memsched/graph/random_layered.hpp>
#include <memsched/remat/hiremate_partition.hpp>
#include <memsched/remat/training_graph.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace memsched;

namespace {

using edge_set = std::set<std::pair<std::size_t, std::size_t>>;

memory_graph make_graph(std::size_t n, const std::vector<std::pair<std::size_t, std::size_t>>& edges, std::vector<std::int64_t> bytes) {
  return memory_graph(memory_graph_data{.num_nodes = n, .edges = edges, .bytes = std::move(bytes)});
}

// Kahn's algorithm over an explicit edge set: true when it places every node (no cycle).
bool acyclic(std::size_t n, const edge_set& edges) {
  std::vector<std::size_t> indeg(n, 0);
  std::vector<std::vector<std::size_t>> succ(n);
  for (auto [a, b] : edges) ++indeg[b], succ[a].push_back(b);
  std::vector<std::size_t> ready;
  for (std::size_t v = 0; v < n; ++v)
    if (indeg[v] == 0) ready.push_back(v);
  std::size_t placed = 0;
  while (!ready.empty()) {
    const std::size_t v = ready.back();
    ready.pop_back();
    ++placed;
    for (auto w : succ[v])
      if (--indeg[w] == 0) ready.push_back(w);
  }
  return placed == n;
}

// Everything a partition must satisfy, recomputed from the graph alone: each level covers every
// node of the level below exactly once, groups have 2..max_lower members (or one), the quotient
// graph of every level is acyclic (Property 1) and is the one reported, the top is small enough,
// boundary values are right, and two groups of one class are the same computation under the
// vertex correspondence vertices[i] <-> vertices[i].
void check_partition(const memory_graph& g, const hiremate_partition_result& r, const hiremate_partition_options& o,
                     const std::vector<std::string>& ops = {}) {
  REQUIRE(r.status == solve_status::feasible);
  std::vector<char> scope(g.size(), 1);
  if (g.has_training_roles())
    for (std::size_t v = 0; v < g.size(); ++v) scope[v] = g.is_forward(v);
  CHECK(r.stats.vertices == static_cast<std::size_t>(std::count(scope.begin(), scope.end(), 1)));
  // Level 0 groups vertices (by index; only the forward ones), level k the groups of level k-1.
  std::size_t below = g.size();
  std::vector<char> below_scope = scope;
  std::vector<std::vector<std::size_t>> below_vertices;  // vertices of each node of the level below
  for (std::size_t v = 0; v < g.size(); ++v) below_vertices.push_back({v});
  std::size_t subgraphs = 0, largest = 0;
  for (std::size_t k = 0; k < r.levels.size(); ++k) {
    CAPTURE(k);
    // No needless level: each one is built from a level of more than max_top nodes.
    CHECK(static_cast<std::size_t>(std::count(below_scope.begin(), below_scope.end(), 1)) > o.max_top);
    const auto& level = r.levels[k];
    std::vector<int> covered(below, 0);
    std::vector<std::size_t> group_of(g.size(), SIZE_MAX);
    std::vector<std::vector<std::size_t>> now_vertices;
    for (std::size_t i = 0; i < level.groups.size(); ++i) {
      const auto& grp = level.groups[i];
      CAPTURE(i);
      REQUIRE(!grp.members.empty());
      CHECK(grp.members.size() <= o.max_lower);
      CHECK(std::is_sorted(grp.members.begin(), grp.members.end()));
      std::vector<std::size_t> expect;
      for (auto m : grp.members) {
        REQUIRE(m < below);
        ++covered[m];
        expect.insert(expect.end(), below_vertices[m].begin(), below_vertices[m].end());
      }
      auto got = grp.vertices;
      std::sort(expect.begin(), expect.end());
      std::sort(got.begin(), got.end());
      CHECK(got == expect);
      for (auto v : grp.vertices) group_of[v] = i;
      now_vertices.push_back(got);
      if (grp.members.size() >= 2) ++subgraphs, largest = std::max(largest, grp.vertices.size());
    }
    for (std::size_t m = 0; m < below; ++m) CHECK(covered[m] == (below_scope[m] ? 1 : 0));
    edge_set quotient;
    for (std::size_t u = 0; u < g.size(); ++u)
      for (auto v : g.successors(u))
        if (scope[u] && scope[v] && group_of[u] != group_of[v]) quotient.emplace(group_of[u], group_of[v]);
    CHECK(acyclic(level.groups.size(), quotient));
    CHECK(quotient == edge_set(level.edges.begin(), level.edges.end()));
    for (auto [a, b] : level.edges) CHECK(a < b);
    // Boundary values.
    for (std::size_t i = 0; i < level.groups.size(); ++i) {
      const auto& grp = level.groups[i];
      std::set<std::size_t> ins, outs;
      for (auto v : grp.vertices) {
        for (auto p : g.predecessors(v))
          if (scope[p] && group_of[p] != i) ins.insert(p);
        bool out = g.is_output(v);
        for (auto s : g.successors(v)) out = out || g.role(s) == node_role::loss || (scope[s] && group_of[s] != i);
        if (out) outs.insert(v);
      }
      CHECK(std::set<std::size_t>(grp.inputs.begin(), grp.inputs.end()) == ins);
      CHECK(grp.inputs.size() == ins.size());
      CHECK(std::set<std::size_t>(grp.outputs.begin(), grp.outputs.end()) == outs);
    }
    below = level.groups.size();
    below_scope.assign(below, 1);
    below_vertices = std::move(now_vertices);
  }
  if (r.levels.empty()) below = r.stats.vertices;
  CHECK(r.stats.top_nodes == below);
  CHECK((below <= o.max_top || r.stats.vertices <= o.max_top));
  CHECK(r.stats.subgraphs == subgraphs);
  CHECK(r.stats.largest_subgraph == largest);

  // Classes: every member of a class maps onto its representative vertex by vertex.
  std::vector<std::size_t> count(r.classes.size(), 0);
  std::size_t distinct = 0;
  for (const auto& c : r.classes) distinct += c.vertices >= 2;
  CHECK(r.stats.distinct_subgraphs == distinct);
  for (std::size_t k = 0; k < r.levels.size(); ++k)
    for (std::size_t i = 0; i < r.levels[k].groups.size(); ++i) {
      const auto& grp = r.levels[k].groups[i];
      REQUIRE(grp.subgraph_class < r.classes.size());
      const auto& cls = r.classes[grp.subgraph_class];
      if (k == 0 || grp.members.size() >= 2) ++count[grp.subgraph_class];
      const auto& rep = r.levels[cls.level].groups[cls.group];
      REQUIRE(grp.vertices.size() == rep.vertices.size());
      REQUIRE(grp.inputs.size() == rep.inputs.size());
      CHECK(grp.vertices.size() == cls.vertices);
      std::map<std::size_t, std::size_t> to_rep, input_to_rep;
      for (std::size_t j = 0; j < grp.vertices.size(); ++j) to_rep[grp.vertices[j]] = rep.vertices[j];
      for (std::size_t j = 0; j < grp.inputs.size(); ++j) input_to_rep[grp.inputs[j]] = rep.inputs[j];
      for (std::size_t j = 0; j < grp.vertices.size(); ++j) {
        const auto v = grp.vertices[j], w = rep.vertices[j];
        CHECK(g.bytes(v) == g.bytes(w));
        CHECK(g.cost(v) == g.cost(w));
        CHECK(g.workspace(v) == g.workspace(w));
        if (!ops.empty()) CHECK(ops[v] == ops[w]);
        std::set<std::size_t> pv, pw;
        for (auto p : g.predecessors(v))
          if (scope[p]) pv.insert(to_rep.count(p) ? to_rep[p] : input_to_rep.at(p));
        for (auto p : g.predecessors(w))
          if (scope[p]) pw.insert(p);
        CHECK(pv == pw);
      }
      std::set<std::size_t> out_mapped;
      for (auto v : grp.outputs) out_mapped.insert(to_rep.at(v));
      CHECK(out_mapped == std::set<std::size_t>(rep.outputs.begin(), rep.outputs.end()));
      for (std::size_t j = 0; j < grp.inputs.size(); ++j) CHECK(g.bytes(grp.inputs[j]) == g.bytes(rep.inputs[j]));
    }
  for (std::size_t c = 0; c < r.classes.size(); ++c) CHECK(count[c] == r.classes[c].count);
}

std::vector<std::vector<std::size_t>> members_of(const hiremate_level& level) {
  std::vector<std::vector<std::size_t>> m;
  for (const auto& grp : level.groups) m.push_back(grp.members);
  return m;
}

// A random DAG: every vertex reads up to three earlier ones (some far back), a few are sources.
memory_graph random_dag(std::size_t n, std::uint64_t seed) {
  detail::portable_rng rng(seed);
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::vector<std::int64_t> bytes(n);
  for (std::size_t v = 0; v < n; ++v) {
    bytes[v] = rng.between(1, 100);
    if (v == 0 || rng.bernoulli(0.08)) continue;
    const auto k = rng.between(1, 3);
    for (std::int64_t i = 0; i < k; ++i) {
      const std::size_t back = rng.bernoulli(0.2) ? rng.below(v) + 1 : std::min<std::size_t>(v, rng.below(3) + 1);
      edges.emplace_back(v - back, v);
    }
  }
  return make_graph(n, edges, bytes);
}

}  // namespace

TEST_CASE("hiremate_partition: a chain of five, by hand") {
  // Bytes 50 50 1 50 50; candidates are the pairs {i, i+1}. Scores (alpha = 0.5, all weight 2):
  // {0,1}: out 50; {1,2}: in 50 + out 1; {2,3}: 50 + 50; {3,4}: in 1 + out 50 (the output).
  // {0,1} first, which kills {1,2} (3 > max_lower 2); then {3,4}; 3 nodes = max_top: stop.
  const memory_graph g = make_graph(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}}, {50, 50, 1, 50, 50});
  const hiremate_partition_options o{.max_lower = 2, .max_top = 3};
  const auto r = hiremate_partition(g, o);
  check_partition(g, r, o);
  REQUIRE(r.levels.size() == 1);
  CHECK(members_of(r.levels[0]) == std::vector<std::vector<std::size_t>>{{0, 1}, {2}, {3, 4}});
  CHECK(r.levels[0].edges == std::vector<std::pair<std::size_t, std::size_t>>{{0, 1}, {1, 2}});
  CHECK(r.levels[0].groups[2].inputs == std::vector<std::size_t>{2});
  CHECK(r.levels[0].groups[2].outputs == std::vector<std::size_t>{4});
  CHECK(r.levels[0].groups[0].inputs.empty());
  CHECK(r.levels[0].groups[0].outputs == std::vector<std::size_t>{1});
  // {0,1} reads nothing, {3,4} reads vertex 2: different subgraphs.
  CHECK(r.levels[0].groups[0].subgraph_class != r.levels[0].groups[2].subgraph_class);
  CHECK(r.stats.subgraphs == 2);
  CHECK(r.stats.distinct_subgraphs == 2);
}

TEST_CASE("hiremate_partition: a diamond, by hand, two levels") {
  // s -> a, s -> b, a -> t, b -> t; bytes s 1, a 10, b 10, t 1. a(t) = s. With max_lower 3:
  // {a,b,t} scores (1 + 1) * sqrt 3 = 3.5, below {s,a} = (1 + 10) * sqrt 2 and {a,b} = 21 * sqrt 2.
  // It is wrapped; every other candidate then exceeds 3 nodes. Level 1 is s' -> {a,b,t}', one
  // candidate of two nodes: the top is one group.
  const memory_graph g = make_graph(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}, {1, 10, 10, 1});
  const hiremate_partition_options o{.max_lower = 3, .max_top = 1};
  const auto r = hiremate_partition(g, o);
  check_partition(g, r, o);
  REQUIRE(r.levels.size() == 2);
  CHECK(members_of(r.levels[0]) == std::vector<std::vector<std::size_t>>{{0}, {1, 2, 3}});
  CHECK(members_of(r.levels[1]) == std::vector<std::vector<std::size_t>>{{0, 1}});
  CHECK(r.stats.top_nodes == 1);
  CHECK(r.levels[1].groups[0].inputs.empty());
  CHECK(r.levels[1].groups[0].outputs == std::vector<std::size_t>{3});
  // With room for all four, the whole diamond scores 1 * sqrt 4 = 2 and is wrapped at once.
  const auto whole = hiremate_partition(g, {.max_lower = 4, .max_top = 1});
  REQUIRE(whole.levels.size() == 1);
  CHECK(members_of(whole.levels[0]) == std::vector<std::vector<std::size_t>>{{0, 1, 2, 3}});
}

TEST_CASE("hiremate_partition: a residual block, by hand") {
  // in -> stem -> f1 -> f2 -> f3 -> add(stem, f3) -> out; bytes 4 4 16 16 4 4 4.
  // Scores: {in,stem} 4*sqrt2 = 5.7 first; then {f1,f2,f3} (in stem 4 + out f3 4) * sqrt3 = 13.9;
  // then {f1f2f3, add}: (4 + 4) * sqrt4 = 16 beats {add,out} (8 + 4) * sqrt2 = 17.0: the block is
  // one group, and 3 nodes = max_top stops the round.
  const memory_graph g = make_graph(7, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {1, 5}, {4, 5}, {5, 6}}, {4, 4, 16, 16, 4, 4, 4});
  const hiremate_partition_options o{.max_lower = 4, .max_top = 3};
  const auto r = hiremate_partition(g, o);
  check_partition(g, r, o);
  REQUIRE(r.levels.size() == 1);
  CHECK(members_of(r.levels[0]) == std::vector<std::vector<std::size_t>>{{0, 1}, {2, 3, 4, 5}, {6}});
  const auto& block = r.levels[0].groups[1];
  CHECK(block.inputs == std::vector<std::size_t>{1});
  CHECK(block.outputs == std::vector<std::size_t>{5});
  CHECK(block.vertices == std::vector<std::size_t>{2, 3, 4, 5});
}

TEST_CASE("hiremate_partition: small graphs need no level; bad options name the field") {
  const memory_graph g = make_graph(3, {{0, 1}, {1, 2}}, {1, 1, 1});
  const auto r = hiremate_partition(g, {.max_lower = 2, .max_top = 3});
  CHECK(r.levels.empty());
  CHECK(r.stats.top_nodes == 3);
  CHECK(hiremate_partition(memory_graph(memory_graph_data{})).stats.vertices == 0);
  auto throws_naming = [&](const hiremate_partition_options& o, const std::string& field) {
    try {
      (void)hiremate_partition(g, o);
      FAIL("no exception for " << field);
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      CHECK(what.find("hiremate_partition") != std::string::npos);
      CHECK(what.find(field) != std::string::npos);
    }
  };
  throws_naming({.max_lower = 1}, "max_lower");
  throws_naming({.max_top = 0}, "max_top");
  throws_naming({.alpha = -1}, "alpha");
  throws_naming({.alpha = std::nan("")}, "alpha");
  throws_naming({.ops = {"a"}}, "ops");
}

TEST_CASE("hiremate_partition: random DAGs, every level acyclic and every class exact") {
  std::size_t graphs = 0, fallbacks = 0, multi_level = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const std::size_t n = 20 + (seed * 37) % 180;
    const memory_graph g = random_dag(n, seed);
    for (const hiremate_partition_options& o :
         {hiremate_partition_options{.max_lower = 2, .max_top = 1}, hiremate_partition_options{.max_lower = 5, .max_top = 4, .alpha = 0},
          hiremate_partition_options{.max_lower = 12, .max_top = 10, .alpha = 1},
          hiremate_partition_options{.max_lower = 6, .max_top = 3, .stop_at_max_top = false}}) {
      CAPTURE(seed);
      CAPTURE(o.max_lower);
      const auto r = hiremate_partition(g, o);
      check_partition(g, r, o);
      fallbacks += r.stats.fallback_levels;
      multi_level += r.levels.size() >= 2;
      ++graphs;
    }
  }
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const dataflow_graph d = make_random_layered({.nodes = 100 + 20 * seed, .seed = seed});
    const memory_graph g = make_memory_graph(d);
    const hiremate_partition_options o{.max_lower = 8, .max_top = 6};
    check_partition(g, hiremate_partition(d, o), o);
  }
  MESSAGE(graphs << " partitions, " << multi_level << " with 2+ levels, " << fallbacks << " fallback levels");
  CHECK(multi_level > graphs / 2);
}

TEST_CASE("hiremate_partition: a GPT stack of L identical blocks gives about L groups of one class") {
  for (std::size_t layers : {12u, 96u, 384u}) {
    CAPTURE(layers);
    const dataflow_graph f = make_gpt({.layers = layers, .hidden = 512, .heads = 8, .vocab = 32000});
    const hiremate_partition_options o{.max_lower = 20, .max_top = 30};
    const auto r = hiremate_partition(f, o);
    std::vector<std::string> ops;
    for (std::size_t v = 0; v < num_vertices(f); ++v) ops.push_back(f[v].op);
    check_partition(make_memory_graph(f), r, o, ops);
    REQUIRE(!r.levels.empty());
    // The largest class of level 0: whole 15-node blocks, one per layer but the edges of the stack.
    std::size_t best = 0;
    for (const auto& c : r.classes)
      if (c.level == 0 && c.count > r.classes[best].count) best = &c - r.classes.data();
    MESSAGE(layers << " layers: " << r.levels[0].groups.size() << " level-0 groups, largest class " << r.classes[best].count << " x "
                   << r.classes[best].vertices << " vertices, " << r.stats.distinct_subgraphs << " distinct, " << r.stats.levels << " levels");
    // Finishing every round (no early stop at max_top) makes whole blocks of the short stack too.
    const hiremate_partition_options finish{.max_lower = 20, .max_top = 30, .stop_at_max_top = false};
    const auto rf = hiremate_partition(f, finish);
    check_partition(make_memory_graph(f), rf, finish, ops);
    std::size_t blocks = 0;
    for (const auto& c : rf.classes)
      if (c.level == 0 && c.vertices == 15) blocks = std::max(blocks, c.count);
    CHECK(blocks >= layers - 2);
    CHECK(rf.stats.top_nodes <= 30);
    if (layers >= 96) {  // 384 layers: 11,534 training nodes
      CHECK(r.classes[best].vertices == 15);
      CHECK(r.classes[best].count >= layers - 4);
      CHECK(r.levels[0].groups.size() <= layers + 4);
      CHECK(r.stats.distinct_subgraphs <= 10);
    } else {
      CHECK(r.classes[best].count >= layers - 2);
    }
  }
}

TEST_CASE("hiremate_partition: a training graph is partitioned on its forward part, as the forward graph") {
  const dataflow_graph f = make_gpt({.layers = 24, .hidden = 64, .heads = 4, .sequence = 16, .vocab = 100});
  const dataflow_graph t = make_training_graph(f);
  const hiremate_partition_options o{.max_lower = 15, .max_top = 10};
  const auto rf = hiremate_partition(f, o);
  const auto rt = hiremate_partition(t, o);
  check_partition(make_memory_graph(t), rt, o);
  CHECK(rt.stats.vertices == num_vertices(f));
  REQUIRE(rf.levels.size() == rt.levels.size());
  for (std::size_t k = 0; k < rf.levels.size(); ++k) {
    CHECK(members_of(rf.levels[k]) == members_of(rt.levels[k]));
    CHECK(rf.levels[k].edges == rt.levels[k].edges);
  }
  CHECK(rf.stats.distinct_subgraphs == rt.stats.distinct_subgraphs);
}

TEST_CASE("hiremate_partition: ops and costs separate classes; the partition is deterministic") {
  const dataflow_graph f = make_gpt({.layers = 12, .hidden = 64, .heads = 4, .sequence = 16, .vocab = 100});
  const hiremate_partition_options o{.max_lower = 20, .max_top = 8};
  const auto r = hiremate_partition(f, o);
  const auto again = hiremate_partition(f, o);
  REQUIRE(r.levels.size() == again.levels.size());
  for (std::size_t k = 0; k < r.levels.size(); ++k) {
    CHECK(members_of(r.levels[k]) == members_of(again.levels[k]));
    for (std::size_t i = 0; i < r.levels[k].groups.size(); ++i) {
      CHECK(r.levels[k].groups[i].vertices == again.levels[k].groups[i].vertices);
      CHECK(r.levels[k].groups[i].subgraph_class == again.levels[k].groups[i].subgraph_class);
    }
  }
  // Find a level-0 class with several groups, change the op of one vertex of one of its groups.
  const auto& level = r.levels[0];
  std::size_t pick = SIZE_MAX;
  for (std::size_t i = 0; i < level.groups.size() && pick == SIZE_MAX; ++i)
    if (level.groups[i].members.size() >= 2 && r.classes[level.groups[i].subgraph_class].count >= 3) pick = i;
  REQUIRE(pick != SIZE_MAX);
  const std::size_t cls = level.groups[pick].subgraph_class, before = r.classes[cls].count;
  const std::size_t v = level.groups[pick].vertices[1];
  std::vector<std::string> ops;
  for (std::size_t u = 0; u < num_vertices(f); ++u) ops.push_back(f[u].op);
  ops[v] = "something_else";
  hiremate_partition_options with_ops = o;
  with_ops.ops = ops;
  const auto r2 = hiremate_partition(make_memory_graph(f), with_ops);
  check_partition(make_memory_graph(f), r2, with_ops, ops);
  CHECK(members_of(r2.levels[0]) == members_of(level));  // ops do not steer the grouping
  std::size_t same = 0;
  for (const auto& grp : r2.levels[0].groups) same += grp.subgraph_class == r2.levels[0].groups[pick].subgraph_class;
  CHECK(same == 1);
  // Costs: the same change through the graph data.
  auto data = make_memory_graph(f).data();
  data.cost[v] += 1;
  const memory_graph g3(data);
  const auto r3 = hiremate_partition(g3, o);
  check_partition(g3, r3, o);
  CHECK(members_of(r3.levels[0]) == members_of(level));  // nor do costs
  std::size_t same3 = 0, still = 0;
  for (const auto& grp : r3.levels[0].groups) {
    same3 += grp.subgraph_class == r3.levels[0].groups[pick].subgraph_class;
    still += r3.classes[grp.subgraph_class].count == before - 1 && grp.vertices.size() == level.groups[pick].vertices.size();
  }
  CHECK(same3 == 1);
  CHECK(still >= 1);
}

TEST_CASE("hiremate_partition: renumbering a GPT stack changes no group and no class") {
  const dataflow_graph f = make_gpt({.layers = 24, .hidden = 64, .heads = 4, .sequence = 16, .vocab = 100});
  const memory_graph g = make_memory_graph(f);
  std::vector<std::string> ops;
  for (std::size_t v = 0; v < num_vertices(f); ++v) ops.push_back(f[v].op);
  // Groups of a level as sets of vertices, and classes as (vertices, count) pairs.
  auto groups_of = [](const hiremate_partition_result& r, const std::vector<std::size_t>& map) {
    std::vector<std::set<std::set<std::size_t>>> levels;
    for (const auto& level : r.levels) {
      levels.emplace_back();
      for (const auto& grp : level.groups) {
        std::set<std::size_t> s;
        for (auto v : grp.vertices) s.insert(map[v]);
        levels.back().insert(s);
      }
    }
    return levels;
  };
  auto classes_of = [](const hiremate_partition_result& r) {
    std::multiset<std::pair<std::size_t, std::size_t>> m;
    for (const auto& c : r.classes) m.emplace(c.vertices, c.count);
    return m;
  };
  for (bool finish : {false, true}) {
    hiremate_partition_options o{.max_lower = 20, .max_top = 10, .stop_at_max_top = !finish};
    o.ops = ops;
    const auto base = hiremate_partition(g, o);
    std::vector<std::size_t> identity(g.size());
    for (std::size_t v = 0; v < g.size(); ++v) identity[v] = v;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      CAPTURE(finish);
      CAPTURE(seed);
      detail::portable_rng rng(seed);
      std::vector<std::size_t> perm = identity;  // old index -> new index
      for (std::size_t i = perm.size(); i-- > 1;) std::swap(perm[i], perm[rng.below(i + 1)]);
      const memory_graph_data d = g.data();
      memory_graph_data p{.num_nodes = d.num_nodes};
      p.bytes.resize(d.num_nodes);
      p.cost.resize(d.num_nodes);
      std::vector<std::string> permuted_ops(d.num_nodes);
      for (std::size_t v = 0; v < d.num_nodes; ++v) p.bytes[perm[v]] = d.bytes[v], p.cost[perm[v]] = d.cost[v], permuted_ops[perm[v]] = ops[v];
      for (auto [a, b] : d.edges) p.edges.emplace_back(perm[a], perm[b]);
      p.outputs = std::vector<std::size_t>{};
      for (auto out : *d.outputs) p.outputs->push_back(perm[out]);
      const memory_graph pg(p);
      auto po = o;
      po.ops = permuted_ops;
      const auto r = hiremate_partition(pg, po);
      check_partition(pg, r, po, permuted_ops);
      CHECK(groups_of(r, identity) == groups_of(base, perm));
      CHECK(classes_of(r) == classes_of(base));
    }
  }
}

TEST_CASE("hiremate_partition: a level that cannot shrink is cut along a topological order") {
  // 50 unrelated vertices: no candidate at all. Runs of 4 give 13 groups, then 4, then 1.
  const memory_graph isolated = make_graph(50, {}, std::vector<std::int64_t>(50, 8));
  const hiremate_partition_options o{.max_lower = 4, .max_top = 1};
  const auto r = hiremate_partition(isolated, o);
  check_partition(isolated, r, o);
  REQUIRE(r.levels.size() == 3);
  CHECK(r.levels[0].fallback);
  CHECK(r.levels[0].groups.size() == 13);
  CHECK(r.levels[0].groups[0].members == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(r.levels[1].groups.size() == 4);
  CHECK(r.stats.fallback_levels == 3);
  // Identical runs of identical vertices share a class: 12 runs of 4 and one of 2 at level 0.
  CHECK(r.classes[r.levels[0].groups[0].subgraph_class].count == 12);

  // A star: one value read by 3,000 others. Every candidate holds the centre, so a round wraps
  // one group of 20 per round and leaves most nodes: cut instead, and the hierarchy stays shallow.
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  for (std::size_t v = 1; v <= 3000; ++v) edges.emplace_back(0, v);
  const memory_graph star = make_graph(3001, edges, std::vector<std::int64_t>(3001, 8));
  const hiremate_partition_options so{.max_lower = 20, .max_top = 30};
  const auto rs = hiremate_partition(star, so);
  check_partition(star, rs, so);
  CHECK(rs.stats.fallback_levels >= 1);
  CHECK(rs.levels.size() <= 4);
}
