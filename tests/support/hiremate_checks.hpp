// Test support for the HiRemate tests (tests/remat/hiremate*.cpp): a small GPT training graph,
// the checks every returned plan gets, and the heuristic start the hierarchy is compared against,
// written out from the heuristics themselves.
#pragma once

#include <memsched/graph/gpt.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/dtr.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "eviction_greedy_plans.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace memsched::testing {

/// A small GPT training graph (hidden 32, 2 heads, sequence 16): `layers` identical blocks.
inline memory_graph tiny_gpt(std::size_t layers) {
  return make_memory_graph(make_training_graph(make_gpt({.layers = layers, .hidden = 32, .heads = 2, .sequence = 16, .vocab = 50})));
}

// The simulator re-checks everything the result claims (a valid plan computes every vertex), and
// the plan respects what every plan must: the per-node bound, every vertex at least once.
inline void check_hiremate_result(const memory_graph& g, const remat_result& r, std::int64_t budget) {
  REQUIRE(has_solution(r.status));
  const plan_simulation sim = simulate_plan(g, r.plan);  // throws on an invalid plan
  CHECK(sim.peak_bytes <= budget);
  CHECK(sim.peak_bytes == r.peak_bytes);
  CHECK(sim.total_cost == doctest::Approx(r.total_cost));
  CHECK(r.peak_bytes >= peak_lower_bound(g));
  CHECK(r.total_cost >= g.total_cost() * (1 - 1e-12));
  CHECK(r.overhead == doctest::Approx(r.total_cost / g.total_cost() - 1));
}

// The start hiremate compares its hierarchy against: the cheapest of the heuristics' plans, DTR's
// with every score (the graphs here have fewer than 4,096 vertices) and Checkmate's eviction
// greedy with every policy along the topological order.
inline remat_result heuristic_start(const memory_graph& g, std::int64_t budget) {
  remat_result best = best_heuristic_plan(g, budget);
  std::string method = "best-heuristic";
  auto offer = [&](remat_result r, std::string name) {
    if (has_solution(r.status) && (!has_solution(best.status) || r.total_cost < best.total_cost)) {
      best = std::move(r);
      method = std::move(name);
    }
  };
  for (auto h : {dtr_heuristic::dtr_eq, dtr_heuristic::local, dtr_heuristic::lru, dtr_heuristic::size, dtr_heuristic::dtr})
    offer(dtr_plan(g, budget, dtr_options{.heuristic = h, .max_computations = 8 * g.size() + 64}), "dtr:" + std::string(to_string(h)));
  const std::vector<std::size_t> topo(g.topological_order().begin(), g.topological_order().end());
  for (remat_result& r : eviction_greedy_plans(g, topo, budget)) {
    std::string name = r.stats.method;
    offer(std::move(r), std::move(name));
  }
  best.stats.method = method;
  return best;
}

// With the heuristic start, hiremate returns the cheaper of the hierarchy's plan and the start's:
// a plan exactly when one of them has one, at the lower of their costs.
inline void check_cheaper_of(const memory_graph& g, const remat_result& full, const remat_result& alone, const remat_result& heur, std::int64_t budget) {
  REQUIRE(has_solution(full.status) == (has_solution(alone.status) || has_solution(heur.status)));
  if (!has_solution(full.status)) {
    CHECK(full.plan.steps.empty());
    return;
  }
  check_hiremate_result(g, full, budget);
  double best = std::numeric_limits<double>::infinity();
  if (has_solution(alone.status)) best = alone.total_cost;
  if (has_solution(heur.status)) best = std::min(best, heur.total_cost);
  CHECK(full.total_cost == doctest::Approx(best).epsilon(1e-12));
}

}  // namespace memsched::testing
