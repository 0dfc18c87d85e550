// What every MILP backend's result goes through (detail/backend_support.hpp): a bound on the wrong
// side of the objective is no bound. CBC stopped or killed at its deadline under load has reported
// a "best possible" far above its incumbent on a minimisation; no solver is needed to check the rule.

#include <memsched/core/errors.hpp>
#include <memsched/solver/detail/backend_support.hpp>
#include <memsched/solver/solver_options.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace memsched;

namespace {

struct recording_observer {
  std::vector<double> objectives, bounds;
  void on_incumbent(double, double objective, double bound) {
    objectives.push_back(objective);
    bounds.push_back(bound);
  }
};

// One binary variable, the other variables' part of the objective in the offset: any objective
// value can be given to finish() without a solver.
milp_model one_variable(objective_sense sense) {
  milp_model m;
  m.sense = sense;
  (void)m.add_binary(1);
  return m;
}

// finish() on a result with `status`, objective 10 and `bound`; the bound it keeps and the one
// the observer received.
std::pair<double, double> finished(objective_sense sense, solve_status status, double bound) {
  const milp_model m = one_variable(sense);
  recording_observer observer;
  const solver_options options{.observer = observer};
  detail::solve_session session(m, options);
  solver_result r;
  r.status = status;
  r.objective = 10;
  r.bound = bound;
  session.finish(r);
  REQUIRE(observer.bounds.size() == 1);
  CHECK(observer.objectives[0] == 10);
  return {r.bound, observer.bounds[0]};
}

}  // namespace

TEST_CASE("backend support: a bound beyond the objective is dropped, one on its side is kept") {
  using detail::consistent_bound;
  const auto minimize = objective_sense::minimize, maximize = objective_sense::maximize;
  CHECK(consistent_bound(9, 10, minimize) == 9);
  CHECK(consistent_bound(10 + 5e-6, 10, minimize) == 10 + 5e-6);  // within 1e-6 of |objective|
  CHECK(std::isnan(consistent_bound(10.1, 10, minimize)));
  CHECK(std::isnan(consistent_bound(1.08e17, 1.1e10, minimize)));  // what CBC reported in CI
  CHECK(consistent_bound(11, 10, maximize) == 11);
  CHECK(std::isnan(consistent_bound(9.9, 10, maximize)));
  CHECK(std::isnan(consistent_bound(std::nan(""), 10, minimize)));
  CHECK(std::isnan(consistent_bound(INFINITY, 10, minimize)));
  CHECK(consistent_bound(3, std::nan(""), minimize) == 3);  // no objective to compare with

  for (const auto sense : {minimize, maximize}) {
    const double right = sense == minimize ? 9 : 11, wrong = sense == minimize ? 12 : 8;
    INFO((sense == minimize ? "minimize" : "maximize"));
    auto [kept, reported] = finished(sense, solve_status::feasible, right);
    CHECK(kept == right);
    CHECK(reported == right);
    std::tie(kept, reported) = finished(sense, solve_status::feasible, wrong);
    CHECK(std::isnan(kept));
    CHECK(std::isnan(reported));
    // Proven optimal: the optimum is its own bound.
    std::tie(kept, reported) = finished(sense, solve_status::optimal, wrong);
    CHECK(kept == 10);
    CHECK(reported == 10);
  }
}

TEST_CASE("check_solver_options: only a NaN relative_gap is an option_error, named with its member's path") {
  try {
    memsched::detail::check_solver_options("some_plan", solver_options{.relative_gap = std::nan("")});
    FAIL("nothing thrown");
  } catch (const option_error& e) {
    CHECK(e.option() == "solver.relative_gap");
    CHECK(std::string(e.what()) == "some_plan: solver.relative_gap must be a number (not NaN)");
  }
  // Negative gaps count as 0, NaN or negative time limits as 0, threads 0 as the hardware's.
  const double nan = std::nan("");
  for (double gap : {-1.0, 0.0, 1e-6, 1.0})
    CHECK_NOTHROW(memsched::detail::check_solver_options("some_plan", solver_options{.relative_gap = gap}));
  for (double limit : {nan, -1.0, 0.0})
    CHECK_NOTHROW(memsched::detail::check_solver_options("some_plan", solver_options{.time_limit = std::chrono::duration<double>(limit),
                                                                                      .threads = 0, .node_limit = 0}));
}
