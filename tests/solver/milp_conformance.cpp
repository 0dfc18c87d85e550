// One conformance suite for every MILP backend that was built (MEMSCHED_HAVE_<X>), plus the
// skeleton backend, which must answer `unsupported` everywhere.
#include <memsched/solver/concepts.hpp>
#include <memsched/solver/milp_model.hpp>
#include <memsched/solver/skeleton_backend.hpp>
#include <memsched/solver/solver_options.hpp>
#ifdef MEMSCHED_HAVE_CBC
#include <memsched/solver/backends/cbc.hpp>
#endif
#ifdef MEMSCHED_HAVE_GLPK
#include <memsched/solver/backends/glpk.hpp>
#endif

#include <doctest/doctest.h>

#include "../support/milp_models.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace memsched;
using namespace std::chrono_literals;

#ifdef MEMSCHED_HAVE_CBC
namespace {
/// cbc_backend with CBC in the calling process (cbc_backend runs it in a child process by default).
struct cbc_in_process_backend : cbc_backend {
  cbc_in_process_backend() : cbc_backend{.isolate_process = false} {}
};
}  // namespace
#define MEMSCHED_CBC_TYPE cbc_backend, cbc_in_process_backend,
#else
#define MEMSCHED_CBC_TYPE
#endif
#ifdef MEMSCHED_HAVE_GLPK
namespace {
/// glpk_backend with GLPK in the calling thread (glpk_backend runs it in a child process by default).
struct glpk_in_process_backend : glpk_backend {
  glpk_in_process_backend() : glpk_backend{.isolate_process = false} {}
};
}  // namespace
#define MEMSCHED_GLPK_TYPE glpk_backend, glpk_in_process_backend,
#else
#define MEMSCHED_GLPK_TYPE
#endif
#define MEMSCHED_MILP_BACKENDS MEMSCHED_CBC_TYPE MEMSCHED_GLPK_TYPE skeleton_backend
// The backends that solve (the skeleton's answers are checked by its own cases). Without any, the
// cases over them compile against the skeleton and are reported as skipped, not as passed.
#if defined(MEMSCHED_HAVE_CBC) && defined(MEMSCHED_HAVE_GLPK)
#define MEMSCHED_REAL_MILP_BACKENDS cbc_backend, cbc_in_process_backend, glpk_backend, glpk_in_process_backend
#elif defined(MEMSCHED_HAVE_CBC)
#define MEMSCHED_REAL_MILP_BACKENDS cbc_backend, cbc_in_process_backend
#elif defined(MEMSCHED_HAVE_GLPK)
#define MEMSCHED_REAL_MILP_BACKENDS glpk_backend, glpk_in_process_backend
#else
#define MEMSCHED_REAL_MILP_BACKENDS skeleton_backend
#define MEMSCHED_NO_REAL_MILP_BACKEND
#endif
#ifdef MEMSCHED_NO_REAL_MILP_BACKEND
constexpr bool no_real_milp_backend = true;
#else
constexpr bool no_real_milp_backend = false;
#endif

namespace {
/// One incumbent as the observer saw it.
struct incumbent {
  double seconds, objective, bound;
};
/// An observer that keeps every incumbent (and the thread it came from).
struct incumbent_log {
  std::vector<incumbent> seen;
  std::vector<std::thread::id> threads;
  void on_incumbent(double s, double v, double b) {
    seen.push_back({s, v, b});
    threads.push_back(std::this_thread::get_id());
  }
};
/// An observer whose hook throws.
struct throwing_observer {
  void on_incumbent(double, double, double) const { throw std::runtime_error("stop here"); }
};
}  // namespace

namespace {

template <class B>
constexpr bool real_backend = !std::is_same_v<B, skeleton_backend>;

/// Checks the answer of a backend that cannot solve: unsupported, with a reason, and nothing else.
[[maybe_unused]] void check_unsupported(const solver_result& r) {
  CHECK(r.status == solve_status::unsupported);
  CHECK(!r.message.empty());
  CHECK(r.values.empty());
  CHECK(std::isnan(r.objective));
  CHECK(std::isnan(r.bound));
}

/// Checks what every answer with a solution must satisfy: one value per variable, the model's
/// constraints, an objective that matches the values, and a bound on the right side.
[[maybe_unused]] void check_solution(const milp_model& m, const solver_result& r, double gap = 1e-4) {
  REQUIRE(has_solution(r.status));
  REQUIRE(r.values.size() == m.num_variables());
  const auto violation = m.first_violation(r.values);
  CHECK_MESSAGE(!violation, violation.value_or(""));
  CHECK(r.objective == doctest::Approx(m.objective_value(r.values)).epsilon(1e-7));
  if (std::isfinite(r.bound)) {
    const double slack = 1e-6 * std::max(1.0, std::abs(r.objective));
    if (m.sense == objective_sense::minimize) CHECK(r.bound <= r.objective + slack);
    else CHECK(r.bound >= r.objective - slack);
  }
  if (r.status == solve_status::optimal && std::isfinite(r.bound))
    CHECK(std::abs(r.bound - r.objective) <= gap * std::max(1.0, std::abs(r.objective)) + 1e-6);
}

/// The same model with every variable continuous (what solve_relaxation solves).
[[maybe_unused]] milp_model relaxed(milp_model m) {
  for (auto& v : m.variables()) v.type = variable_type::continuous;
  m.start.reset();
  return m;
}

/// Brute-force optimum of a pure integer model with small finite domains: nullopt if infeasible.
[[maybe_unused]] std::optional<double> brute_force(const milp_model& m) {
  const std::size_t n = m.num_variables();
  std::vector<double> x(n);
  std::optional<double> best;
  std::function<void(std::size_t)> go = [&](std::size_t i) {
    if (i == n) {
      if (m.first_violation(x, 1e-9)) return;
      const double z = m.objective_value(x);
      if (!best || (m.sense == objective_sense::minimize ? z < *best : z > *best)) best = z;
      return;
    }
    for (double v = std::ceil(m.variables()[i].lower); v <= m.variables()[i].upper; v += 1) {
      x[i] = v;
      go(i + 1);
    }
  };
  go(0);
  return best;
}

using memsched::testing::multi_knapsack;

/// A feasible start for a multi_knapsack: items in index order while they fit.
[[maybe_unused]] std::vector<double> greedy_start(const milp_model& m) {
  std::vector<double> x(m.num_variables(), 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = 1;
    if (m.first_violation(x)) x[i] = 0;
  }
  return x;
}

/// Runs `f` with the process's stdout and stderr (file descriptors 1 and 2) sent to a file and
/// returns what was written there.
template <class F>
std::string captured_output(F&& f) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::cout.flush();
  char path[] = "/tmp/memsched_milp_output_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const int saved_out = dup(1), saved_err = dup(2);
  dup2(fd, 1);
  dup2(fd, 2);
  f();
  std::fflush(stdout);
  std::fflush(stderr);
  std::cout.flush();
  std::cerr.flush();
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  close(fd);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path);
  return text;
}

}  // namespace

TEST_CASE("skeleton backend: unsupported for every model and option, without a word or a report") {
  struct counting_observer {
    int calls = 0;
    void on_incumbent(double, double, double) { ++calls; }
  } observer;
  auto knapsack = multi_knapsack(30, 2, 1);
  knapsack.start = greedy_start(knapsack);
  milp_model bad = knapsack;  // a start of the wrong size: a real backend says error
  bad.start = std::vector<double>{1.0};
  milp_model empty;
  const std::vector<solver_options> options{
      {}, {.time_limit = 0s}, {.relative_gap = 0.5, .threads = 0, .verbosity = 3}, {.node_limit = 1, .observer = observer}};
  const std::string output = captured_output([&] {
    for (const auto* m : {&knapsack, &bad, &empty})
      for (const auto& o : options) {
        check_unsupported(skeleton_backend{}.solve(*m, o));
        check_unsupported(skeleton_backend{}.solve_relaxation(*m, o));
      }
  });
  CHECK(output.empty());
  CHECK(observer.calls == 0);
  CHECK(skeleton_backend::name() == "skeleton");
  CHECK(skeleton_backend{}.solve(knapsack, {}).message.find("skeleton") != std::string::npos);
}

TEST_CASE_TEMPLATE("milp backend: names and concepts", B, MEMSCHED_MILP_BACKENDS) {
  static_assert(milp_backend<B>);
  static_assert(lp_backend<B>);
  CHECK(!std::string_view(B{}.name()).empty());
}

TEST_CASE_TEMPLATE("milp backend: binary knapsack (maximize)", B, MEMSCHED_MILP_BACKENDS) {
  // Items (weight, value): (3,10) (4,13) (2,7) (5,15) (1,2); capacity 9.
  // Best by hand: {0,1,2} (weight 9, value 30); {1,3} and {2,3,4}-like sets reach at most 28.
  milp_model m;
  m.sense = objective_sense::maximize;
  const double w[] = {3, 4, 2, 5, 1}, v[] = {10, 13, 7, 15, 2};
  std::vector<linear_term> cap;
  for (int i = 0; i < 5; ++i) cap.push_back({m.add_binary(v[i]), w[i]});
  m.add_less_equal(cap, 9);
  const auto r = B{}.solve(m, {});
  if constexpr (!real_backend<B>) {
    CHECK(r.status == solve_status::unsupported);
    CHECK(!r.message.empty());
  } else {
    CHECK(r.status == solve_status::optimal);
    check_solution(m, r);
    CHECK(r.objective == doctest::Approx(30));  // {0,1,2}: 3+4+2 = 9, 10+13+7 = 30
    CHECK(r.objective == doctest::Approx(*brute_force(m)));
  }
}

TEST_CASE_TEMPLATE("milp backend: assignment with equality rows", B, MEMSCHED_MILP_BACKENDS) {
  // 3 workers x 3 jobs; the cheapest perfect matching costs 2 + 1 + 2 = 5 (0->1, 1->0, 2->2).
  const double cost[3][3] = {{4, 2, 8}, {1, 5, 7}, {3, 6, 2}};
  milp_model m;
  std::size_t x[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) x[i][j] = m.add_binary(cost[i][j]);
  for (int i = 0; i < 3; ++i) m.add_equal({{x[i][0], 1}, {x[i][1], 1}, {x[i][2], 1}}, 1, "worker");
  for (int j = 0; j < 3; ++j) m.add_equal({{x[0][j], 1}, {x[1][j], 1}, {x[2][j], 1}}, 1, "job");
  const auto r = B{}.solve(m, {});
  if constexpr (!real_backend<B>) {
    CHECK(r.status == solve_status::unsupported);
  } else {
    CHECK(r.status == solve_status::optimal);
    check_solution(m, r);
    CHECK(r.objective == doctest::Approx(5));
    CHECK(r.values[x[0][1]] == 1);
    CHECK(r.values[x[1][0]] == 1);
    CHECK(r.values[x[2][2]] == 1);
  }
}

TEST_CASE_TEMPLATE("milp backend: integer optimum differs from the LP optimum", B, MEMSCHED_MILP_BACKENDS) {
  // max 5x + 4y  s.t. 6x + 4y <= 24, x + 2y <= 6, x, y integer in [0, 10].
  // LP optimum (3, 1.5) = 21; integer optimum (4, 0) = 20.
  milp_model m;
  m.sense = objective_sense::maximize;
  const auto x = m.add_integer(0, 10, 5), y = m.add_integer(0, 10, 4);
  m.add_less_equal({{x, 6}, {y, 4}}, 24);
  m.add_less_equal({{x, 1}, {y, 2}}, 6);
  const auto r = B{}.solve(m, {});
  const auto lp = B{}.solve_relaxation(m, {});
  if constexpr (!real_backend<B>) {
    CHECK(r.status == solve_status::unsupported);
    CHECK(lp.status == solve_status::unsupported);
  } else {
    REQUIRE(r.status == solve_status::optimal);
    check_solution(m, r);
    CHECK(r.objective == doctest::Approx(20));
    CHECK(r.values[x] == 4);
    CHECK(r.values[y] == 0);
    REQUIRE(lp.status == solve_status::optimal);
    check_solution(relaxed(m), lp);
    CHECK(lp.objective == doctest::Approx(21));
    CHECK(lp.values[x] == doctest::Approx(3));
    CHECK(lp.values[y] == doctest::Approx(1.5));
    CHECK(lp.bound == doctest::Approx(21));
  }
}

TEST_CASE_TEMPLATE("milp backend: mixed model with free, negative and ranged parts and an offset", B, MEMSCHED_MILP_BACKENDS) {
  // min 2a - 3b + c + 10  with a integer in [-5, 5], b continuous in [-inf, 4], c free continuous,
  // rows: -2 <= a + b <= 3 (ranged), c - a >= 1.5, c >= -20 via a row, b - c <= 0.
  // b <= min(4, 3 - a, c); c >= max(a + 1.5, -20, b). Objective wants a small, b large, c small.
  // For a given a: b = min(4, 3 - a) and c = max(a + 1.5, b) -> enumerate a in [-5, 5]:
  // a=-5: b=4, c=4 -> -10 -12 +4 = -18;  a=-1: b=4, c=4 -> -2-12+4=-10; a=1: b=2, c=2.5 -> 2-6+2.5=-1.5
  // so a=-5 gives -18, +10 offset = -8.
  milp_model m;
  m.objective_offset = 10;
  const auto a = m.add_integer(-5, 5, 2), b = m.add_continuous(-infinity, 4, -3), c = m.add_continuous(-infinity, infinity, 1);
  m.add_constraint({{a, 1}, {b, 1}}, -2, 3, "ranged");
  m.add_greater_equal({{c, 1}, {a, -1}}, 1.5);
  m.add_greater_equal({{c, 1}}, -20);
  m.add_less_equal({{b, 1}, {c, -1}}, 0);
  const auto r = B{}.solve(m, {});
  if constexpr (!real_backend<B>) {
    CHECK(r.status == solve_status::unsupported);
  } else {
    REQUIRE(r.status == solve_status::optimal);
    check_solution(m, r);
    CHECK(r.objective == doctest::Approx(-8));
    CHECK(r.values[a] == -5);
    CHECK(r.values[b] == doctest::Approx(4));
  }
}

TEST_CASE_TEMPLATE("milp backend: duplicate terms in a row are summed", B, MEMSCHED_MILP_BACKENDS) {
  // max x  s.t. x + x <= 7 (written as two terms), x integer: x = 3.
  milp_model m;
  m.sense = objective_sense::maximize;
  const auto x = m.add_integer(0, 100, 1);
  m.add_less_equal({{x, 1}, {x, 1}}, 7);
  const auto r = B{}.solve(m, {});
  if constexpr (real_backend<B>) {
    REQUIRE(r.status == solve_status::optimal);
    CHECK(r.values[x] == 3);
  } else {
    check_unsupported(r);
  }
}

TEST_CASE_TEMPLATE("milp backend: random small integer programs against brute force" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> coef(-6, 6), rhs(-4, 12), dom(0, 3);
  int infeasible = 0, solved = 0;
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    milp_model m;
    m.sense = trial % 2 ? objective_sense::maximize : objective_sense::minimize;
    const int n = 3 + trial % 3;
    for (int i = 0; i < n; ++i) {
      const int lo = -dom(rng) / 2;
      m.add_integer(lo, lo + 1 + dom(rng), coef(rng));
    }
    for (int k = 0; k < 3; ++k) {
      std::vector<linear_term> t;
      for (int i = 0; i < n; ++i)
        if (const int c = coef(rng); c != 0) t.push_back({static_cast<std::size_t>(i), static_cast<double>(c)});
      if (k == 2) m.add_equal(std::move(t), rhs(rng) / 2);
      else m.add_less_equal(std::move(t), rhs(rng));
    }
    const auto expected = brute_force(m);
    const auto r = B{}.solve(m, {});
    if (!expected) {
      CHECK(r.status == solve_status::infeasible);
      ++infeasible;
    } else {
      REQUIRE(r.status == solve_status::optimal);
      check_solution(m, r);
      CHECK(r.objective == doctest::Approx(*expected));
      ++solved;
    }
  }
  CHECK(infeasible > 3);  // the generator exercises both outcomes
  CHECK(solved > 20);
}

TEST_CASE_TEMPLATE("milp backend: infeasible models", B, MEMSCHED_MILP_BACKENDS) {
  SUBCASE("LP infeasible") {
    milp_model m;
    const auto x = m.add_continuous(0, 10), y = m.add_integer(0, 10);
    m.add_greater_equal({{x, 1}, {y, 1}}, 3);
    m.add_less_equal({{x, 1}, {y, 1}}, 2);
    const auto r = B{}.solve(m, {});
    const auto lp = B{}.solve_relaxation(m, {});
    if constexpr (real_backend<B>) {
      CHECK(r.status == solve_status::infeasible);
      CHECK(r.values.empty());
      CHECK(lp.status == solve_status::infeasible);
    } else {
      check_unsupported(r);
      check_unsupported(lp);
    }
  }
  SUBCASE("integer infeasible, LP feasible") {
    // 2x + 2y = 3 has no integer solution; the LP has many.
    milp_model m;
    const auto x = m.add_integer(0, 5, 1), y = m.add_integer(0, 5, 1);
    m.add_equal({{x, 2}, {y, 2}}, 3);
    const auto r = B{}.solve(m, {});
    const auto lp = B{}.solve_relaxation(m, {});
    if constexpr (real_backend<B>) {
      CHECK(r.status == solve_status::infeasible);
      REQUIRE(lp.status == solve_status::optimal);
      CHECK(lp.objective == doctest::Approx(1.5));
    } else {
      check_unsupported(r);
      check_unsupported(lp);
    }
  }
  SUBCASE("integer domain without an integer") {
    milp_model m;
    m.add_integer(0.2, 0.8, 1);
    const auto r = B{}.solve(m, {});
    if constexpr (real_backend<B>) CHECK(r.status == solve_status::infeasible);
    else check_unsupported(r);
  }
}

TEST_CASE_TEMPLATE("milp backend: unbounded models give status unbounded", B, MEMSCHED_MILP_BACKENDS) {
  // max x + y  s.t. x - y >= 1, x integer >= 0, y continuous >= 0: unbounded.
  milp_model m;
  m.sense = objective_sense::maximize;
  const auto x = m.add_integer(0, infinity, 1), y = m.add_continuous(0, infinity, 1);
  m.add_greater_equal({{x, 1}, {y, -1}}, 1);
  const auto r = B{}.solve(m, {});
  const auto lp = B{}.solve_relaxation(m, {});
  if constexpr (real_backend<B>) {
    CHECK(r.status == solve_status::unbounded);
    CHECK(r.values.empty());
    CHECK(lp.status == solve_status::unbounded);
    // A valid start does not turn an unbounded model into a feasible answer.
    m.start = std::vector<double>{1, 0};
    CHECK(B{}.solve(m, {}).status == solve_status::unbounded);
  } else {
    CHECK(r.status == solve_status::unsupported);
    CHECK(lp.status == solve_status::unsupported);
  }
  SUBCASE("minimize a free variable") {
    milp_model f;
    f.add_continuous(-infinity, infinity, 1);
    const auto rf = B{}.solve(f, {});
    CHECK(rf.status == (real_backend<B> ? solve_status::unbounded : solve_status::unsupported));
  }
}

TEST_CASE_TEMPLATE("milp backend: degenerate and bad models" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  SUBCASE("no variables") {
    milp_model m;
    m.objective_offset = 4;
    auto r = B{}.solve(m, {});
    CHECK(r.status == solve_status::optimal);
    CHECK(r.objective == 4);
    m.add_constraint({}, 1, 2);  // 0 in [1, 2]: infeasible
    r = B{}.solve(m, {});
    CHECK(r.status == solve_status::infeasible);
  }
  SUBCASE("no constraints") {
    milp_model m;
    m.add_integer(-3, 7, 2);
    m.add_binary(-1);
    const auto r = B{}.solve(m, {});
    REQUIRE(r.status == solve_status::optimal);
    CHECK(r.objective == doctest::Approx(-7));
  }
  SUBCASE("start of the wrong size") {
    milp_model m;
    m.add_binary(1);
    m.start = std::vector<double>{1, 0};
    const auto r = B{}.solve(m, {});
    CHECK(r.status == solve_status::error);
    CHECK(r.message.find("start") != std::string::npos);
  }
  SUBCASE("NaN in the model") {
    milp_model m;
    m.add_binary(1);
    m.variables()[0].objective = std::nan("");
    const auto r = B{}.solve(m, {});
    CHECK(r.status == solve_status::error);
    CHECK(!r.message.empty());
  }
}

TEST_CASE_TEMPLATE("milp backend: LP relaxation of a knapsack" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  const auto m = multi_knapsack(60, 3, 5);
  const auto lp = B{}.solve_relaxation(m, {});
  REQUIRE(lp.status == solve_status::optimal);
  check_solution(relaxed(m), lp);
  const auto ip = B{}.solve(m, {.node_limit = 2000});
  REQUIRE(has_solution(ip.status));
  check_solution(m, ip);
  CHECK(lp.objective >= ip.objective - 1e-6);  // the relaxation bounds the maximum
  if (std::isfinite(ip.bound)) CHECK(ip.bound <= lp.objective + 1e-6);
}

TEST_CASE_TEMPLATE("milp backend: a start solution is used" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  auto m = multi_knapsack(250, 10, 7);
  const auto start = greedy_start(m);
  REQUIRE(!m.first_violation(start));
  const double start_objective = m.objective_value(start);
  m.start = start;
  SUBCASE("a search stopped after one node: at least the start comes back") {
    const auto r = B{}.solve(m, {.node_limit = 1});
    REQUIRE(r.status == solve_status::feasible);
    check_solution(m, r);
    CHECK(r.objective >= start_objective - 1e-9);
  }
  SUBCASE("zero time limit") {
    const auto r = B{}.solve(m, {.time_limit = 0s});
    REQUIRE(r.status == solve_status::feasible);
    CHECK(r.objective == doctest::Approx(start_objective));
  }
  SUBCASE("without a start a zero time limit finds nothing") {
    m.start.reset();
    const auto r = B{}.solve(m, {.time_limit = 0s});
    CHECK(r.status == solve_status::time_limit);
    CHECK(r.values.empty());
  }
  SUBCASE("an infeasible start is ignored") {
    milp_model small;
    small.sense = objective_sense::maximize;
    const auto x = small.add_integer(0, 10, 5), y = small.add_integer(0, 10, 4);
    small.add_less_equal({{x, 6}, {y, 4}}, 24);
    small.add_less_equal({{x, 1}, {y, 2}}, 6);
    small.start = std::vector<double>{10, 10};
    const auto r = B{}.solve(small, {});
    REQUIRE(r.status == solve_status::optimal);
    CHECK(r.objective == doctest::Approx(20));
  }
  SUBCASE("an optimal start on a small model stays optimal") {
    milp_model small;
    small.sense = objective_sense::maximize;
    const auto x = small.add_integer(0, 10, 5), y = small.add_integer(0, 10, 4);
    small.add_less_equal({{x, 6}, {y, 4}}, 24);
    small.add_less_equal({{x, 1}, {y, 2}}, 6);
    small.start = std::vector<double>{4, 0};
    const auto r = B{}.solve(small, {});
    REQUIRE(r.status == solve_status::optimal);
    CHECK(r.objective == doctest::Approx(20));
  }
}

TEST_CASE_TEMPLATE("milp backend: incumbent callback reports improving objectives" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  const auto m = multi_knapsack(250, 10, 11);
  incumbent_log log;
  const auto r = B{}.solve(m, {.node_limit = 200, .observer = log});
  const auto& seen = log.seen;
  REQUIRE(has_solution(r.status));
  check_solution(m, r);
  REQUIRE(!seen.empty());
  for (std::size_t i = 1; i < seen.size(); ++i) {
    CHECK(seen[i].objective > seen[i - 1].objective);  // maximize: strictly improving
    CHECK(seen[i].seconds >= seen[i - 1].seconds);
  }
  for (const auto& p : seen) {
    CHECK(p.seconds >= 0);
    CHECK(p.seconds <= r.seconds + 1e-9);
    if (!std::isnan(p.bound)) CHECK(p.bound >= p.objective - 1e-6);
  }
  CHECK(seen.back().objective == doctest::Approx(r.objective).epsilon(1e-9));
}

TEST_CASE_TEMPLATE("milp backend: an exception from the callback propagates" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  const auto m = multi_knapsack(80, 4, 3);
  throwing_observer thrower;
  const solver_options options{.node_limit = 1000, .observer = thrower};
  CHECK_THROWS_WITH_AS((void)B{}.solve(m, options), "stop here", std::runtime_error);
  // The backend is still usable afterwards.
  const auto r = B{}.solve(multi_knapsack(20, 2, 3), {});
  CHECK(r.status == solve_status::optimal);
}

// Time-limit accuracy is a speed claim: bench_solvers measures it (docs/solvers.md). Tests stop
// searches with the counted node_limit, which gives the same answer on any machine and load.
TEST_CASE_TEMPLATE("milp backend: the node limit stops the search with a valid incumbent" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  const auto m = multi_knapsack(250, 10, 7);
  // Too hard to prove in 20 nodes: the limit stops the search, with the best solution found.
  const auto r = B{}.solve(m, {.node_limit = 20});
  REQUIRE(r.status == solve_status::feasible);
  check_solution(m, r);
  CHECK(std::isfinite(r.bound));
  CHECK(r.bound > r.objective);  // maximize: a gap is left
  // Counted, so repeatable: the same incumbent again.
  const auto again = B{}.solve(m, {.node_limit = 20});
  REQUIRE(again.status == solve_status::feasible);
  CHECK(again.values == r.values);
  // A limit no search reaches changes nothing on a model solved at the root.
  const auto small = multi_knapsack(12, 2, 3);
  const auto free_run = B{}.solve(small, {});
  const auto limited = B{}.solve(small, {.node_limit = 1000000});
  REQUIRE(free_run.status == solve_status::optimal);
  CHECK(limited.status == solve_status::optimal);
  CHECK(limited.objective == doctest::Approx(free_run.objective));
  // With a valid start, a search stopped at once still returns at least the start.
  auto with_start = m;
  with_start.start = greedy_start(m);
  const auto stopped = B{}.solve(with_start, {.node_limit = 1});
  REQUIRE(has_solution(stopped.status));
  check_solution(with_start, stopped);
  CHECK(stopped.objective >= with_start.objective_value(*with_start.start) - 1e-9);
}

TEST_CASE_TEMPLATE("milp backend: an expired time limit returns without a solve; huge limits are none" * doctest::skip(no_real_milp_backend), B,
                   MEMSCHED_REAL_MILP_BACKENDS) {
  auto m = multi_knapsack(250, 10, 7);
  for (double limit : {0.0, -1.0, std::nan("")}) {
    CAPTURE(limit);
    const solver_options expired{.time_limit = std::chrono::duration<double>(limit)};
    const auto r = B{}.solve(m, expired);
    CHECK(r.status == solve_status::time_limit);
    CHECK(r.values.empty());
    const auto lp = B{}.solve_relaxation(m, expired);
    CHECK(lp.status == solve_status::time_limit);
    CHECK(lp.values.empty());
  }
  // With a valid start that start comes back, not proven.
  auto with_start = m;
  with_start.start = greedy_start(m);
  const auto s = B{}.solve(with_start, {.time_limit = std::chrono::duration<double>(0)});
  REQUIRE(s.status == solve_status::feasible);
  CHECK(s.values == *with_start.start);
  // Huge and infinite limits are none: the answer without a limit.
  const auto small = multi_knapsack(15, 2, 21);
  const auto free_run = B{}.solve(small, {});
  REQUIRE(free_run.status == solve_status::optimal);
  for (double limit : {1e12, std::numeric_limits<double>::infinity()}) {
    const auto r = B{}.solve(small, {.time_limit = std::chrono::duration<double>(limit)});
    CHECK(r.status == solve_status::optimal);
    CHECK(r.values == free_run.values);
    const auto lp = B{}.solve_relaxation(small, {.time_limit = std::chrono::duration<double>(limit)});
    CHECK(lp.status == solve_status::optimal);
  }
}

TEST_CASE_TEMPLATE("milp backend: relative gap stops early with a proven gap" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  const auto m = multi_knapsack(250, 10, 7);
  // Too hard to prove optimal quickly (see the node-limit case), easy within 5%.
  const auto r = B{}.solve(m, {.relative_gap = 0.05});
  REQUIRE(r.status == solve_status::optimal);
  check_solution(m, r, 0.05);
  REQUIRE(std::isfinite(r.bound));
  CHECK((r.bound - r.objective) / r.objective <= 0.05 + 1e-9);
}

TEST_CASE_TEMPLATE("milp backend: deterministic results" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  const auto m = multi_knapsack(15, 2, 21);
  const auto a = B{}.solve(m, {});
  const auto b = B{}.solve(m, {});
  REQUIRE(a.status == solve_status::optimal);
  REQUIRE(b.status == solve_status::optimal);
  CHECK(a.objective == b.objective);
  CHECK(a.values == b.values);
  CHECK(a.objective == doctest::Approx(B{}.solve(m, {}).objective));
}

TEST_CASE_TEMPLATE("milp backend: solves from two threads at once" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  const auto m = multi_knapsack(15, 2, 21);
  const auto expected = B{}.solve(m, {});
  REQUIRE(expected.status == solve_status::optimal);
  solver_result r1, r2;
  std::thread t1([&] { r1 = B{}.solve(m, {}); });
  std::thread t2([&] { r2 = B{}.solve(m, {}); });
  t1.join();
  t2.join();
  CHECK(r1.status == solve_status::optimal);
  CHECK(r2.status == solve_status::optimal);
  CHECK(r1.objective == doctest::Approx(expected.objective));
  CHECK(r2.objective == doctest::Approx(expected.objective));
}

TEST_CASE_TEMPLATE("milp backend: silent unless verbose" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  auto m = multi_knapsack(60, 3, 9);
  m.start = greedy_start(m);
  milp_model infeasible;
  infeasible.add_integer(0, 5, 1);
  infeasible.add_greater_equal({{0, 1}}, 7);
  milp_model bad_start;  // a start that violates a row: ignored without a word
  bad_start.sense = objective_sense::maximize;
  bad_start.add_integer(0, 10, 1);
  bad_start.add_less_equal({{0, 2}}, 7);
  bad_start.start = std::vector<double>{10};
  milp_model unbounded;
  unbounded.add_continuous(-infinity, 0, 1);
  unbounded.add_integer(0, infinity, -1);
  const std::string quiet = captured_output([&] {
    (void)B{}.solve(m, {.node_limit = 100});
    (void)B{}.solve_relaxation(m, {});
    (void)B{}.solve(infeasible, {});
    (void)B{}.solve(bad_start, {});
    (void)B{}.solve(unbounded, {});
    (void)B{}.solve_relaxation(unbounded, {});
  });
  CHECK_MESSAGE(quiet.empty(), quiet.substr(0, 2000));
  const std::string loud = captured_output([&] { (void)B{}.solve(m, {.verbosity = 1, .node_limit = 100}); });
  CHECK(!loud.empty());
}

TEST_CASE_TEMPLATE("milp backend: threads option" * doctest::skip(no_real_milp_backend), B, MEMSCHED_REAL_MILP_BACKENDS) {
  const auto m = multi_knapsack(15, 2, 21);
  const auto one = B{}.solve(m, {});
  const auto caller = std::this_thread::get_id();
  incumbent_log log;
  const auto two = B{}.solve(m, {.threads = 2, .observer = log});
  bool other_thread = false;
  for (const auto& id : log.threads) other_thread |= id != caller;
  REQUIRE(one.status == solve_status::optimal);
  REQUIRE(two.status == solve_status::optimal);
  check_solution(m, two);
  CHECK(two.objective == doctest::Approx(one.objective));
  CHECK(!other_thread);  // callbacks come from the solving thread
}

#ifdef MEMSCHED_HAVE_CBC
namespace {
/// Dies from SIGSEGV without a core file.
[[noreturn]] void crash_now() {
  struct rlimit no_core {};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(SIGSEGV, SIG_DFL);
  ::raise(SIGSEGV);
  ::_exit(70);
}

/// The misbehaviour of the solver's child process for one scope (the crash injection of these
/// tests, through the child-only hook of detail::run_isolated): "start" dies from SIGSEGV before
/// solving, "incumbent" right after sending its first incumbent, "hang" stops responding then.
struct crash_hook {
  static inline std::string_view mode;
  explicit crash_hook(std::string_view m) {
    mode = m;
    detail::isolated_child_test_hook() = [](std::string_view event) {
      if (mode == "start" && event == "start") crash_now();
      if (mode == "incumbent" && event == "incumbent") crash_now();
      if (mode == "hang" && event == "incumbent")
        for (;;) ::pause();
    };
  }
  ~crash_hook() { detail::isolated_child_test_hook() = nullptr; }
  crash_hook(const crash_hook&) = delete;
  crash_hook& operator=(const crash_hook&) = delete;
};
}  // namespace

TEST_CASE("cbc backend: a crash of the CBC process is caught") {
  static_assert(cbc_backend{}.isolate_process);
  auto m = multi_knapsack(250, 10, 11);
  SUBCASE("after the first incumbent: that incumbent comes back") {
    incumbent_log log;
    const auto& seen = log.seen;
    solver_result r;
    {
      const crash_hook hook("incumbent");
      r = cbc_backend{}.solve(m, {.time_limit = 5s, .observer = log});
    }
    REQUIRE(seen.size() == 1);  // the child died right after sending it
    REQUIRE(r.status == solve_status::feasible);
    check_solution(m, r);
    CHECK(r.objective == doctest::Approx(seen[0].objective).epsilon(1e-9));
    CHECK_MESSAGE(r.message.find("crashed") != std::string::npos, r.message);
    CHECK(r.seconds < 4);  // no wait for the deadline
  }
  SUBCASE("before any incumbent: error, or the valid start") {
    const crash_hook hook("start");
    const auto r = cbc_backend{}.solve(m, {.time_limit = 5s});
    CHECK(r.status == solve_status::error);
    CHECK(r.values.empty());
    CHECK_MESSAGE(r.message.find("crashed (signal 11 SIGSEGV)") != std::string::npos, r.message);
    m.start = greedy_start(m);
    const auto s = cbc_backend{}.solve(m, {.time_limit = 5s});
    REQUIRE(s.status == solve_status::feasible);
    CHECK(s.values == *m.start);
    CHECK(s.message.find("crashed") != std::string::npos);
  }
  SUBCASE("a child that hangs is killed after the deadline") {
    const crash_hook hook("hang");
    // The limit leaves the child time to send its first incumbent (then it hangs) on a loaded
    // machine under the sanitizers: 0.3 s was not always enough there.
    const double limit = 2.0;
    const auto r = cbc_backend{}.solve(m, {.time_limit = std::chrono::duration<double>(limit)});
    REQUIRE(r.status == solve_status::feasible);
    check_solution(m, r);
    CHECK_MESSAGE(r.message.find("killed") != std::string::npos, r.message);
    CHECK(r.seconds >= limit + detail::backend_overrun_allowance(limit) - 0.01);  // deadline + grace, then killed
    CHECK(r.seconds < limit + detail::backend_overrun_allowance(limit) + 1.5);
  }
  SUBCASE("the in-process backend ignores the hook") {
    const crash_hook hook("incumbent");
    const auto r = cbc_backend{.isolate_process = false}.solve(multi_knapsack(15, 2, 21), {});
    CHECK(r.status == solve_status::optimal);
  }
  // The process is still fine, and no child is left behind (each solve reaps its child before
  // it returns).
  const auto r = cbc_backend{}.solve(multi_knapsack(15, 2, 21), {});
  CHECK(r.status == solve_status::optimal);
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);
}
#endif
