#pragma once
// Test support for remat/: chain and random training graphs, the shared training graphs, and the
// re-simulation of a returned plan.

#include <memsched/graph/json_io.hpp>
#include <memsched/remat/remat_result.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace memsched::testing {

/// The forward chain x -> f1 -> ... -> f(n-1) (x an input), bytes and costs from the seed.
inline dataflow_graph forward_chain(std::size_t n, std::uint64_t seed = 0, bool equal = false) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> size(1, 100);
  std::uniform_int_distribution<int> cost(1, 10);
  dataflow_graph f(n);
  for (std::size_t v = 0; v < n; ++v) {
    f[v].id = static_cast<std::int64_t>(v);
    f[v].op = v == 0 ? "input" : "conv2d";
    f[v].bytes = equal ? 100 : size(rng);
    f[v].cost = v == 0 ? 0.0 : (equal ? 1.0 : cost(rng));
    if (v > 0) add_edge(v - 1, v, f);
  }
  return f;
}

/// The training graph of forward_chain(n).
inline dataflow_graph chain_training_graph(std::size_t n, std::uint64_t seed = 0, bool equal = false) {
  return make_training_graph(forward_chain(n, seed, equal));
}

/// The training graph of a random forward DAG (random_dag ids renumbered topologically).
inline dataflow_graph random_training_graph(std::size_t n, double p, std::uint64_t seed) {
  dataflow_graph f = to_dataflow_graph(random_dag(n, p, seed));
  for (std::size_t v = 0; v < n; ++v) f[v].op = (v % 3 == 0) ? "mul" : "relu";
  return make_training_graph(f);
}

/// Every shared training graph under tests/data (checkmate/*_training.json, torch/*.training.json).
inline std::vector<std::filesystem::path> shared_training_graphs() {
  std::vector<std::filesystem::path> out;
  const std::filesystem::path root(MEMSCHED_TEST_DATA_DIR);
  for (const char* sub : {"checkmate", "torch"})
    for (const auto& e : std::filesystem::directory_iterator(root / sub)) {
      const std::string f = e.path().filename().string();
      if (f.find("training") != std::string::npos) out.push_back(e.path());
    }
  std::sort(out.begin(), out.end());
  return out;
}

/// Whether r carries a plan (status feasible or optimal).
inline bool has_plan(const remat_result& r) { return r.status == solve_status::feasible || r.status == solve_status::optimal; }

/// Re-simulates r's plan: a plan (feasible or optimal), valid (check_plan: inputs resident,
/// outputs resident at the end), peak and cost as reported, within budget.
inline void check_result(const memory_graph& g, const remat_result& r, std::int64_t budget) {
  REQUIRE(has_plan(r));
  const auto check = check_plan(g, r.plan);
  INFO(check.error);
  REQUIRE(check.valid);
  const auto sim = simulate_plan(g, r.plan);
  CHECK(sim.peak_bytes == r.peak_bytes);
  CHECK(sim.total_cost == doctest::Approx(r.total_cost));
  CHECK(sim.peak_bytes <= budget);
}

}  // namespace memsched::testing
