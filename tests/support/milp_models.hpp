#pragma once
// Random MILP models that no backend solves at once: for the conformance tests' time limits and
// for bench_solvers.

#include <memsched/solver/milp_model.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace memsched::testing {

/// A random 0-1 multi-dimensional knapsack: n items, k capacity rows at half the total weight.
/// With n = 250 and k = 10 neither CBC nor GLPK proves optimality within seconds. Profits
/// follow the weights (a hard, correlated instance).
inline milp_model multi_knapsack(int n, int k, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> w(1, 1000);
  milp_model m;
  m.sense = objective_sense::maximize;
  std::vector<double> profit(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) m.add_binary(0, "item" + std::to_string(i));
  for (int r = 0; r < k; ++r) {
    std::vector<linear_term> terms;
    double total = 0;
    for (int i = 0; i < n; ++i) {
      const double a = w(rng);
      total += a;
      profit[static_cast<std::size_t>(i)] += a / k;
      terms.push_back({static_cast<std::size_t>(i), a});
    }
    m.add_less_equal(std::move(terms), total / 2, "capacity" + std::to_string(r));
  }
  for (int i = 0; i < n; ++i) m.variables()[static_cast<std::size_t>(i)].objective = profit[static_cast<std::size_t>(i)] + w(rng) / 2;
  return m;
}

/// A random set cover: `columns` 0-1 variables of cost 1-100, each covering rows/20 random rows
/// (at least 2); every row (>= 1) is covered by some column.
inline milp_model set_cover(int columns, int rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> cost(1, 100), row(0, rows - 1);
  milp_model m;
  std::vector<std::vector<linear_term>> covered_by(static_cast<std::size_t>(rows));
  const int per_column = std::max(2, rows / 20);
  for (int c = 0; c < columns; ++c) {
    const std::size_t x = m.add_binary(cost(rng));
    for (int k = 0; k < per_column; ++k) covered_by[static_cast<std::size_t>(row(rng))].push_back({x, 1.0});
  }
  std::uniform_int_distribution<int> column(0, columns - 1);
  for (auto& terms : covered_by) {
    if (terms.empty()) terms.push_back({static_cast<std::size_t>(column(rng)), 1.0});
    m.add_greater_equal(std::move(terms), 1.0);
  }
  return m;
}

}  // namespace memsched::testing
