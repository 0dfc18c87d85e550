// The resident values of the eviction heuristics (remat/detail/resident_set.hpp): the set against
// std::set under random operations, and the heuristics' tie rule (the smaller vertex), which must
// not depend on the order in which the set lists its members.

#include <memsched/remat/detail/checkmate_greedy.hpp>
#include <memsched/remat/detail/resident_set.hpp>
#include <memsched/remat/dtr.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <set>
#include <vector>

using namespace memsched;

TEST_CASE("resident_set: random inserts and erases against std::set") {
  std::mt19937 rng(7);
  for (const std::size_t n : {1u, 2u, 5u, 64u}) {
    detail::resident_set s(n);
    std::set<std::size_t> ref;
    std::size_t operations = 0;
    for (int i = 0; i < 2000; ++i) {
      const std::size_t v = rng() % n;
      if (rng() % 3 == 0) {
        s.erase(v);
        ref.erase(v);
      } else {
        s.insert(v);
        ref.insert(v);
      }
      ++operations;
      std::vector<std::size_t> members(s.members().begin(), s.members().end());
      std::sort(members.begin(), members.end());
      REQUIRE(members == std::vector<std::size_t>(ref.begin(), ref.end()));
      for (std::size_t w = 0; w < n; ++w) REQUIRE(s.contains(w) == (ref.count(w) == 1));
    }
    CHECK(operations == 2000);
  }
}

namespace {

// 0 and 1: sources of 10 bytes, read only by 4; 2: a source of 20 bytes read by 3 (10 bytes);
// 4 (10 bytes) reads 0, 1 and 3. Along the order 1, 0, 2, 3, 4 with a budget of 40, computing 3
// needs one of 0 and 1 gone (2 is 3's input): both have the same bytes, cost and next use, so
// every eviction score ties, and the smaller vertex, 0, is evicted and recomputed before 4. The set
// lists 1 before 0 (1 became resident first), so a tie rule that followed the list would evict 1.
memory_graph tie_graph() {
  return memory_graph(memory_graph_data{.num_nodes = 5,
                                        .edges = {{0, 4}, {1, 4}, {2, 3}, {3, 4}},
                                        .bytes = {10, 10, 20, 10, 10},
                                        .cost = {1, 1, 1, 1, 1}});
}

const std::vector<std::size_t> tie_order{1, 0, 2, 3, 4};
const std::vector<std::size_t> smaller_evicted{1, 0, 2, 3, 0, 4};

}  // namespace

TEST_CASE("eviction greedy: ties go to the smaller vertex under every policy") {
  const memory_graph g = tie_graph();
  for (const auto policy : detail::all_eviction_policies) {
    INFO("policy " << static_cast<int>(policy));
    const auto computes = detail::staged_eviction_computes(g, tie_order, 40, policy);
    REQUIRE(computes.has_value());
    CHECK(*computes == smaller_evicted);
  }
  // Below 40, 4 and its three inputs do not fit: every policy gets stuck.
  for (const auto policy : detail::all_eviction_policies) CHECK_FALSE(detail::staged_eviction_computes(g, tie_order, 39, policy).has_value());
}

TEST_CASE("dtr_plan: ties of the size score go to the smaller vertex") {
  const memory_graph g = tie_graph();
  const auto r = dtr_plan(g, 40, dtr_options{.order = tie_order, .heuristic = dtr_heuristic::size, .use_spare_memory = false});
  REQUIRE(r.status == solve_status::feasible);
  std::vector<std::size_t> computes;
  for (const auto& s : r.plan.steps)
    if (s.op == plan_op::compute) computes.push_back(s.node);
  CHECK(computes == smaller_evicted);
  CHECK(r.peak_bytes == 40);
  // lru does not tie here: 1 is the stalest, so it is the one recomputed.
  const auto lru = dtr_plan(g, 40, dtr_options{.order = tie_order, .heuristic = dtr_heuristic::lru, .use_spare_memory = false});
  REQUIRE(lru.status == solve_status::feasible);
  computes.clear();
  for (const auto& s : lru.plan.steps)
    if (s.op == plan_op::compute) computes.push_back(s.node);
  CHECK(computes == std::vector<std::size_t>{1, 0, 2, 3, 1, 4});
}
