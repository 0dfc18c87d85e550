// The backend-neutral CP model: input checks and the evaluation of assignments (no backend needed).

#include <memsched/solver/cp_model.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

using namespace memsched;

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
