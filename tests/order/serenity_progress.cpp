// serenity_order's progress reports (serenity_options::observer): every incumbent is a better
// order of the whole graph than the one before, every bound a better proven lower bound, the last
// incumbent is the result's peak, and the reports do not change the result.

#include <memsched/graph/json_io.hpp>
#include <memsched/graph/randwire.hpp>
#include <memsched/order/peak_lower_bound.hpp>
#include <memsched/order/serenity.hpp>

#include "../support/random_dag.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

struct recorder {
  struct incumbent {
    double seconds, value, bound;
  };
  std::vector<incumbent> incumbents;
  std::vector<std::pair<double, double>> bounds;
  std::thread::id caller = std::this_thread::get_id();
  bool concurrent = false;
  int inside = 0;
  bool other_thread = false;

  void on_incumbent(double s, double v, double b) {
    enter();
    incumbents.push_back({s, v, b});
    --inside;
  }
  void on_bound(double s, double b) {
    enter();
    bounds.emplace_back(s, b);
    --inside;
  }
  void enter() {
    concurrent |= ++inside > 1;
    other_thread |= std::this_thread::get_id() != caller;
  }
};

// Checks the reports of one run against its result; returns the number of incumbents.
std::size_t check_reports(const recorder& r, const order_result& result, bool threads_allowed) {
  REQUIRE_FALSE(r.incumbents.empty());
  REQUIRE_FALSE(r.bounds.empty());
  CHECK_FALSE(r.concurrent);
  if (!threads_allowed) CHECK_FALSE(r.other_thread);
  for (std::size_t k = 1; k < r.incumbents.size(); ++k) {
    CHECK(r.incumbents[k].value < r.incumbents[k - 1].value);
    CHECK(r.incumbents[k].seconds >= r.incumbents[k - 1].seconds);
  }
  for (std::size_t k = 1; k < r.bounds.size(); ++k) CHECK(r.bounds[k].second > r.bounds[k - 1].second);
  for (const auto& i : r.incumbents) {
    CHECK(std::isfinite(i.bound));
    CHECK(i.bound <= i.value);
    CHECK(i.value >= static_cast<double>(result.peak_bytes));
  }
  CHECK(r.incumbents.back().value == static_cast<double>(result.peak_bytes));
  for (const auto& b : r.bounds) CHECK(b.second <= static_cast<double>(result.peak_bytes));
  if (result.status == solve_status::optimal) CHECK(r.bounds.back().second == static_cast<double>(result.peak_bytes));
  return r.incumbents.size();
}

}  // namespace

TEST_CASE("serenity_order reports better orders and bounds, ending with the result (random graphs)") {
  std::size_t runs_with_several = 0, runs = 0;
  for (std::uint64_t seed = 0; seed < 120; ++seed) {
    memory_graph_data d = random_dag(6 + seed % 14, 0.25, seed, 100, seed % 2 == 1);
    if (seed % 3 == 0) d = with_random_outputs(std::move(d), seed);
    const memory_graph g(std::move(d));
    for (const serenity_options base : {serenity_options{}, serenity_options{.divide = false, .beam_width = 0},
                                        serenity_options{.soft_budget = soft_budget_mode::bounded},
                                        serenity_options{.decision_budget = 0}}) {
      CAPTURE(seed);
      recorder r;
      serenity_options o = base;
      o.observer = r;
      const order_result with = serenity_order(g, o);
      const order_result without = serenity_order(g, base);
      CHECK(with.order == without.order);
      CHECK(with.peak_bytes == without.peak_bytes);
      CHECK(with.status == without.status);
      runs_with_several += check_reports(r, with, false) > 1;
      ++runs;
    }
  }
  // Most random graphs are settled by a baseline (one report); some must show an improvement.
  CHECK(runs_with_several > 0);
  CHECK(runs == 480);
}

TEST_CASE("serenity_order progress on random_layered_n250: the search improves on the baselines") {
  const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/moccasin/random_layered_n250.json"));
  recorder r;
  const order_result result = serenity_order(g, serenity_options{.observer = r});
  REQUIRE(result.status == solve_status::optimal);
  CHECK(result.peak_bytes == 105170);
  CHECK(check_reports(r, result, false) >= 2);
  CHECK(r.bounds.size() >= 2);  // the decision searches raise the bound to the optimum
  CHECK(r.incumbents.front().value >= 105170);
}

TEST_CASE("serenity_order progress with segments solved on two threads describes the whole graph") {
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const memory_graph g = make_memory_graph(make_randwire(randwire_options{.seed = seed}));
    recorder one, two;
    const order_result a = serenity_order(g, serenity_options{.threads = 1, .observer = one});
    const order_result b = serenity_order(g, serenity_options{.threads = 2, .observer = two});
    CHECK(a.order == b.order);
    check_reports(one, a, false);
    check_reports(two, b, true);
    // Every incumbent is the peak of a whole order: at least the whole graph's simple bound.
    for (const auto& i : two.incumbents) CHECK(i.value >= static_cast<double>(peak_lower_bound(g)));
  }
}

TEST_CASE("serenity_order reports one incumbent and its bound when a baseline meets the simple bound") {
  // A chain: Kahn's order is optimal and meets peak_lower_bound, so nothing is searched.
  memory_graph_data d;
  d.num_nodes = 3;
  d.edges = {{0, 1}, {1, 2}};
  d.bytes = {5, 7, 3};
  d.workspace = {0, 0, 0};
  d.cost = {1, 1, 1};
  const memory_graph g(std::move(d));
  recorder r;
  const order_result result = serenity_order(g, serenity_options{.observer = r});
  CHECK(result.peak_bytes == 12);
  REQUIRE(r.incumbents.size() == 1);
  CHECK(r.incumbents[0].value == 12);
  CHECK(r.incumbents[0].bound == 12);
  REQUIRE(r.bounds.size() == 1);
  CHECK(r.bounds[0].second == 12);
}
