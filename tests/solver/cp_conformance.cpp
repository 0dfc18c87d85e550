// Conformance suite for every CP backend that was built (cp_backend): known optima, infeasible
// models, unsupported numbers, incumbents and node limits. Built only when a CP backend is
// (tests/CMakeLists.txt registers it as a skipped test otherwise); cp_model itself is tested in
// cp_model.cpp.

#include <memsched/solver/cp_concepts.hpp>
#include <memsched/solver/cp_model.hpp>

#ifdef MEMSCHED_HAVE_GECODE
#include <memsched/solver/backends/gecode.hpp>
#endif

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace memsched;

namespace {

std::vector<std::int64_t> ints(const solver_result& r) { return {r.values.begin(), r.values.end()}; }

// Checks the result against the model and returns it.
solver_result checked(const cp_model& m, const solver_result& r) {
  INFO(r.message);
  if (has_solution(r.status)) {
    REQUIRE(r.values.size() == m.num_variables());
    CHECK_FALSE(m.first_violation(ints(r)).has_value());
    CHECK(r.objective == doctest::Approx(static_cast<double>(m.objective_value(ints(r)))));
  }
  return r;
}

template <class B>
std::vector<B> backends_of_type();

#ifdef MEMSCHED_HAVE_GECODE
// Gecode in each of its three search modes: every mode must pass every case.
template <>
std::vector<gecode_backend> backends_of_type<gecode_backend>() {
  return {gecode_backend{{.search = gecode_search::automatic}}, gecode_backend{{.search = gecode_search::branch_and_bound}},
          gecode_backend{{.search = gecode_search::lns, .lns_iterations = 2000}}};
}
#endif

}  // namespace

#ifdef MEMSCHED_HAVE_GECODE
#define MEMSCHED_CP_BACKENDS gecode_backend
#endif

#ifdef MEMSCHED_CP_BACKENDS

TEST_CASE_TEMPLATE("cp backend: linear optimum", B, MEMSCHED_CP_BACKENDS) {
  // min x + y  s.t.  x + 2y >= 7, 0 <= x, y <= 10: optimum 4.
  cp_model m;
  const auto x = m.add_variable(0, 10), y = m.add_variable(0, 10);
  m.add(cp_linear{{{x, 1}, {y, 2}}, 7, cp_model::max_value, {}});
  m.objective = {{x, 1}, {y, 1}};
  for (const auto& b : backends_of_type<B>()) {
    const auto r = checked(m, b.solve(m, {}));
    CHECK(r.status == solve_status::optimal);
    CHECK(r.objective == 4);
    CHECK(r.bound == 4);
  }
}

TEST_CASE_TEMPLATE("cp backend: cumulative makespan", B, MEMSCHED_CP_BACKENDS) {
  // Four tasks (durations 2, 2, 3, 1; demands 1, 1, 2, 1) on capacity 2; minimise the makespan.
  // Energy 2 + 2 + 6 + 1 = 11 over capacity 2: makespan >= 6, and 6 is reachable
  // (task 3 in [0,3), tasks 0, 1 in [3,5) side by side, task 4 in [5,6)).
  cp_model m;
  const std::vector<std::int64_t> dur{2, 2, 3, 1}, dem{1, 1, 2, 1};
  const auto span = m.add_variable(0, 20, "makespan");
  cp_cumulative c{{}, 2, std::nullopt};
  for (std::size_t i = 0; i < dur.size(); ++i) {
    const auto s = m.add_variable(0, 20), l = m.add_constant(dur[i]), e = m.add_variable(0, 20);
    const auto iv = m.add_interval({s, l, e, std::nullopt, "t" + std::to_string(i)});
    c.tasks.push_back({iv, dem[i]});
    m.add(cp_linear{{{span, 1}, {e, -1}}, 0, cp_model::max_value, {}});
  }
  m.add(c);
  m.objective = {{span, 1}};
  for (const auto& b : backends_of_type<B>()) {
    const auto r = checked(m, b.solve(m, {}));
    CHECK(r.status == solve_status::optimal);
    CHECK(r.objective == 6);
  }
}

TEST_CASE_TEMPLATE("cp backend: optional intervals, variable capacity, scaled demands", B, MEMSCHED_CP_BACKENDS) {
  // Three optional unit tasks all at time 0 (demands 3000, 5000, 7000); at least two must run.
  // Minimise the capacity: the best pair is 3000 + 5000 = 8000. Demands share gcd 1000.
  cp_model m;
  const auto cap = m.add_variable(0, 100000, "cap");
  cp_cumulative c{{}, 0, cap};
  std::vector<cp_literal> present;
  cp_linear at_least_two{{}, 2, cp_model::max_value, {}};
  for (std::int64_t d : {3000, 5000, 7000}) {
    const auto p = m.add_boolean();
    const auto s = m.add_constant(0), l = m.add_constant(1), e = m.add_constant(1);
    c.tasks.push_back({m.add_interval({s, l, e, p, {}}), d});
    at_least_two.terms.push_back({p, 1});
  }
  m.add(c);
  m.add(at_least_two);
  m.objective = {{cap, 1}};
  for (const auto& b : backends_of_type<B>()) {
    const auto r = checked(m, b.solve(m, {}));
    CHECK(r.status == solve_status::optimal);
    CHECK(r.objective == 8000);
  }
}

TEST_CASE_TEMPLATE("cp backend: all-different, element, clauses, covers", B, MEMSCHED_CP_BACKENDS) {
  cp_model m;
  // x0, x1, x2 in [1, 3] all different; minimise 100 x0 + 10 x1 + x2: 123.
  const auto x0 = m.add_variable(1, 3), x1 = m.add_variable(1, 3), x2 = m.add_variable(1, 3);
  m.add(cp_all_different{{x0, x1, x2}, {}});
  // y = table[i]; minimise y: 3 (i = 1). Optional all-different: a, b absent may share a value.
  const auto i = m.add_variable(0, 3), y = m.add_variable(0, 10);
  m.add(cp_element{{5, 3, 8, 4}, i, y});
  const auto pa = m.add_boolean(), pb = m.add_boolean(), va = m.add_variable(0, 0), vb = m.add_variable(0, 0);
  m.add(cp_all_different{{va, vb}, {pa, pb}});
  m.add(cp_clause{{{pa, true}, {pb, true}}});  // one of them present, never both (same value)
  // A producer interval [0, e) must cover the consumer's start s in [2, 9]: e >= s + 1.
  const auto ps = m.add_constant(0), pl = m.add_variable(0, 20), pe = m.add_variable(0, 20);
  const auto cs = m.add_variable(std::vector<std::int64_t>{2, 5, 9}), cl = m.add_constant(1), ce = m.add_variable(0, 20);
  const auto prod = m.add_interval({ps, pl, pe, std::nullopt, "producer"});
  const auto cons = m.add_interval({cs, cl, ce, std::nullopt, "consumer"});
  m.add(cp_cover{cons, {prod}});
  m.objective = {{x0, 100}, {x1, 10}, {x2, 1}, {y, 1000}, {pe, 10000}, {pa, 7}, {pb, 5}};
  for (const auto& b : backends_of_type<B>()) {
    const auto r = checked(m, b.solve(m, {}));
    CHECK(r.status == solve_status::optimal);
    CHECK(r.objective == 123 + 3000 + 30000 + 5);
  }
}

TEST_CASE_TEMPLATE("cp backend: infeasible models", B, MEMSCHED_CP_BACKENDS) {
  {
    cp_model m;
    const auto x = m.add_variable(0, 10), y = m.add_variable(0, 10);
    m.add(cp_linear{{{x, 1}, {y, 1}}, 25, cp_model::max_value, {}});
    for (const auto& b : backends_of_type<B>()) CHECK(b.solve(m, {}).status == solve_status::infeasible);
  }
  {  // Pigeonhole 5 into 4 by clauses and at-most-one sums: infeasible only after search.
    cp_model m;
    const int p = 5, h = 4;
    std::vector<std::vector<std::size_t>> x(p, std::vector<std::size_t>(h));
    for (int i = 0; i < p; ++i) {
      cp_clause some;
      for (int j = 0; j < h; ++j) {
        x[i][j] = m.add_boolean();
        some.literals.push_back({x[i][j], true});
      }
      m.add(some);
    }
    for (int j = 0; j < h; ++j) {
      cp_linear at_most_one{{}, cp_model::min_value, 1, {}};
      for (int i = 0; i < p; ++i) at_most_one.terms.push_back({x[i][j], 1});
      m.add(at_most_one);
    }
    for (const auto& b : backends_of_type<B>()) CHECK(b.solve(m, {}).status == solve_status::infeasible);
  }
}

TEST_CASE_TEMPLATE("cp backend: numbers it cannot represent give unsupported", B, MEMSCHED_CP_BACKENDS) {
  cp_model m;
  const auto x = m.add_variable(0, 5'000'000'000'000LL);
  m.objective = {{x, 1}};
  for (const auto& b : backends_of_type<B>()) {
    const auto r = b.solve(m, {});
    CHECK(r.status == solve_status::unsupported);
    CHECK_FALSE(r.message.empty());
  }
}

TEST_CASE_TEMPLATE("cp backend: start solution, incumbent callback and its objective", B, MEMSCHED_CP_BACKENDS) {
  // min sum x_i with sum x_i >= 17 over 6 variables in [0, 9]; start at all 9 (objective 54).
  cp_model m;
  cp_linear c{{}, 17, cp_model::max_value, {}};
  for (int i = 0; i < 6; ++i) {
    const auto v = m.add_variable(0, 9);
    c.terms.push_back({v, 1});
    m.objective.push_back({v, 1});
    m.groups.push_back({v});
  }
  m.add(c);
  m.start = std::vector<std::int64_t>(6, 9);
  for (const auto& b : backends_of_type<B>()) {
    struct objective_log {
      std::vector<double> seen;
      void on_incumbent(double, double objective, double) { seen.push_back(objective); }
    } log;
    const auto& seen = log.seen;
    solver_options o;
    o.observer = log;
    const auto r = checked(m, b.solve(m, o));
    CHECK(has_solution(r.status));  // pure LNS cannot prove it: propagation gives no bound
    CHECK(r.objective == 17);
    REQUIRE_FALSE(seen.empty());
    CHECK(seen.front() <= 54);
    CHECK(seen.back() == 17);
    for (std::size_t k = 1; k < seen.size(); ++k) CHECK(seen[k] < seen[k - 1]);
  }
}

namespace {
/// Pigeonhole p into p - 1 by clauses and at-most-one sums: infeasible, and exponential for a
/// solver without clause learning.
cp_model pigeonhole(int p) {
  cp_model m;
  const int h = p - 1;
  std::vector<std::vector<std::size_t>> x(p, std::vector<std::size_t>(h));
  for (int i = 0; i < p; ++i) {
    cp_clause some;
    for (int j = 0; j < h; ++j) {
      x[i][j] = m.add_boolean();
      some.literals.push_back({x[i][j], true});
    }
    m.add(some);
  }
  for (int j = 0; j < h; ++j) {
    cp_linear at_most_one{{}, cp_model::min_value, 1, {}};
    for (int i = 0; i < p; ++i) at_most_one.terms.push_back({x[i][j], 1});
    m.add(at_most_one);
  }
  return m;
}

/// min sum w_i x_i  s.t.  sum v_i x_i >= target, x boolean: a knapsack cover whose proof needs
/// many search nodes.
cp_model knapsack_cover(int n) {
  cp_model m;
  cp_linear cover{{}, 0, cp_model::max_value, {}};
  std::int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const auto x = m.add_boolean();
    const std::int64_t v = 17 + (i * 37) % 29, w = 11 + (i * 53) % 31;
    cover.terms.push_back({x, v});
    m.objective.push_back({x, w});
    m.groups.push_back({x});
    total += v;
  }
  cover.lower = total / 2;
  m.add(cover);
  return m;
}
}  // namespace

// Time-limit accuracy is a speed claim: bench_solvers measures it. Tests stop the search with the
// counted node_limit, which gives the same answer on any machine and load.
TEST_CASE_TEMPLATE("cp backend: the node limit stops a search that finds nothing with time_limit", B, MEMSCHED_CP_BACKENDS) {
  const cp_model m = pigeonhole(11);
  for (const auto& b : backends_of_type<B>()) {
    const auto r = b.solve(m, {.node_limit = 2000});
    CHECK(r.status == solve_status::time_limit);  // a limit stopped it: nothing found, nothing proven
    CHECK(r.values.empty());
    CHECK(r.message.find("node limit") != std::string::npos);
    // The same model, small enough to finish: proven infeasible.
    CHECK(b.solve(pigeonhole(5), {.node_limit = 1'000'000}).status == solve_status::infeasible);
  }
}

TEST_CASE_TEMPLATE("cp backend: the node limit stops an optimisation with a valid incumbent", B, MEMSCHED_CP_BACKENDS) {
  const cp_model m = knapsack_cover(40);
  for (const auto& b : backends_of_type<B>()) {
    const auto r = checked(m, b.solve(m, {.node_limit = 300}));
    REQUIRE(r.status == solve_status::feasible);
    CHECK(r.message.find("node limit") != std::string::npos);
    // Counted, so repeatable.
    const auto again = b.solve(m, {.node_limit = 300});
    CHECK(again.values == r.values);
    // More nodes never give a worse incumbent here: the search is the same up to the first limit.
    const auto longer = checked(m, b.solve(m, {.node_limit = 3000}));
    REQUIRE(has_solution(longer.status));
    CHECK(longer.objective <= r.objective);
  }
}

TEST_CASE_TEMPLATE("cp backend: an expired time limit stops at once; huge limits are none", B, MEMSCHED_CP_BACKENDS) {
  const cp_model m = pigeonhole(11);  // far from solved in a few nodes
  const cp_model k = knapsack_cover(12);
  for (const auto& b : backends_of_type<B>()) {
    for (double limit : {0.0, -1.0, std::nan("")}) {
      const auto r = b.solve(m, {.time_limit = std::chrono::duration<double>(limit)});
      CHECK(r.status == solve_status::time_limit);  // stopped: nothing found, nothing proven
      CHECK(r.values.empty());
    }
    const auto free_run = b.solve(k, {});
    REQUIRE(has_solution(free_run.status));
    for (double limit : {1e12, std::numeric_limits<double>::infinity()}) {
      const auto r = checked(k, b.solve(k, {.time_limit = std::chrono::duration<double>(limit)}));
      CHECK(r.status == free_run.status);
      CHECK(r.values == free_run.values);
    }
  }
}

#else

// Never compiled into a test: without a CP backend tests/CMakeLists.txt registers this test as
// skipped (exit code 77) instead of building it.
#error "cp_conformance.cpp needs a CP backend (MEMSCHED_HAVE_GECODE)"

#endif
