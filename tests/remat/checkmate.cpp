#include <memsched/remat/checkmate.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#ifdef MEMSCHED_HAVE_CBC
#include <memsched/solver/backends/cbc.hpp>
#endif
#ifdef MEMSCHED_HAVE_GLPK
#include <memsched/solver/backends/glpk.hpp>
#endif

#include "../support/brute_force_plans.hpp"
#include "../support/observer_recorder.hpp"
#include "../support/option_error_of.hpp"
#include "../support/random_dag.hpp"
#include "../support/random_cases.hpp"
#include "../support/training_chain.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace memsched;
using namespace memsched::testing;

namespace {

std::int64_t min_possible(const memory_graph& g) {
  std::int64_t lb = 0;
  for (std::size_t v = 0; v < g.size(); ++v) {
    std::int64_t need = g.bytes(v) + g.workspace(v);
    for (auto p : g.predecessors(v)) need += g.bytes(p);
    lb = std::max(lb, need);
  }
  return lb;
}

/// Budgets from the no-remat peak down to below anything feasible.
std::vector<std::int64_t> budgets_for(const memory_graph& g, const std::vector<std::size_t>& order) {
  const std::int64_t peak = simulate_order(g, order).peak_bytes, lb = min_possible(g);
  std::vector<std::int64_t> b{peak, lb + (peak - lb) * 2 / 3, lb + (peak - lb) / 3, lb, lb - 1};
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

/// The MILP optimum by enumerating every R and S of a tiny model (FREE and U follow from them).
double enumerate_model_optimum(const memory_graph& g, const checkmate_model& cm) {
  const std::size_t n = cm.order.size();
  std::vector<std::pair<std::size_t, std::size_t>> cells;  // (t, i), i < t
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t i = 0; i < t; ++i) cells.emplace_back(t, i);
  const std::size_t bits = 2 * cells.size();
  REQUIRE(bits <= 20);
  double best = INFINITY;
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << bits); ++mask) {
    std::vector<std::vector<char>> r(n), s(n + 1);
    for (std::size_t t = 0; t < n; ++t) {
      r[t].assign(t + 1, 0);
      r[t][t] = 1;
      s[t].assign(n, 0);
    }
    s[n].assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) s[n][i] = cm.output[i];
    for (std::size_t c = 0; c < cells.size(); ++c) {
      r[cells[c].first][cells[c].second] = mask >> (2 * c) & 1;
      s[cells[c].first][cells[c].second] = mask >> (2 * c + 1) & 1;
    }
    const auto x = memsched::detail::complete_checkmate_assignment(g, cm, r, s);
    if (cm.model.first_violation(x)) continue;
    best = std::min(best, cm.cost_of_objective(cm.model.objective_value(x)));
    // Every feasible assignment decodes into a valid plan within the budget that costs no more.
    const auto plan = decode_checkmate_solution(g, cm, x);
    const auto sim = simulate_plan(g, plan);
    CHECK(sim.peak_bytes <= cm.budget_units * cm.memory_unit);
    CHECK(sim.total_cost <= cm.cost_of_objective(cm.model.objective_value(x)) + 1e-9);
  }
  return best;
}

}  // namespace

TEST_CASE("brute force plans: staged optimum >= unrestricted optimum, both valid") {
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const memory_graph g(random_dag(2 + seed % 5, 0.45, seed));
    const auto order = g.topological_order();
    const std::vector<std::size_t> o(order.begin(), order.end());
    for (std::int64_t b : budgets_for(g, o)) {
      const auto free_plan = brute_force_min_cost_plan(g, b);
      const auto staged = brute_force_min_cost_staged_plan(g, o, b);
      if (!has_solution(staged.status)) continue;
      REQUIRE(has_solution(free_plan.status));
      CHECK(free_plan.cost <= staged.cost + 1e-9);
      for (const auto* r : {&free_plan, &staged}) {
        const auto sim = simulate_plan(g, r->plan);
        CHECK(sim.peak_bytes <= b);
        CHECK(sim.total_cost == doctest::Approx(r->cost));
      }
    }
  }
}

TEST_CASE("brute force plans: a chain that must recompute, by hand") {
  // 0 -> 1 -> 2 and 0 -> 2 ... a diamond 0 -> {1, 2} -> 3 with a big 0: budget forces recomputing 0.
  memory_graph_data d{.num_nodes = 4, .edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}}, .bytes = {10, 10, 10, 1}, .cost = {5, 1, 1, 1}};
  const memory_graph g(d);
  // Without recomputation: computing 2 holds 0, 1, 2 = 30; computing 3 holds 1, 2, 3 = 21.
  CHECK(brute_force_min_cost_plan(g, 30).cost == 8);
  // With 21 the only way would be to compute 1 and 2 without 0 resident: impossible.
  CHECK(brute_force_min_cost_plan(g, 29).status == solve_status::infeasible);
}

TEST_CASE("checkmate model: enumerating R and S finds the staged brute-force optimum") {
  int feasible = 0, infeasible = 0;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const std::size_t n = 2 + seed % 3;  // up to 4 vertices: 2^12 assignments
    auto d = random_dag(n, 0.5, seed + 100, 50, seed % 4 == 3);
    if (seed % 5 == 4) d.outputs = std::vector<std::size_t>{0};
    const memory_graph g(d);
    memory_graph gg(d);
    for_each_topological_order(g, [&](const std::vector<std::size_t>& order) {
      for (std::int64_t b : budgets_for(g, order)) {
        const auto cm = build_checkmate_model(g, b, order);
        const double model_opt = enumerate_model_optimum(g, cm);
        const auto staged = brute_force_min_cost_staged_plan(g, order, b);
        if (has_solution(staged.status)) {
          ++feasible;
          CHECK(model_opt == doctest::Approx(staged.cost));
        } else {
          ++infeasible;
          CHECK(std::isinf(model_opt));
        }
      }
    });
  }
  CHECK(feasible > 50);
  CHECK(infeasible > 10);
}

TEST_CASE("checkmate model: memory scaled by the gcd, costs by a power of two") {
  memory_graph_data d{.num_nodes = 3, .edges = {{0, 1}, {1, 2}}, .bytes = {40, 80, 120}, .cost = {3e12, 1, 0}};
  const memory_graph g(d);
  const std::vector<std::size_t> order{0, 1, 2};
  const auto cm = build_checkmate_model(g, 199, order);
  CHECK(cm.memory_unit == 40);
  CHECK(cm.budget_units == 4);
  CHECK(cm.cost_scale * 3e12 >= 1024);
  CHECK(cm.cost_scale * 3e12 < 2048);
  CHECK(cm.R[2][2] == checkmate_model::constant);
  // R: 0 + 1 + 2, S: same; U: 1 + 2 + 3; FREE: stage 2 has edge (0, 1) with consumer 1 < 2.
  CHECK(cm.model.num_variables() == 3 + 3 + 6 + 1);
  CHECK_THROWS_AS((void)build_checkmate_model(g, 100, std::vector<std::size_t>{1, 0, 2}), invalid_order);
  CHECK_THROWS_AS((void)build_checkmate_model(g, -1, order), std::invalid_argument);
}

TEST_CASE("checkmate encoder: staged optimal plans are feasible assignments of the same cost; decoding round-trips") {
  for (std::uint64_t seed = 0; seed < 25; ++seed) {
    const std::size_t n = 3 + seed % 5;  // up to 7
    const memory_graph g(random_dag(n, 0.4, seed + 7, 100, seed % 3 == 0));
    const auto topo = g.topological_order();
    const std::vector<std::size_t> order(topo.begin(), topo.end());
    for (std::int64_t b : budgets_for(g, order)) {
      const auto staged = brute_force_min_cost_staged_plan(g, order, b);
      if (!has_solution(staged.status)) continue;
      const auto cm = build_checkmate_model(g, b, order);
      const auto x = encode_checkmate_plan(g, cm, staged.plan);
      REQUIRE(x);
      CHECK_MESSAGE(!cm.model.first_violation(*x), *cm.model.first_violation(*x));
      CHECK(cm.cost_of_objective(cm.model.objective_value(*x)) == doctest::Approx(staged.cost));
      const auto plan = decode_checkmate_solution(g, cm, *x);
      const auto sim = simulate_plan(g, plan);
      CHECK(sim.peak_bytes <= b);
      CHECK(sim.total_cost == doctest::Approx(staged.cost));
    }
    // A plan whose first computations follow another order does not encode.
    const auto cm = build_checkmate_model(g, 1'000'000, order);
    std::vector<std::size_t> other = order;
    bool different = false;
    for (std::size_t k = 0; k + 1 < n && !different; ++k) {
      bool edge = false;
      for (auto s : g.successors(other[k]))
        if (s == other[k + 1]) edge = true;
      if (!edge) {
        std::swap(other[k], other[k + 1]);
        different = true;
      }
    }
    if (different) CHECK(!encode_checkmate_plan(g, cm, plan_from_computes(g, std::span<const std::size_t>(other))));
  }
}

#if defined(MEMSCHED_HAVE_CBC) || defined(MEMSCHED_HAVE_GLPK)

namespace {

template <class Backend>
void check_milp_against_brute_force(const Backend& backend, std::uint64_t seeds) {
  int feasible = 0, infeasible = 0;
  for (std::uint64_t seed = 0; seed < random_cases(seeds); ++seed) {
    const std::size_t n = 3 + seed % 5;  // 3..7
    auto d = random_dag(n, 0.4, seed + 1000, 100, seed % 4 == 1);
    if (seed % 6 == 5) d.outputs = std::vector<std::size_t>{0, n - 1};
    const memory_graph g(d);
    const auto topo = g.topological_order();
    const std::vector<std::size_t> order(topo.begin(), topo.end());
    for (std::int64_t b : budgets_for(g, order)) {
      const auto staged = brute_force_min_cost_staged_plan(g, order, b);
      const auto free_plan = brute_force_min_cost_plan(g, b);
      const auto r = checkmate_milp_plan(g, b, checkmate_options{.backend = backend, .order = order});
      CAPTURE(seed);
      CAPTURE(b);
      if (!has_solution(staged.status)) {
        ++infeasible;
        CHECK(r.status == solve_status::infeasible);
        continue;
      }
      ++feasible;
      REQUIRE(r.status == solve_status::optimal);
      const auto sim = simulate_plan(g, r.plan);
      CHECK(sim.peak_bytes <= b);
      CHECK(r.peak_bytes == sim.peak_bytes);
      CHECK(r.total_cost == doctest::Approx(staged.cost));
      CHECK(free_plan.cost <= r.total_cost + 1e-9);
      REQUIRE(r.cost_bound);
      CHECK(*r.cost_bound == r.total_cost);  // a proven optimum is its own bound
    }
  }
  CHECK(feasible > static_cast<int>(random_cases(20)));
  CHECK(infeasible > static_cast<int>(random_cases(3)));
}

}  // namespace

#ifdef MEMSCHED_HAVE_CBC
TEST_CASE("checkmate_milp_plan with CBC: optimum equals the staged brute force on random DAGs up to 7 nodes") {
  check_milp_against_brute_force(cbc_backend{}, 30);
}

TEST_CASE_TEMPLATE("checkmate_milp_plan with CBC over Boost graph types, with a start plan and LNS", G, vecs_graph, lists_graph, csr_graph) {
  const auto d = random_dag(7, 0.35, 77);
  const typed_graph<G> tg(d);
  const memory_graph g(d);
  const auto topo = g.topological_order();
  const std::vector<std::size_t> order(topo.begin(), topo.end());
  // The smallest budget with a staged plan.
  std::int64_t b = 0;
  brute_force_plan staged;
  for (std::int64_t candidate : budgets_for(g, order)) {
    staged = brute_force_min_cost_staged_plan(g, order, candidate);
    b = candidate;
    if (has_solution(staged.status)) break;
  }
  REQUIRE(has_solution(staged.status));
  observer_recorder seen;
  const auto r = checkmate_milp_plan(tg.graph, b,
                                     checkmate_options{.backend = cbc_backend{},
                                                       .solver = {.time_limit = std::chrono::seconds(20), .observer = seen},
                                                       .order = order,
                                                       .start_plans = {staged.plan},
                                                       .lns_window = 3,
                                                       .lns_round_time = std::chrono::seconds(2)},
                                     tg.maps());
  CHECK(r.status == solve_status::optimal);
  CHECK(r.stats.start_source == "plan 0");
  CHECK(r.stats.backend == "cbc");
  CHECK(r.total_cost == doctest::Approx(staged.cost));
  CHECK(!seen.values.empty());
  REQUIRE(!seen.phases.empty());
  CHECK(seen.phases.front() == "starts");
  CHECK(simulate_plan(g, r.plan).peak_bytes <= b);
}
#endif

#ifdef MEMSCHED_HAVE_GLPK
TEST_CASE("checkmate_milp_plan with GLPK: optimum equals the staged brute force") { check_milp_against_brute_force(glpk_backend{}, 20); }
#endif

#endif

#ifdef MEMSCHED_HAVE_CBC
TEST_CASE("checkmate_milp_plan: a start without recomputation is optimal at once; the graph needs no order") {
  const memory_graph g(random_dag(12, 0.3, 5));
  const auto r = checkmate_milp_plan(g, g.total_bytes(), checkmate_options{.backend = cbc_backend{}, .solver = {.time_limit = std::chrono::seconds(30)}});
  CHECK(r.status == solve_status::optimal);
  CHECK(r.total_cost == doctest::Approx(g.total_cost()));
  CHECK(r.stats.lns_rounds == 0);
  CHECK(r.stats.order.size() == g.size());
  CHECK(simulate_plan(g, r.plan).peak_bytes <= g.total_bytes());
}

TEST_CASE("checkmate_milp_plan: a proven optimum is the bound, not the LP's (the training chain by hand)") {
  // At 40 bytes one recomputation (of x0) is needed and enough: cost 8, proven. The LP relaxation's
  // bound is 7.67 (CBC proves 8 from it as every cost is integral); the result's bound is the optimum.
  const memory_graph g(training_chain_data());
  const std::vector<std::size_t> order{0, 1, 2, 3, 4, 5, 6};
  const auto r = checkmate_milp_plan(g, 40, checkmate_options{.backend = cbc_backend{}, .order = order});
  REQUIRE(r.status == solve_status::optimal);
  CHECK(r.total_cost == 8);
  CHECK(brute_force_min_cost_staged_plan(g, order, 40).cost == 8);
  REQUIRE(r.cost_bound);
  CHECK(*r.cost_bound == r.total_cost);
  // Without the LP rounding start (no LP bound): CBC's own bound, also 7.67, is not reported either.
  const auto no_lp = checkmate_milp_plan(g, 40, checkmate_options{.backend = cbc_backend{}, .order = order, .lp_rounding_start = false});
  REQUIRE(no_lp.status == solve_status::optimal);
  REQUIRE(no_lp.cost_bound);
  CHECK(*no_lp.cost_bound == 8);
}

TEST_CASE("checkmate_milp_plan: each bad option is an option_error naming its field, thrown before any work") {
  const memory_graph g(training_chain_data());
  using options = checkmate_options<cbc_backend>;
  // The budget is negative too: the options are checked first.
  const auto option_of = [&](const options& o) {
    return testing::option_error_of("checkmate_milp_plan", [&] { (void)checkmate_milp_plan(g, -1, o); });
  };
  const double nan = std::nan("");
  const std::chrono::duration<double> negative(-1), not_a_number(nan);
  CHECK(option_of({.lp_rounding_fraction = -0.1}) == "lp_rounding_fraction");
  CHECK(option_of({.lp_rounding_fraction = 1.5}) == "lp_rounding_fraction");
  CHECK(option_of({.lp_rounding_fraction = nan}) == "lp_rounding_fraction");
  CHECK(option_of({.lns_fraction = -0.1}) == "lns_fraction");
  CHECK(option_of({.lns_fraction = 1.5}) == "lns_fraction");
  CHECK(option_of({.lns_fraction = nan}) == "lns_fraction");
  CHECK(option_of({.lns_round_time = negative}) == "lns_round_time");
  CHECK(option_of({.lns_round_time = not_a_number}) == "lns_round_time");
  CHECK(option_of({.min_full_solve_time = negative}) == "min_full_solve_time");
  CHECK(option_of({.min_full_solve_time = not_a_number}) == "min_full_solve_time");
  CHECK(option_of({.solver = {.relative_gap = nan}}) == "solver.relative_gap");
  // The boundary values are valid.
  const std::chrono::duration<double> zero(0);
  CHECK_NOTHROW(check_checkmate_options(options{.lp_rounding_fraction = 0, .lns_fraction = 0, .lns_round_time = zero, .min_full_solve_time = zero}));
  CHECK_NOTHROW(check_checkmate_options(options{.solver = {.relative_gap = -1}, .lp_rounding_fraction = 1, .lns_fraction = 1}));
  const auto r = checkmate_milp_plan(g, 40, options{.lp_rounding_fraction = 1, .lns_fraction = 1, .min_full_solve_time = zero});
  CHECK(r.status == solve_status::optimal);
  CHECK(r.total_cost == 8);
}

TEST_CASE("checkmate_milp_plan: infeasible budgets say so") {
  const memory_graph g(memory_graph_data{.num_nodes = 3, .edges = {{0, 2}, {1, 2}}, .bytes = {10, 10, 10}});
  const auto r = checkmate_milp_plan<cbc_backend>(g, 29);
  CHECK(r.status == solve_status::infeasible);
  CHECK(!r.message.empty());
  CHECK(r.plan.steps.empty());
}
#endif

TEST_CASE("checkmate_model_size counts exactly what build_checkmate_model builds") {
  std::size_t models = 0;
  for (std::uint64_t seed = 0; seed < 80; ++seed) {
    CAPTURE(seed);
    const std::size_t n = 1 + seed % 23;
    auto d = seed % 3 == 0 ? random_training_dag(1 + n / 2, 0.3, seed) : with_random_outputs(random_dag(n, 0.05 + 0.1 * (seed % 5), seed, 100, seed % 2 == 0), seed);
    if (seed % 4 == 1) d.bytes[0] = 0;  // rows without the empty tensor's terms
    const memory_graph g(d);
    const auto topo = g.topological_order();
    for (const auto& o : {std::vector<std::size_t>(topo.begin(), topo.end()), memsched::detail::checkmate_best_basic_order(g)}) {
      for (bool scale : {true, false}) {
        const checkmate_model_options mo{.scale_memory = scale};
        const checkmate_model cm = build_checkmate_model(g, g.total_bytes(), o, mo);
        const model_size_estimate e = checkmate_model_size(g, o, "cbc", false, std::numeric_limits<std::uint64_t>::max(), mo);
        REQUIRE(e.complete);
        CHECK(e.variables == cm.model.num_variables());
        CHECK(e.constraints == cm.model.num_constraints());
        CHECK(e.nonzeros == cm.model.num_nonzeros());
        CHECK(e.model_bytes > e.nonzeros * sizeof(linear_term));
        CHECK(e.backend_bytes > 0);
        ++models;
      }
    }
  }
  CHECK(models == 320);
}

TEST_CASE("checkmate_model_size stops early over a cap, with lower bounds") {
  const memory_graph g(random_dag(60, 0.1, 9));
  const auto topo = g.topological_order();
  const std::vector<std::size_t> order(topo.begin(), topo.end());
  const model_size_estimate full = checkmate_model_size(g, order, "cbc");
  const model_size_estimate part = checkmate_model_size(g, order, "cbc", false, full.bytes() / 10);
  CHECK(full.complete);
  CHECK(!part.complete);
  CHECK(part.bytes() > full.bytes() / 10);
  CHECK(part.variables < full.variables);
  CHECK(part.nonzeros < full.nonzeros);
}

#ifdef MEMSCHED_HAVE_CBC
TEST_CASE("checkmate_milp_plan and checkmate_lp_plan refuse a model over max_bytes, naming both sizes") {
  const memory_graph g(random_dag(30, 0.2, 4));
  const auto topo = g.topological_order();
  const std::vector<std::size_t> order(topo.begin(), topo.end());
  const model_size_estimate e = checkmate_model_size(g, order, "cbc");
  REQUIRE(e.bytes() > 100000);  // a 30-vertex model takes more than 100 kB: the cap below is under it
  const std::int64_t budget = simulate_order(g, order).peak_bytes * 3 / 4;
  const auto r = checkmate_milp_plan(g, budget, checkmate_options{.backend = cbc_backend{}, .order = order, .max_bytes = 100000});
  CHECK(r.status == solve_status::no_solution);
  CHECK(r.plan.steps.empty());
  CHECK(r.message.find("checkmate_milp_plan: the model would need") != std::string::npos);
  CHECK(r.message.find("over the memory cap of 100 kB (max_bytes)") != std::string::npos);
  // The count stopped once over the cap: lower bounds, said as such.
  CHECK(r.message.find("more than") != std::string::npos);
  CHECK(r.message.find("at least " + std::to_string(r.stats.variables) + " variables") != std::string::npos);
  CHECK(r.stats.variables > 0);
  CHECK(r.stats.variables < e.variables);
  const auto lp = checkmate_lp_plan(g, budget, checkmate_lp_options{.backend = cbc_backend{}, .order = order, .max_bytes = 100000});
  CHECK(lp.status == solve_status::no_solution);
  CHECK(lp.message.find("checkmate_lp_plan: the model would need") != std::string::npos);
  CHECK(lp.message.find("(max_bytes)") != std::string::npos);
  // Under a cap above the estimate the same call builds and solves the model.
  const auto ok = checkmate_milp_plan(
      g, budget, checkmate_options{.backend = cbc_backend{}, .solver = {.node_limit = 200}, .order = order, .max_bytes = 4 * e.bytes()});
  CHECK(ok.status != solve_status::no_solution);
  CHECK(ok.stats.variables == e.variables);
}
#endif

TEST_CASE("default_max_bytes is half the physical memory at most, and positive") {
  const std::uint64_t cap = default_max_bytes();
  CHECK(cap > 0);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) CHECK(cap <= static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 2);
  CHECK(format_bytes(999) == "999 bytes");
  CHECK(format_bytes(12'300'000'000) == "12.3 GB");
  CHECK(format_bytes(100000) == "100 kB");
}

TEST_CASE("set_checkmate_budget gives the model a new build gives, bit for bit") {
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const memory_graph g(random_dag(9, 0.3, seed, 100, true));
    const auto topo = g.topological_order();
    const std::vector<std::size_t> order(topo.begin(), topo.end());
    const std::int64_t peak = simulate_order(g, order).peak_bytes;
    checkmate_model cm = build_checkmate_model(g, peak, order);
    CHECK(!cm.budget_rows.empty());  // workspaces: rows with the budget
    for (std::int64_t b : {peak * 9 / 10, peak / 2, std::int64_t{0}, peak * 2}) {
      CAPTURE(seed);
      CAPTURE(b);
      memsched::detail::set_checkmate_budget(cm, b);
      const checkmate_model fresh = build_checkmate_model(g, b, order);
      CHECK(cm.budget_units == fresh.budget_units);
      CHECK(cm.budget_rows == fresh.budget_rows);
      REQUIRE(cm.model.num_variables() == fresh.model.num_variables());
      REQUIRE(cm.model.num_constraints() == fresh.model.num_constraints());
      for (std::size_t i = 0; i < cm.model.num_variables(); ++i) {
        CHECK(cm.model.variables()[i].lower == fresh.model.variables()[i].lower);
        CHECK(cm.model.variables()[i].upper == fresh.model.variables()[i].upper);
      }
      std::size_t differing = 0;
      for (std::size_t r = 0; r < cm.model.num_constraints(); ++r) {
        const auto &a = cm.model.constraints()[r], &f = fresh.model.constraints()[r];
        differing += a.lower != f.lower || a.upper != f.upper || a.terms.size() != f.terms.size();
      }
      CHECK(differing == 0);
    }
  }
}

namespace {

/// Time limits of checkmate_milp_plan with `backend`: an expired limit (0, negative, NaN) returns
/// without a solve, with a plan only when one was found (here: the plan without recomputation,
/// which fits the budget of its own peak and is optimal as such); huge limits mean none.
template <class Backend>
void check_milp_limits(const Backend& backend) {
  std::size_t start_plans_checked = 0;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const memory_graph g(random_dag(10, 0.3, 40 + seed));
    const auto topo = g.topological_order();
    const std::vector<std::size_t> order(topo.begin(), topo.end());
    const std::int64_t peak = simulate_order(g, order).peak_bytes, lb = min_possible(g);
    REQUIRE(lb < peak);
    const std::int64_t tight = lb + (peak - lb) / 2;
    CAPTURE(seed);
    for (double limit : {0.0, -1.0, std::nan("")}) {
      CAPTURE(limit);
      const auto fits = checkmate_milp_plan(
          g, peak, checkmate_options{.backend = backend, .solver = {.time_limit = std::chrono::duration<double>(limit)}, .order = order});
      CHECK(fits.status == solve_status::optimal);  // no recomputation: optimal without a solve
      CHECK(fits.stats.solver_status == solve_status::time_limit);
      CHECK(fits.stats.start_source == "no-remat");
      CHECK(fits.stats.lns_rounds == 0);
      CHECK(fits.total_cost == doctest::Approx(g.total_cost()));
      CHECK(simulate_plan(g, fits.plan).peak_bytes <= peak);
      const auto none = checkmate_milp_plan(
          g, tight, checkmate_options{.backend = backend, .solver = {.time_limit = std::chrono::duration<double>(limit)}, .order = order});
      CHECK(none.status == solve_status::time_limit);  // nothing found, nothing proven
      CHECK(none.plan.steps.empty());
      CHECK(none.stats.lns_rounds == 0);
    }
    // Huge and infinite limits are no limits: the same answer as without one.
    const auto free_run = checkmate_milp_plan(g, tight, checkmate_options{.backend = backend, .order = order});
    for (double limit : {1e12, std::numeric_limits<double>::infinity()}) {
      const auto r = checkmate_milp_plan(
          g, tight, checkmate_options{.backend = backend, .solver = {.time_limit = std::chrono::duration<double>(limit)}, .order = order});
      CHECK(r.status == free_run.status);
      CHECK(r.total_cost == free_run.total_cost);
      CHECK(r.plan.steps.size() == free_run.plan.steps.size());
      CHECK(r.stats.lns_rounds == 0);
    }
    // A caller's start plan the simulator rejects (a vertex out of range, a free of a value not
    // resident) is skipped by the build-stopped answer, not thrown; a valid one is taken (when
    // the order admits a plan at this budget at all).
    if (!has_solution(free_run.status)) continue;
    ++start_plans_checked;
    execution_plan out_of_range = free_run.plan, bad_free = free_run.plan;
    out_of_range.steps.insert(out_of_range.steps.begin(), plan_step{plan_op::compute, g.size()});
    bad_free.steps.insert(bad_free.steps.begin(), plan_step{plan_op::free, order.back()});
    REQUIRE_FALSE(check_plan(g, out_of_range).valid);
    REQUIRE_FALSE(check_plan(g, bad_free).valid);
    checkmate_options<Backend> with_starts{.backend = backend, .solver = {.time_limit = std::chrono::duration<double>(0)}, .order = order};
    with_starts.start_plans = {out_of_range, bad_free, free_run.plan};
    remat_result started;
    REQUIRE_NOTHROW(started = checkmate_milp_plan(g, tight, with_starts));
    CHECK(has_solution(started.status));
    CHECK(started.stats.solver_status == solve_status::time_limit);
    CHECK(started.stats.start_source == "plan 2");
    CHECK(started.total_cost == doctest::Approx(free_run.total_cost));
    CHECK(started.plan.steps == free_run.plan.steps);
    with_starts.start_plans = {out_of_range, bad_free};
    remat_result only_bad;
    REQUIRE_NOTHROW(only_bad = checkmate_milp_plan(g, tight, with_starts));
    CHECK(only_bad.status == solve_status::time_limit);
    CHECK(only_bad.plan.steps.empty());
  }
  CHECK(start_plans_checked > 0);
}

}  // namespace

#ifdef MEMSCHED_HAVE_CBC
TEST_CASE("checkmate_milp_plan with CBC: expired limits return without a solve; huge limits are none") {
  check_milp_limits(cbc_backend{});
  check_milp_limits(cbc_backend{.isolate_process = false});
}
#endif
#ifdef MEMSCHED_HAVE_GLPK
TEST_CASE("checkmate_milp_plan with GLPK: expired limits return without a solve; huge limits are none") {
  check_milp_limits(glpk_backend{});
  check_milp_limits(glpk_backend{.isolate_process = false});
}
#endif
