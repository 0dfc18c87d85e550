// Conformance suite for every CP backend that was built (cp_backend): known optima, infeasible
// models, unsupported numbers and time limits.

#include <memsched/solver/cp_concepts.hpp>
#include <memsched/solver/cp_model.hpp>

#ifdef MEMSCHED_HAVE_GECODE
#include <memsched/solver/backends/gecode.hpp>
#endif

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
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

struct no_backend {};

}  // namespace

#ifdef MEMSCHED_HAVE_GECODE
#define MEMSCHED_CP_BACKENDS gecode_backend
#else
#define MEMSCHED_CP_BACKENDS no_backend
#endif

TEST_CASE("cp_model checks its input and evaluates assignments") {
  cp_model m;
  const auto x = m.add_variable(0, 5, "x");
  const auto b = m.add_boolean("b");
  CHECK_THROWS_AS(m.add_variable(3, 2), std::invalid_argument);
  CHECK_THROWS_AS(m.add(cp_clause{{{x, true}}}), std::invalid_argument);  // x is not boolean
  CHECK_THROWS_AS(m.add(cp_linear{{{7, 1}}, 0, 1, {}}), std::invalid_argument);
  m.add(cp_linear{{{x, 1}}, 3, cp_model::max_value, {{b, true}}});  // b -> x >= 3
  CHECK_FALSE(m.first_violation({1, 0}).has_value());
  CHECK(m.first_violation({1, 1}).has_value());
  CHECK_FALSE(m.first_violation({4, 1}).has_value());
  CHECK(m.first_violation({6, 1}).has_value());  // out of domain
}

#if defined(MEMSCHED_HAVE_GECODE)

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

TEST_CASE_TEMPLATE("cp backend: the time limit is honoured within 10%", B, MEMSCHED_CP_BACKENDS) {
  // Pigeonhole 11 into 10: exponential for a solver without clause learning.
  cp_model m;
  const int p = 11, h = 10;
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
  for (const auto& b : backends_of_type<B>()) {
    solver_options o;
    o.time_limit = std::chrono::duration<double>(0.5);
    // As for the MILP backends: on a loaded machine one run can be descheduled past the limit, so
    // the best of three runs must be within 10% (+ 50 ms), and no run may overshoot by half.
    double best = 1e9;
    for (int attempt = 0; attempt < 3 && best > 0.55 + 0.05; ++attempt) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto r = b.solve(m, o);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      CHECK(r.status == solve_status::time_limit);
      CHECK(wall >= 0.45);
      CHECK(wall <= 0.75);
      best = std::min(best, wall);
    }
    CHECK(best <= 0.55 + 0.05);
  }
}

#else

TEST_CASE("no CP backend was built") { MESSAGE("no CP backend: install libgecode-dev"); }

#endif
