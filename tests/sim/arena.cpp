#include <memsched/graph/read_graph.hpp>
#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>
#include <memsched/order/kahn.hpp>
#include <memsched/sim/arena.hpp>
#include <memsched/sim/plan_from_computes.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/random_cases.hpp"
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

constexpr arena_strategy both[] = {arena_strategy::greedy_by_size, arena_strategy::first_fit};

// Independent overlap check: every pair of non-empty buffers whose step ranges intersect must be
// disjoint in memory. Lifetimes recomputed here from the order the obvious way.
bool naive_disjoint(const memory_graph& g, const std::vector<std::size_t>& order, const arena_plan& p) {
  const std::size_t n = g.size();
  std::vector<std::size_t> pos(n);
  for (std::size_t k = 0; k < n; ++k) pos[order[k]] = k;
  struct buf {
    std::int64_t lo, hi;
    std::size_t from, to;
  };
  std::vector<buf> bufs;
  for (std::size_t v = 0; v < n; ++v) {
    std::size_t to = g.is_output(v) ? n - 1 : pos[v];
    for (auto s : g.successors(v)) to = std::max(to, pos[s]);
    if (g.bytes(v) > 0) bufs.push_back({p.offset[v], p.offset[v] + g.bytes(v), pos[v], to});
    if (g.workspace(v) > 0) bufs.push_back({p.workspace_offset[v], p.workspace_offset[v] + g.workspace(v), pos[v], pos[v]});
  }
  for (const auto& a : bufs) {
    if (a.lo < 0 || a.hi > p.arena_bytes) return false;
    for (const auto& b : bufs)
      if (&a != &b && a.from <= b.to && b.from <= a.to && a.lo < b.hi && b.lo < a.hi) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("plan_arena by hand: first fit fragments where greedy by size does not") {
  // Chain 0 (10) -> 1 (10) -> 2 (20). Lifetimes [0, 1], [1, 2], [2, 2]; peak 30 at step 2.
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}}, .bytes = {10, 10, 20}});
  const std::vector<std::size_t> order{0, 1, 2};
  const arena_plan ff = plan_arena(g, order, arena_strategy::first_fit);
  // First fit: 0 at 0, 1 at 10; at step 2, 0 is released but its 10-byte hole cannot take 2: 2 at 20.
  CHECK(ff.offset == std::vector<std::int64_t>{0, 10, 20});
  CHECK(ff.arena_bytes == 40);
  CHECK(ff.peak_bytes == 30);
  CHECK(ff.fragmentation == doctest::Approx(1.0 / 3.0));
  CHECK(ff.status == solve_status::feasible);
  CHECK(ff.first_step == std::vector<std::size_t>{0, 1, 2});
  CHECK(ff.last_step == std::vector<std::size_t>{1, 2, 2});
  // Greedy by size: 2 (20) at 0; 0 does not meet 2 in time: at 0; 1 meets both: above them, at 20.
  const arena_plan gs = plan_arena(g, order, arena_strategy::greedy_by_size);
  CHECK(gs.offset == std::vector<std::int64_t>{0, 20, 0});
  CHECK(gs.arena_bytes == 30);
  CHECK(gs.fragmentation == 0);
  CHECK(gs.status == solve_status::optimal);
  CHECK(check_arena(g, order, ff).valid);
  CHECK(check_arena(g, order, gs).valid);
}

TEST_CASE("plan_arena: workspaces are buffers of one step; greedy by size takes the smallest gap") {
  // 0 (8, output) and 1 (30) are sources; 2 (4, workspace 6) reads 1; 3 (2) reads 2 and is an output.
  const memory_graph g(memory_graph_data{.num_nodes = 4,
                                         .edges = {{1, 2}, {2, 3}},
                                         .bytes = {8, 30, 4, 2},
                                         .workspace = {0, 0, 6, 0},
                                         .outputs = std::vector<std::size_t>{0, 3}});
  const std::vector<std::size_t> order{0, 1, 2, 3};
  // Steps: 0 [0, 3]; 1 [1, 2]; 2 [2, 3]; ws(2) [2, 2]; 3 [3, 3]. Peak at step 2: 8 + 30 + 4 + 6 = 48.
  const arena_plan gs = plan_arena(g, order, arena_strategy::greedy_by_size);
  // Sizes: 1 (30) at 0; 0 (8) above it at 30; ws(2) (6) above both at 38; 2 (4) at 44; 3 (2) meets 0
  // and 2 only, which leave the gaps [0, 30) and [38, 44): the smaller one wins.
  CHECK(gs.offset == std::vector<std::int64_t>{30, 0, 44, 38});
  CHECK(gs.workspace_offset == std::vector<std::int64_t>{0, 0, 38, 0});
  CHECK(gs.arena_bytes == 48);
  CHECK(gs.peak_bytes == 48);
  const arena_plan ff = plan_arena(g, order, arena_strategy::first_fit);
  // First fit: 0 at 0, 1 at 8, 2 at 38, its workspace at 42; step 3: 1 and ws released, 3 at 8.
  CHECK(ff.offset == std::vector<std::int64_t>{0, 8, 38, 8});
  CHECK(ff.workspace_offset == std::vector<std::int64_t>{0, 0, 42, 0});
  CHECK(ff.arena_bytes == 48);
  for (auto s : both) CHECK(check_arena(g, order, plan_arena(g, order, s)).valid);
}

TEST_CASE("check_arena finds overlaps and buffers outside the arena") {
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 1}, {1, 2}}, .bytes = {10, 10, 20}, .workspace = {0, 5, 0}});
  const std::vector<std::size_t> order{0, 1, 2};
  arena_plan p = plan_arena(g, order, arena_strategy::first_fit);
  REQUIRE(check_arena(g, order, p).valid);
  arena_plan bad = p;
  bad.offset[1] = 5;  // overlaps 0, live at step 1
  arena_check c = check_arena(g, order, bad);
  CHECK_FALSE(c.valid);
  CHECK(c.error.find("the output of node 1") != std::string::npos);
  CHECK(c.error.find("the output of node 0") != std::string::npos);
  bad = p;
  bad.workspace_offset[1] = p.offset[0] + 3;
  c = check_arena(g, order, bad);
  CHECK_FALSE(c.valid);
  CHECK(c.error.find("the workspace of node 1") != std::string::npos);
  bad = p;
  bad.arena_bytes -= 1;
  c = check_arena(g, order, bad);
  CHECK_FALSE(c.valid);
  CHECK(c.error.find("outside the arena") != std::string::npos);
  bad = p;
  bad.offset.pop_back();
  CHECK_FALSE(check_arena(g, order, bad).valid);
  // 0 and 2 never live at the same time: sharing an offset is fine.
  bad = p;
  bad.offset[2] = bad.offset[0];
  bad.arena_bytes = std::max(bad.arena_bytes, bad.offset[2] + 20);
  CHECK(check_arena(g, order, bad).valid == (bad.offset[2] + 20 <= bad.offset[1] || bad.offset[2] >= bad.offset[1] + 10));
  CHECK_THROWS_AS((void)plan_arena(g, std::vector<std::size_t>{1, 0, 2}, arena_strategy::first_fit), invalid_order);
  CHECK_THROWS_AS((void)check_arena(g, std::vector<std::size_t>{0, 1}, p), invalid_order);
}

TEST_CASE_TEMPLATE("plan_arena on every order of random DAGs: valid, arena >= peak, on every graph type", G, vecs_graph,
                   lists_graph, csr_graph) {
  int plans = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const std::size_t n = 1 + seed % 7;
    auto d = random_dag(n, 0.3, seed, seed % 3 == 0 ? 4 : 100, seed % 2 == 0);
    if (seed % 5 == 0) d.bytes[0] = 0;  // an empty tensor
    const memory_graph g(d);
    const typed_graph<G> tg(d);
    CAPTURE(seed);
    for_each_topological_order(g, [&](const std::vector<std::size_t>& order) {
      for (auto s : both) {
        ++plans;
        const arena_plan p = plan_arena(tg.graph, order, s, tg.maps());
        REQUIRE(p.peak_bytes == order_peak(g, order));
        REQUIRE(p.arena_bytes >= p.peak_bytes);
        REQUIRE(check_arena(g, order, p).valid);
        REQUIRE(naive_disjoint(g, order, p));
        REQUIRE(p.fragmentation >= 0);
      }
    });
  }
  CHECK(plans > 500);
}

TEST_CASE("check_arena agrees with a naive pairwise check on randomly shifted plans") {
  std::mt19937_64 rng(3);
  int bad = 0;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const auto d = random_dag(2 + seed % 10, 0.3, seed, 20, seed % 2 == 0);
    const memory_graph g(d);
    const auto order = kahn_order(g).order;
    arena_plan p = plan_arena(g, order, both[seed % 2]);
    const std::size_t v = rng() % g.size();
    (rng() % 2 ? p.offset[v] : p.workspace_offset[v]) += static_cast<std::int64_t>(rng() % 30) - 15;
    if (rng() % 4 == 0) p.arena_bytes += 10;
    CAPTURE(seed);
    const bool valid = check_arena(g, order, p).valid;
    CHECK(valid == naive_disjoint(g, order, p));
    bad += !valid;
  }
  CHECK(bad > 50);
}

TEST_CASE("plan_arena on the bundled real graphs, for the three baseline orders") {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(MEMSCHED_TEST_DATA_DIR)) {
    if (entry.path().extension() != ".json") continue;
    // tests/data/fuzz holds the fuzzers' regression inputs: bad graphs on purpose.
    if (*std::filesystem::relative(entry.path(), MEMSCHED_TEST_DATA_DIR).begin() == "fuzz") continue;
    CAPTURE(entry.path().string());
    const memory_graph g = make_memory_graph(read_graph(entry.path()));
    for (const auto& order : {kahn_order(g).order, dfs_order(g).order, greedy_order(g).order})
      for (auto s : both) {
        const arena_plan p = plan_arena(g, order, s);
        CHECK(p.arena_bytes >= p.peak_bytes);
        CHECK(check_arena(g, order, p).valid);
      }
  }
}

namespace {

// Pairwise check of a plan layout: copies live over [compute step, step before their free].
bool naive_plan_disjoint(const memory_graph& g, const execution_plan& plan, const plan_arena_layout& l) {
  struct buf {
    std::int64_t lo, hi;
    std::size_t from, to;
  };
  std::vector<buf> bufs;
  const std::size_t steps = plan.steps.size();
  for (std::size_t k = 0; k < steps; ++k) {
    if (plan.steps[k].op != plan_op::compute) continue;
    const std::size_t v = plan.steps[k].node;
    std::size_t to = steps - 1;
    for (std::size_t j = k + 1; j < steps; ++j)
      if (plan.steps[j].node == v && plan.steps[j].op == plan_op::free) {
        to = j - 1;
        break;
      }
    if (g.bytes(v) > 0) bufs.push_back({l.offset[k], l.offset[k] + g.bytes(v), k, to});
    if (g.workspace(v) > 0) bufs.push_back({l.workspace_offset[k], l.workspace_offset[k] + g.workspace(v), k, k});
  }
  for (const auto& a : bufs) {
    if (a.lo < 0 || a.hi > l.arena_bytes) return false;
    for (const auto& b : bufs)
      if (&a != &b && a.from <= b.to && b.from <= a.to && a.lo < b.hi && b.lo < a.hi) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("plan_arena of an execution plan, by hand: a recomputed tensor is a new copy") {
  using P = plan_op;
  // 0 (10) -> 1 (20) -> 2 (30) -> 3 (5) and 0 -> 3. Recompute 0 for 3.
  const memory_graph g(memory_graph_data{.num_nodes = 4, .edges = {{0, 1}, {1, 2}, {2, 3}, {0, 3}}, .bytes = {10, 20, 30, 5}});
  const execution_plan plan{{{P::compute, 0}, {P::compute, 1}, {P::free, 0}, {P::compute, 2}, {P::free, 1},
                             {P::compute, 0}, {P::compute, 3}, {P::free, 0}, {P::free, 2}}};
  // Copies: 0 [0, 1], 1 [1, 3], 2 [3, 7], 0' [5, 6], 3 [6, 8]. Peak 50 (steps 3 and 5).
  const plan_arena_layout ff = plan_arena(g, plan, arena_strategy::first_fit);
  // First fit: 0 at 0, 1 at 10; step 3: 0 released, 2 (30) does not fit in [0, 10): at 30;
  // step 5: 1 released: 0' at 0; step 6: 3 at 10.
  CHECK(ff.offset == std::vector<std::int64_t>{0, 10, 0, 30, 0, 0, 10, 0, 0});
  CHECK(ff.arena_bytes == 60);
  CHECK(ff.peak_bytes == 50);
  CHECK(ff.fragmentation == doctest::Approx(0.2));
  // Greedy by size: 2 at 0; 1 meets 2: at 30; 0 meets 1 only: at 0; 0' meets 2: at 30; 3 meets 2 and 0':
  // at 40.
  const plan_arena_layout gs = plan_arena(g, plan, arena_strategy::greedy_by_size);
  CHECK(gs.offset == std::vector<std::int64_t>{0, 30, 0, 0, 0, 30, 40, 0, 0});
  CHECK(gs.arena_bytes == 50);
  CHECK(gs.status == solve_status::optimal);
  CHECK(check_arena(g, plan, ff).valid);
  CHECK(check_arena(g, plan, gs).valid);
  plan_arena_layout bad = gs;
  bad.offset[5] = 5;  // 0' onto 2
  const arena_check c = check_arena(g, plan, bad);
  CHECK_FALSE(c.valid);
  CHECK(c.error.find("overlaps") != std::string::npos);
  CHECK_THROWS_AS((void)plan_arena(g, execution_plan{{{P::compute, 1}}}, arena_strategy::first_fit), invalid_plan);
}

TEST_CASE_TEMPLATE("plan_arena on plans: valid, >= the plan's peak, and equal to the order's arena for plain orders", G,
                   vecs_graph, lists_graph, csr_graph) {
  std::mt19937_64 rng(9);
  for (std::uint64_t seed = 0; seed < 80; ++seed) {
    const std::size_t n = 2 + seed % 10;
    const auto d = random_dag(n, 0.3, seed, seed % 3 == 0 ? 4 : 100, seed % 2 == 0);
    const memory_graph g(d);
    const typed_graph<G> tg(d);
    CAPTURE(seed);
    const auto order = greedy_order(g).order;
    // Recompute sources (always possible) at random points.
    std::vector<std::size_t> computes;
    for (auto v : order) {
      for (auto p : g.predecessors(v))
        if (g.in_degree(p) == 0 && rng() % 3 == 0) computes.push_back(p);
      computes.push_back(v);
    }
    const execution_plan plan = plan_from_computes(g, computes);
    REQUIRE(check_plan(g, plan).valid);
    const execution_plan plain = plan_from_computes(g, order);
    for (auto s : both) {
      const plan_arena_layout l = plan_arena(tg.graph, plan, s, tg.maps());
      CHECK(l.peak_bytes == simulate_plan(g, plan).peak_bytes);
      CHECK(l.arena_bytes >= l.peak_bytes);
      CHECK(check_arena(g, plan, l).valid);
      CHECK(naive_plan_disjoint(g, plan, l));
      // The plan of a plain order has the same copies, lifetimes and so the same arena.
      const plan_arena_layout p = plan_arena(g, plain, s);
      const arena_plan o = plan_arena(g, order, s);
      CHECK(p.arena_bytes == o.arena_bytes);
      CHECK(p.peak_bytes == o.peak_bytes);
    }
  }
}

namespace {

// The greedy-by-size placement as it was before the lifetime index (O(B^2 log B): every placed
// buffer is scanned for each new one), kept as the reference the fast version must equal.
std::vector<std::int64_t> reference_greedy_by_size(const std::vector<detail::arena_buffer>& buffers) {
  std::vector<std::size_t> by_size(buffers.size());
  for (std::size_t i = 0; i < by_size.size(); ++i) by_size[i] = i;
  std::sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = buffers[a];
    const auto& y = buffers[b];
    if (x.size != y.size) return x.size > y.size;
    if (x.first != y.first) return x.first < y.first;
    if (x.workspace != y.workspace) return !x.workspace;
    return x.node < y.node;
  });
  std::vector<std::int64_t> offsets(buffers.size(), 0);
  std::vector<std::size_t> placed, overlapping;
  for (std::size_t i : by_size) {
    const auto& b = buffers[i];
    overlapping.clear();
    for (std::size_t j : placed)
      if (buffers[j].first <= b.last && b.first <= buffers[j].last) overlapping.push_back(j);
    std::sort(overlapping.begin(), overlapping.end(), [&](std::size_t x, std::size_t y) { return offsets[x] < offsets[y]; });
    std::int64_t current = 0, best = -1, best_gap = std::numeric_limits<std::int64_t>::max();
    for (std::size_t j : overlapping) {
      if (offsets[j] >= current) {
        const std::int64_t gap = offsets[j] - current;
        if (gap >= b.size && gap < best_gap) {
          best = current;
          best_gap = gap;
        }
      }
      current = std::max(current, offsets[j] + buffers[j].size);
    }
    offsets[i] = best >= 0 ? best : current;
    placed.push_back(i);
  }
  return offsets;
}

}  // namespace

TEST_CASE("greedy by size with the lifetime index equals the old quadratic scan on random buffer lists") {
  std::mt19937_64 rng(11);
  std::size_t compared = 0, nontrivial = 0;
  for (int round = 0; round < 400; ++round) {
    CAPTURE(round);
    // Buffers listed by first step, 1-3 per step, some steps without any; lifetimes short or to
    // the end; few distinct sizes so that ties in size (and in offset) are common.
    const std::size_t steps = 1 + rng() % 60;
    const std::int64_t max_size = round % 3 == 0 ? 4 : 1000;
    std::vector<detail::arena_buffer> buffers;
    for (std::size_t k = 0; k < steps; ++k) {
      const std::size_t here = rng() % 4;
      for (std::size_t c = 0; c < here; ++c) {
        const std::size_t span = rng() % 5 == 0 ? steps - 1 - k : std::min<std::size_t>(steps - 1 - k, rng() % 6);
        buffers.push_back({buffers.size(), c == 2, 1 + static_cast<std::int64_t>(rng() % max_size), k, k + span});
      }
    }
    std::vector<std::int64_t> fast;
    detail::place_greedy_by_size(buffers, fast);
    const auto ref = reference_greedy_by_size(buffers);
    REQUIRE(fast == ref);
    compared += buffers.size();
    nontrivial += std::count_if(ref.begin(), ref.end(), [](std::int64_t o) { return o > 0; });
  }
  CHECK(compared > 10000);
  CHECK(nontrivial > 1000);  // the offsets are not all 0: the placement has work to do
}

TEST_CASE("greedy by size with the lifetime index equals the old scan on random graphs, orders and plans") {
  std::size_t compared = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    CAPTURE(seed);
    const std::size_t n = 20 + seed * 5;
    auto d = random_dag(n, seed % 2 ? 0.05 : 0.2, seed, seed % 3 == 0 ? 8 : 1000, seed % 2 == 0);
    const memory_graph g(d);
    for (const auto& order : {kahn_order(g).order, dfs_order(g).order}) {
      std::vector<std::size_t> first, last, buffer_of;
      auto buffers = detail::arena_buffers(g, order, first, last, buffer_of);
      std::vector<std::int64_t> fast;
      detail::place_greedy_by_size(buffers, fast);
      REQUIRE(fast == reference_greedy_by_size(buffers));
      compared += buffers.size();
      // A plan with recomputation: every vertex computed, then the order again for the first half.
      std::vector<std::size_t> computes(order.begin(), order.end());
      computes.insert(computes.end(), order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n / 2));
      const execution_plan plan = plan_from_computes(g, std::span<const std::size_t>(computes));
      std::vector<std::size_t> buffer_of_step;
      auto plan_buffers = detail::plan_arena_buffers(g, plan, simulate_plan(g, plan).reused, buffer_of_step);
      detail::place_greedy_by_size(plan_buffers, fast);
      REQUIRE(fast == reference_greedy_by_size(plan_buffers));
      compared += plan_buffers.size();
    }
  }
  CHECK(compared > 5000);
}

TEST_CASE("plan_arena exact: optimal on every order of small random DAGs, never above the greedy strategies") {
  int above_peak = 0, below_greedy = 0;
  for (std::uint64_t seed = 0; seed < memsched::testing::random_cases(60); ++seed) {
    const std::size_t n = 2 + seed % 7;
    auto d = random_dag(n, 0.3, seed, seed % 3 == 0 ? 4 : 100, seed % 2 == 0);
    const memory_graph g(d);
    CAPTURE(seed);
    int orders = 0;
    for_each_topological_order(g, [&](const std::vector<std::size_t>& order) {
      if (++orders > 20) return;
      const arena_plan e = plan_arena(g, order, arena_strategy::exact);
      REQUIRE(check_arena(g, order, e).valid);
      REQUIRE(naive_disjoint(g, order, e));
      CHECK(e.strategy == arena_strategy::exact);
      CHECK(e.status == solve_status::optimal);  // no limit: proven
      CHECK(e.lower_bound == e.arena_bytes);
      CHECK(e.arena_bytes >= e.peak_bytes);
      std::int64_t greedy = std::numeric_limits<std::int64_t>::max();
      for (auto s : both) {
        const arena_plan p = plan_arena(g, order, s);
        greedy = std::min(greedy, p.arena_bytes);
        CHECK(p.lower_bound == p.peak_bytes);  // the greedy strategies prove only the peak
      }
      CHECK(e.arena_bytes <= greedy);
      above_peak += e.arena_bytes > e.peak_bytes;
      below_greedy += e.arena_bytes < greedy;
    });
  }
  CHECK(below_greedy > 0);  // the search improves on the greedy layouts somewhere
  (void)above_peak;
}

TEST_CASE("plan_arena exact on plans with recomputation: valid and within a node limit") {
  std::mt19937_64 rng(5);
  for (std::uint64_t seed = 0; seed < memsched::testing::random_cases(40); ++seed) {
    const auto d = random_dag(3 + seed % 10, 0.3, seed, 100, seed % 2 == 0);
    const memory_graph g(d);
    CAPTURE(seed);
    std::vector<std::size_t> computes;
    for (auto v : greedy_order(g).order) {
      for (auto p : g.predecessors(v))
        if (g.in_degree(p) == 0 && rng() % 3 == 0) computes.push_back(p);
      computes.push_back(v);
    }
    const execution_plan plan = plan_from_computes(g, computes);
    const plan_arena_layout l = plan_arena_with(g, plan, arena_strategy::exact, {.node_limit = 2000});
    CHECK(check_arena(g, plan, l).valid);
    CHECK(l.arena_bytes >= l.lower_bound);
    CHECK(l.lower_bound >= l.peak_bytes);
    CHECK(l.arena_bytes <= plan_arena(g, plan, arena_strategy::greedy_by_size).arena_bytes);
    CHECK((l.status == solve_status::optimal) == (l.arena_bytes == l.lower_bound));
  }
}

TEST_CASE("plan_arena exact: Checkmate's MobileNet inference graph (a chain) reaches its peak") {
  const auto g = make_memory_graph(read_graph(std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "checkmate" / "mobilenet_inference.json"));
  const auto order = kahn_order(g).order;  // a chain has one order
  const arena_plan greedy = plan_arena(g, order, arena_strategy::greedy_by_size);
  const arena_plan e = plan_arena_with(g, order, arena_strategy::exact, {.node_limit = 100000});
  CHECK(check_arena(g, order, e).valid);
  CHECK(e.arena_bytes == e.peak_bytes);
  CHECK(e.status == solve_status::optimal);
  CHECK(greedy.arena_bytes > greedy.peak_bytes);  // what the exact strategy is for
}

// First fit by its definition, with a scan over every live buffer from offset 0: at each step the
// buffers ended at the previous step leave, then each new one goes to the lowest offset where it
// fits among those live. Against the library's indexed version, on random lifetimes and sizes
// (many small buffers and a few large ones, so that gaps open and close at every height).
TEST_CASE("first fit: the indexed placement equals the scan over the live buffers") {
  std::size_t placed_in_gap = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    const std::size_t steps = 20 + seed * 10;
    std::vector<detail::arena_buffer> buffers;
    for (std::size_t k = 0; k < steps; ++k)
      for (std::size_t c = std::uniform_int_distribution<std::size_t>(0, 3)(rng); c > 0; --c) {
        const std::size_t life = std::uniform_int_distribution<std::size_t>(0, rng() % 4 == 0 ? steps : 8)(rng);
        const std::int64_t size = rng() % 5 == 0 ? std::uniform_int_distribution<std::int64_t>(50, 400)(rng)
                                                 : std::uniform_int_distribution<std::int64_t>(1, 40)(rng);
        buffers.push_back({.node = buffers.size(), .size = size, .first = k, .last = std::min(steps - 1, k + life)});
      }
    std::vector<std::int64_t> fast;
    detail::place_first_fit(buffers, steps, fast);
    std::vector<std::int64_t> scan(buffers.size(), 0);
    std::map<std::int64_t, std::int64_t> live;  // offset -> end
    std::size_t next = 0;
    for (std::size_t k = 0; k < steps; ++k) {
      for (std::size_t j = 0; j < next; ++j)
        if (k > 0 && buffers[j].last == k - 1) live.erase(scan[j]);
      for (; next < buffers.size() && buffers[next].first == k; ++next) {
        std::int64_t at = 0;
        for (auto [start, end] : live) {
          if (start - at >= buffers[next].size) break;
          at = end;
        }
        if (!live.empty() && at < std::prev(live.end())->second) ++placed_in_gap;
        scan[next] = at;
        live.emplace(at, at + buffers[next].size);
      }
    }
    INFO("seed " << seed);
    CHECK(fast == scan);
  }
  MESSAGE(placed_in_gap << " buffers placed in a gap below the top");
  CHECK(placed_in_gap > 100);
}

TEST_CASE("overlapping_pairs counts the pairs of buffers live at the same step (brute force)") {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    std::mt19937_64 rng(seed);
    const std::size_t steps = 5 + seed * 3;
    std::vector<detail::arena_buffer> buffers;
    for (std::size_t k = 0; k < steps; ++k)
      for (std::size_t c = rng() % 3; c > 0; --c)
        buffers.push_back({.size = 1, .first = k, .last = std::min(steps - 1, k + rng() % (seed % 5 == 0 ? steps : 4))});
    std::uint64_t pairs = 0;
    for (std::size_t i = 0; i < buffers.size(); ++i)
      for (std::size_t j = i + 1; j < buffers.size(); ++j)
        pairs += buffers[i].first <= buffers[j].last && buffers[j].first <= buffers[i].last;
    INFO("seed " << seed);
    CHECK(detail::overlapping_pairs(buffers) == pairs);
  }
}

TEST_CASE("arena_strategy::automatic: greedy by size while affordable, first fit on a wide star") {
  // Below the threshold: the same layout as greedy by size, and the result names it.
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const memory_graph g(random_dag(30, 0.2, seed));
    const std::vector<std::size_t> order = kahn_order(g).order;
    const arena_plan a = plan_arena(g, order, arena_strategy::automatic);
    const arena_plan gs = plan_arena(g, order, arena_strategy::greedy_by_size);
    CHECK(a.strategy == arena_strategy::greedy_by_size);
    CHECK(a.offset == gs.offset);
    CHECK(a.arena_bytes == gs.arena_bytes);
  }
  // A star of 6,000 branches, every branch an output: 18 million pairs live at once at the end.
  memory_graph_data d{.num_nodes = 6001};
  for (std::size_t i = 1; i < d.num_nodes; ++i) d.edges.emplace_back(0, i);
  d.bytes.resize(d.num_nodes);
  for (std::size_t i = 0; i < d.num_nodes; ++i) d.bytes[i] = 16 + static_cast<std::int64_t>(i % 13);
  const memory_graph star(d);
  const std::vector<std::size_t> order = kahn_order(star).order;
  const arena_plan a = plan_arena(star, order, arena_strategy::automatic);
  CHECK(a.strategy == arena_strategy::first_fit);
  CHECK(a.offset == plan_arena(star, order, arena_strategy::first_fit).offset);
  CHECK(check_arena(star, order, a).valid);
  CHECK(a.arena_bytes >= a.peak_bytes);
  // Plans resolve the same way.
  const execution_plan plan = plan_from_computes(star, order);
  const plan_arena_layout p = plan_arena(star, plan, arena_strategy::automatic);
  CHECK(p.strategy == arena_strategy::first_fit);
  CHECK(check_arena(star, plan, p).valid);
}
