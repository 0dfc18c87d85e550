// H-ILP (HiRemate appendix B) at the top level, solved by CBC: plans valid and within the budget,
// never costlier than the hierarchy without it, deterministic under a node limit, and the model's
// optimum on random two-group problems equal to the cheapest of all its schedules (brute force).

#include <memsched/graph/gpt.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/remat/hiremate.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>
#include <memsched/solver/backends/cbc.hpp>

#include "../support/no_remat_peak.hpp"
#include "../support/random_cases.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace memsched;
using testing::no_remat_peak;

namespace {

hiremate_options with_hilp(std::uint64_t nodes) {
  // One partition (one grain, stopped rounds): the H-ILP is solved once per partition, and these
  // tests are about the H-ILP.
  return hiremate_options{.top_solver = milp_solve_function(cbc_backend{}),
                          .top_solver_options = {.node_limit = nodes}, .heuristic_start = false, .tuning = {.partitions = 1, .also_full_rounds = false}};
}

// A random H-ILP problem of two groups (nodes F0, F1, B1, B0), each forward node with `options`
// options and the forward-only variant, each backward node with one variant per option. Every
// node writes one or two data; a variant reads a random subset of the data written before it
// (half of B1's variants provide some of F1's instead), and half of those reading any peak two or
// three times as they release their data (points).
detail::hiremate::hilp_problem random_problem(std::mt19937_64& rng, std::size_t options) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  detail::hiremate::hilp_problem p;
  p.groups = 2;
  const std::size_t K = 4;
  p.output.assign(K, 0);
  for (std::size_t k = 0; k + 1 < K; ++k)  // B0 writes nothing another node reads
    for (int i = uniform(1, 2); i > 0; --i) {
      p.producer.push_back(k);
      p.data_bytes.push_back(uniform(5, 40));
      p.output[k] += p.data_bytes.back();
    }
  p.variants.assign(K, {});
  for (std::size_t k = 0; k < K; ++k) {
    const std::size_t count = k < p.groups ? options + 1 : options;
    for (std::size_t o = 0; o < count; ++o) {
      detail::hiremate::hilp_variant v;
      v.cost = uniform(1, 30);
      v.extra = p.output[k] + uniform(0, 40);
      if (k < p.groups && o < options) v.phantom = uniform(0, 3) == 0 ? 0 : uniform(5, 30);
      // Half of B1's variants compute some of F1's data again (provides) instead of reading them.
      const bool providing = k == detail::hiremate::hilp_backward(p.groups, 1) && uniform(0, 1) == 1;
      for (std::size_t d = 0; d < p.producer.size(); ++d)
        if (providing && p.producer[d] == 1 && uniform(0, 2) > 0)
          v.provides.push_back(d);
        else if (p.producer[d] < k && uniform(0, 1) == 1)
          v.deps.push_back(d);
      if (!v.deps.empty() && v.extra >= 2 && uniform(0, 1) == 1) {
        // Points: extras rising to v.extra, released data a growing prefix of the shuffled deps.
        std::vector<std::size_t> order = v.deps;
        std::shuffle(order.begin(), order.end(), rng);
        const std::size_t count = std::min<std::size_t>(uniform(2, 3), order.size() + 1);
        std::vector<std::int64_t> extras{v.extra};
        while (extras.size() < count) {
          const std::int64_t e = uniform(0, static_cast<int>(v.extra) - 1);
          if (std::find(extras.begin(), extras.end(), e) == extras.end()) extras.push_back(e);
        }
        std::sort(extras.begin(), extras.end());
        std::size_t released = 0;
        for (std::size_t i = 0; i < count; ++i) {
          if (i > 0) released = uniform(static_cast<int>(released) + 1, static_cast<int>(order.size() - (count - 1 - i)));
          v.points.push_back({extras[i], std::vector<std::size_t>(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(released))});
          std::sort(v.points.back().released.begin(), v.points.back().released.end());
        }
      }
      p.variants[k].push_back(v);
    }
  }
  p.held_from.assign(K, 0);
  p.held_from[K - 1] = uniform(0, 10);
  p.constant = uniform(0, 10);
  return p;
}

// Every schedule of a two-group problem: in stage t, any subset of the forward nodes before t
// (each with any variant), in node order, then node t with any variant.
std::vector<detail::hiremate::hilp_schedule> all_schedules(const detail::hiremate::hilp_problem& p) {
  const std::size_t K = 2 * p.groups;
  std::vector<detail::hiremate::hilp_schedule> all{{}};
  for (std::size_t t = 0; t < K; ++t) {
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> stages{{}};
    for (std::size_t k = 0; k < std::min(t, p.groups); ++k) {
      std::vector<std::vector<std::pair<std::size_t, std::size_t>>> next;
      for (const auto& s : stages) {
        next.push_back(s);
        for (std::size_t o = 0; o < p.variants[k].size(); ++o) {
          next.push_back(s);
          next.back().emplace_back(k, o);
        }
      }
      stages = std::move(next);
    }
    std::vector<detail::hiremate::hilp_schedule> grown;
    for (const auto& prefix : all)
      for (const auto& s : stages)
        for (std::size_t o = 0; o < p.variants[t].size(); ++o) {
          grown.push_back(prefix);
          grown.back().push_back(s);
          grown.back().back().emplace_back(t, o);
        }
    all = std::move(grown);
  }
  return all;
}

// The model's peak of schedule `s`, in bytes, computed from the problem directly: at the start of
// stage t the constant part, the graph outputs of nodes up to t, each data a later step reads
// before its producer runs again or a backward part provides it, and each phantom a later backward
// part reads before its forward part runs again; each slot peaks at what is resident plus its
// variant's extra, then adds its outputs, phantom and the data it provides, and (with
// `free_values`) a data goes after each slot of the stage that writes, reads or provides it and
// after which no slot of the stage reads it, unless it is held into the next stage. With `free_values`, a variant with
// points peaks at the largest of resident + a point's extra - the data it released by then that
// go after its slot (the correction terms).
std::int64_t peak_by_hand(const detail::hiremate::hilp_problem& p, const detail::hiremate::hilp_schedule& s, bool free_values) {
  const std::size_t N = p.groups, K = 2 * N, D = p.producer.size();
  auto reads = [&](std::size_t k, std::size_t o, std::size_t d) {
    const auto& deps = p.variants[k][o].deps;
    return std::find(deps.begin(), deps.end(), d) != deps.end();
  };
  auto provides = [&](std::size_t k, std::size_t o, std::size_t d) {
    const auto& given = p.variants[k][o].provides;
    return std::find(given.begin(), given.end(), d) != given.end();
  };
  auto data_held = [&](std::size_t d, std::size_t t) {  // at the start of stage t
    if (t >= K || p.producer[d] >= t) return false;
    for (std::size_t u = t; u < K; ++u)
      for (const auto& [k, o] : s[u]) {
        if (reads(k, o, d)) return true;
        if (k == p.producer[d] || provides(k, o, d)) return false;
      }
    return false;
  };
  auto phantom_held = [&](std::size_t j, std::size_t o, std::size_t t) {
    const std::size_t b = detail::hiremate::hilp_backward(N, j);
    if (t <= j || t > b) return false;
    for (std::size_t u = t; u <= b; ++u)
      for (const auto& [k, oo] : s[u]) {
        if (k == j && oo == o) return false;
        if (k == b && oo == o) return true;
      }
    return false;
  };
  std::int64_t peak = 0;
  for (std::size_t t = 0; t < K; ++t) {
    std::int64_t resident = p.constant;
    for (std::size_t k = 0; k <= t; ++k) resident += p.held_from[k];
    for (std::size_t d = 0; d < D; ++d)
      if (data_held(d, t)) resident += p.data_bytes[d];
    for (std::size_t j = 0; j < N; ++j)
      for (std::size_t o = 0; o + 1 < p.variants[j].size(); ++o)
        if (phantom_held(j, o, t)) resident += p.variants[j][o].phantom;
    for (std::size_t i = 0; i < s[t].size(); ++i) {
      const auto [k, o] = s[t][i];
      const auto& v = p.variants[k][o];
      std::vector<char> freed(D, 0);
      for (std::size_t d = 0; free_values && d < D; ++d) {
        if (k != p.producer[d] && !reads(k, o, d) && !provides(k, o, d)) continue;
        bool read_later = false;
        for (std::size_t later = i + 1; later < s[t].size(); ++later) read_later = read_later || reads(s[t][later].first, s[t][later].second, d);
        freed[d] = !read_later && !data_held(d, t + 1);
      }
      if (!free_values || v.points.empty()) peak = std::max(peak, resident + v.extra);
      for (const auto& point : free_values ? v.points : std::vector<detail::hiremate::hilp_point>{}) {
        std::int64_t at = resident + point.extra;
        for (auto d : point.released)
          if (freed[d]) at -= p.data_bytes[d];
        peak = std::max(peak, at);
      }
      resident += p.output[k] + (k < N && o + 1 < p.variants[k].size() ? v.phantom : 0);
      for (auto d : v.provides) resident += p.data_bytes[d];
      for (std::size_t d = 0; d < D; ++d)
        if (freed[d]) resident -= p.data_bytes[d];
    }
  }
  return peak;
}

}  // namespace

TEST_CASE("hiremate H-ILP: a run's points are its rising peaks per set of released data (by hand)") {
  using point = detail::hiremate::hilp_point;
  auto same = [](const std::vector<point>& a, const std::vector<point>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const point& x, const point& y) { return x.extra == y.extra && x.released == y.released; });
  };
  // Data 4 is read last by the first vertex, 1 and 6 by the third, 2 by the fifth: the peaks
  // 5 (nothing released), 9 (4 released), 12 (the fourth vertex: 1, 4, 6; the sixth's 12 adds
  // nothing), 15 (all four).
  CHECK(same(detail::hiremate::hilp_points({5, 9, 7, 12, 3, 12, 15}, {{0, 4}, {2, 1}, {2, 6}, {4, 2}}),
             {point{5, {}}, point{9, {4}}, point{12, {1, 4, 6}}, point{15, {1, 2, 4, 6}}}));
  // A higher peak with the same data released replaces the point.
  CHECK(same(detail::hiremate::hilp_points({5, 9, 10}, {{0, 3}}), {point{5, {}}, point{10, {3}}}));
  // Nothing read: one point, the peak.
  CHECK(same(detail::hiremate::hilp_points({4, 8, 2}, {}), {point{8, {}}}));
  CHECK(detail::hiremate::hilp_points({}, {{0, 1}}).empty());
}

TEST_CASE("hiremate H-ILP: the model's memory rows give the peak of each schedule computed by hand, with and without FREE and corrections") {
  // Budgets below 2^20 bytes: the model's unit is one byte, so its peak is exact.
  std::mt19937_64 rng(11);
  std::size_t checked = 0, freed_lower = 0, corrected_lower = 0, mismatches = 0;
  for (std::uint64_t instance = 0; instance < testing::random_cases(12); ++instance) {
    const detail::hiremate::hilp_problem p = random_problem(rng, instance % 2 == 0 ? 1 : 2);
    detail::hiremate::hilp_problem uncorrected = p;  // the same problem without points
    for (auto& vs : uncorrected.variants)
      for (auto& v : vs) v.points.clear();
    const auto with_free = detail::hiremate::build_hilp(p, 1 << 19, true);
    const auto free_only = detail::hiremate::build_hilp(uncorrected, 1 << 19, true);
    const auto without = detail::hiremate::build_hilp(p, 1 << 19, false);
    REQUIRE(with_free);
    REQUIRE(free_only);
    REQUIRE(without);
    REQUIRE(with_free->unit == 1);
    for (const auto& s : all_schedules(p)) {
      const auto x = detail::hiremate::assign_hilp(p, *with_free, s);
      const auto y = detail::hiremate::assign_hilp(p, *without, s);
      const auto z = detail::hiremate::assign_hilp(uncorrected, *free_only, s);
      REQUIRE(x);
      REQUIRE(y);
      REQUIRE(z);
      const std::int64_t model = detail::hiremate::hilp_peak(*with_free, *x), model_without = detail::hiremate::hilp_peak(*without, *y);
      const std::int64_t model_uncorrected = detail::hiremate::hilp_peak(*free_only, *z);
      const std::int64_t by_hand = peak_by_hand(p, s, true), by_hand_without = peak_by_hand(p, s, false);
      const std::int64_t by_hand_uncorrected = peak_by_hand(uncorrected, s, true);
      if ((model != by_hand || model_without != by_hand_without || model_uncorrected != by_hand_uncorrected) && ++mismatches <= 5)
        MESSAGE("instance " << instance << ": model " << model << " / " << model_uncorrected << " / " << model_without << ", by hand "
                            << by_hand << " / " << by_hand_uncorrected << " / " << by_hand_without);
      freed_lower += by_hand_uncorrected < by_hand_without;
      corrected_lower += by_hand < by_hand_uncorrected;
      ++checked;
    }
  }
  MESSAGE(checked << " schedules, " << freed_lower << " with a lower peak because a data is freed inside a stage, " << corrected_lower
                  << " lower still because a node's run releases it");
  CHECK(mismatches == 0);
  CHECK(checked > testing::random_cases(12) * 1000);
  CHECK(freed_lower > checked / 10);     // the FREE variables matter on these problems
  CHECK(corrected_lower > checked / 50);  // and so do the correction terms
}

TEST_CASE("hiremate H-ILP: the model's optimum is the cheapest of its schedules (brute force, 2 groups)") {
  std::mt19937_64 rng(7);
  const auto solve = milp_solve_function(cbc_backend{});
  std::size_t compared = 0, infeasible = 0, with_start = 0;
  for (std::uint64_t instance = 0; instance < testing::random_cases(16); ++instance) {
    const detail::hiremate::hilp_problem p = random_problem(rng, instance % 2 == 0 ? 1 : 2);
    const auto schedules = all_schedules(p);
    REQUIRE(schedules.size() == (p.variants[0].size() * (1 + p.variants[0].size()) * p.variants[1].size() *
                                 (1 + p.variants[0].size()) * (1 + p.variants[1].size()) * p.variants[2].size() *
                                 (1 + p.variants[0].size()) * (1 + p.variants[1].size()) * p.variants[3].size()));
    std::int64_t widest = 0;
    for (const auto& vs : p.variants)
      for (const auto& v : vs) widest = std::max(widest, v.extra);
    for (const auto& [budget, free_values] : {std::pair{widest + 20, false}, std::pair{widest + 60, false}, std::pair{widest + 150, false},
                                               std::pair{widest + 20, true}, std::pair{widest + 60, true}}) {
      auto hm = detail::hiremate::build_hilp(p, budget, free_values);
      if (!hm) continue;
      // Brute force: the cheapest schedule whose assignment satisfies every row of the model.
      double cheapest = std::numeric_limits<double>::infinity();
      std::size_t valid = 0, missing = 0;
      for (const auto& s : schedules) {
        const auto x = detail::hiremate::assign_hilp(p, *hm, s);
        if (!x) {
          ++missing;
          continue;
        }
        if (hm->model.first_violation(*x)) continue;
        ++valid;
        cheapest = std::min(cheapest, hm->model.objective_value(*x));
      }
      CHECK(missing == 0);  // every schedule of this shape exists in the model (only its rows can fail)
      const solver_result r = solve(hm->model, solver_options{});
      INFO("instance " << instance << ", budget " << budget << (free_values ? " with FREE" : "") << ": " << valid << " valid schedules of "
                       << schedules.size());
      if (valid == 0) {
        // Nothing fits: the backend must not find an assignment either.
        CHECK(r.status == solve_status::infeasible);
        ++infeasible;
        continue;
      }
      REQUIRE(r.status == solve_status::optimal);
      CHECK(r.objective == doctest::Approx(cheapest).epsilon(1e-9));
      // The backend's answer read back as a schedule is one of the cheapest.
      const auto x = detail::hiremate::assign_hilp(p, *hm, detail::hiremate::decode_hilp(*hm, r.values));
      REQUIRE(x);
      CHECK_FALSE(hm->model.first_violation(*x));
      CHECK(hm->model.objective_value(*x) == doctest::Approx(cheapest).epsilon(1e-9));
      // Through solve_hilp with every 5th schedule as a start: the start it reports is the
      // cheapest of those that fit the model, the answer and the proven bound are the optimum.
      std::vector<detail::hiremate::hilp_schedule> starts;
      double cheapest_start = std::numeric_limits<double>::infinity();
      for (std::size_t k = 0; k < schedules.size(); k += 5) {
        starts.push_back(schedules[k]);
        const auto xs = detail::hiremate::assign_hilp(p, *hm, schedules[k]);
        if (xs && !hm->model.first_violation(*xs)) cheapest_start = std::min(cheapest_start, hm->model.objective_value(*xs) / hm->cost_scale);
      }
      const auto outcome = detail::hiremate::solve_hilp(p, budget, starts, {}, solve, solver_options{}, std::uint64_t{1} << 40, free_values);
      REQUIRE(outcome.status == solve_status::optimal);
      if (std::isfinite(cheapest_start)) {
        CHECK(outcome.start_objective == doctest::Approx(cheapest_start).epsilon(1e-9));
        ++with_start;
      } else {
        CHECK(std::isnan(outcome.start_objective));
      }
      // (In the graph's cost units: the model's are scaled.)
      CHECK(outcome.objective == doctest::Approx(cheapest / hm->cost_scale).epsilon(1e-9));
      CHECK(outcome.bound <= cheapest / hm->cost_scale * (1 + 1e-9));
      CHECK(outcome.bound == doctest::Approx(cheapest / hm->cost_scale).epsilon(1e-5));  // within the default relative gap (1e-6)
      ++compared;
    }
  }
  MESSAGE(compared << " optima compared with brute force, " << infeasible << " budgets with no schedule, " << with_start
                   << " solved from a start");
  CHECK(with_start >= compared / 4);
  CHECK(compared >= testing::random_cases(40));
  CHECK(infeasible >= 1);
}

// A comparison of costs (Release phase only); the other cases run the H-ILP under the sanitizers.
TEST_CASE("hiremate H-ILP: valid plans within the budget, never costlier than the other top levels" * doctest::skip(MEMSCHED_TEST_UNDER_SANITIZERS)) {
  // A 3-layer GPT: CBC's root node on the 4-layer one's model took 30 of this test's 43 s.
  for (const char* which : {"gpt", "resnet18"}) {
    const memory_graph g = std::string(which) == "gpt"
                               ? make_memory_graph(make_training_graph(make_gpt({.layers = 3, .hidden = 32, .heads = 2, .sequence = 16, .vocab = 50})))
                               : make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/resnet18.training.json"));
    const std::int64_t peak = no_remat_peak(g);
    std::size_t solved = 0;
    for (int pct : std::string(which) == "gpt" ? std::vector<int>{50, 90} : std::vector<int>{50}) {
      const std::int64_t budget = peak * pct / 100;
      const auto plain = hiremate_plan(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.partitions = 1, .also_full_rounds = false}});
      const auto r = hiremate_plan(g, budget, with_hilp(20));
      REQUIRE(r.stats.hiremate->hilp_status.has_value());
      if (!has_solution(plain.status)) continue;
      // The H-ILP competes with the other two top levels: the hierarchy never gets costlier.
      REQUIRE(has_solution(r.status));
      CHECK(r.total_cost <= plain.total_cost);
      const plan_simulation sim = simulate_plan(g, r.plan);  // throws on an invalid plan
      CHECK(sim.peak_bytes <= budget);
      CHECK(sim.total_cost == doctest::Approx(r.total_cost));
      if (r.stats.hiremate->hilp_cost) {
        ++solved;
        CHECK((r.stats.hiremate->hilp_status == solve_status::optimal || r.stats.hiremate->hilp_status == solve_status::feasible));
        // Started from the other top levels' schedules: the H-ILP's plan is never costlier than
        // the cheaper of them by more than what re-simulation changes (it is the same plan or a
        // cheaper one in the model).
        if (r.stats.hiremate->top_method == hiremate_top_method::hilp) CHECK(*r.stats.hiremate->hilp_cost <= plain.total_cost);
        // Started from its cheapest fitting start, the backend answers no dearer within the
        // model, and its bound is below its answer (equal when proven optimal).
        if (std::isfinite(r.stats.hiremate->hilp_start_objective)) CHECK(r.stats.hiremate->hilp_objective <= r.stats.hiremate->hilp_start_objective * (1 + 1e-9));
        if (std::isfinite(r.stats.hiremate->hilp_bound)) CHECK(r.stats.hiremate->hilp_bound <= r.stats.hiremate->hilp_objective * (1 + 1e-9));
        if (r.stats.hiremate->hilp_status == solve_status::optimal) CHECK(r.stats.hiremate->hilp_bound == doctest::Approx(r.stats.hiremate->hilp_objective).epsilon(1e-5));
      }
      // The top level's report: proven when its method is one of the exact dynamic programmes, or
      // the H-ILP with the backend's proof.
      REQUIRE(r.stats.hiremate->level_reports.size() == 2);
      CHECK(r.stats.hiremate->level_reports.back().method == r.stats.hiremate->top_method);
      CHECK(r.stats.hiremate->level_reports.back().proven == (r.stats.hiremate->top_method != hiremate_top_method::hilp || r.stats.hiremate->hilp_status == solve_status::optimal ? 1U : 0U));
      MESSAGE(std::string(which) << " at " << pct << "%: " << r.stats.hiremate->top_method << " " << r.overhead << " (without H-ILP "
                    << plain.overhead << "), H-ILP " << (r.stats.hiremate->hilp_status ? to_string(*r.stats.hiremate->hilp_status) : "-") << " " << r.stats.hiremate->hilp_variables << " variables");
      if (std::string(which) == "gpt" && pct == 50) {
        // With the FREE variables: a larger model, the same guarantees.
        hiremate_options free_options = with_hilp(20);
        free_options.tuning.hilp_free_values = true;
        const auto f = hiremate_plan(g, budget, free_options);
        REQUIRE(has_solution(f.status));
        CHECK(f.total_cost <= plain.total_cost);
        CHECK(simulate_plan(g, f.plan).peak_bytes <= budget);
        CHECK(f.stats.hiremate->hilp_variables > r.stats.hiremate->hilp_variables);
        CHECK(f.stats.hiremate->hilp_budget_raised <= r.stats.hiremate->hilp_budget_raised);  // a tighter model: a smaller excess to make up for
        MESSAGE("with FREE: " << f.stats.hiremate->top_method << " " << f.overhead << ", H-ILP " << (f.stats.hiremate->hilp_status ? to_string(*f.stats.hiremate->hilp_status) : "-") << " "
                              << f.stats.hiremate->hilp_variables << " variables, budget raised by " << f.stats.hiremate->hilp_budget_raised << " (without FREE "
                              << r.stats.hiremate->hilp_budget_raised << ")");
      }
    }
    CHECK(solved >= 1);
  }
}

TEST_CASE("hiremate H-ILP: the same plan on every run under a node limit") {
  const memory_graph g = make_memory_graph(make_training_graph(make_gpt({.layers = 2, .hidden = 32, .heads = 2, .sequence = 16, .vocab = 50})));
  const std::int64_t budget = no_remat_peak(g) * 6 / 10;
  const auto a = hiremate_plan(g, budget, with_hilp(20));
  const auto b = hiremate_plan(g, budget, with_hilp(20));
  REQUIRE(a.status == b.status);
  CHECK(a.plan == b.plan);
  CHECK(a.stats.hiremate->hilp_cost == b.stats.hiremate->hilp_cost);
}

TEST_CASE("hiremate H-ILP: options' profiles follow their simulations, and a real level's variants get points from them") {
  const dataflow_graph f = make_gpt({.layers = 3, .hidden = 32, .heads = 2, .sequence = 16, .vocab = 50});
  const memory_graph t = make_memory_graph(make_training_graph(f));
  const auto part = hiremate_partition(f, {.max_lower = 20, .max_top = 4});
  REQUIRE(!part.levels.empty());
  std::vector<std::vector<std::size_t>> groups;
  for (const auto& grp : part.levels[0].groups) groups.push_back(grp.vertices);
  const std::vector<std::size_t> owner = detail::hiremate::group_owner(t, groups);
  std::vector<std::vector<detail::hiremate::group_choice>> choices(groups.size());
  std::size_t options = 0;
  for (std::size_t j = 0; j < groups.size(); ++j) {
    const auto r = hiremate_subgraph_options(t, groups[j], {.budgets = 4, .max_options = 3, .resident_levels = 0});
    REQUIRE(r.status == solve_status::feasible);
    for (const auto& o : r.options) {
      CHECK(o.transient == simulate_plan(r.sub.graph, o.plan).transient);
      const auto c = detail::hiremate::choice_of(o, r.sub, nullptr);
      // One entry per vertex of each schedule, at least the simulator's memory while it runs, and
      // the part's peak as the largest.
      REQUIRE(c.forward_profile.size() == c.forward.size());
      REQUIRE(c.backward_profile.size() == c.backward.size());
      std::size_t i = 0;
      for (std::size_t s = 0; s < o.plan.steps.size(); ++s) {
        const auto& step = o.plan.steps[s];
        if (step.op != plan_op::compute || step.node == r.sub.barrier || r.sub.interface[step.node]) continue;
        const std::int64_t entry = i < c.forward.size() ? c.forward_profile[i] : c.backward_profile[i - c.forward.size()];
        CHECK(entry >= o.transient[s]);
        ++i;
      }
      CHECK(i == c.forward.size() + c.backward.size());
      if (!c.forward.empty()) CHECK(*std::max_element(c.forward_profile.begin(), c.forward_profile.end()) == o.forward_peak);
      if (!c.backward.empty()) CHECK(*std::max_element(c.backward_profile.begin(), c.backward_profile.end()) == o.backward_peak);
      choices[j].push_back(c);
      ++options;
    }
  }
  const auto p = detail::hiremate::make_hilp(t, groups, owner, choices);
  REQUIRE(p);
  std::size_t corrected = 0;
  for (const auto& vs : p->variants)
    for (const auto& v : vs) {
      if (v.points.empty()) continue;
      // The first point releases nothing, then the released data grow (all read by the variant)
      // and the peaks rise to the variant's.
      CHECK(v.points.front().released.empty());
      for (std::size_t i = 1; i < v.points.size(); ++i) {
        CHECK(v.points[i].extra > v.points[i - 1].extra);
        CHECK(v.points[i].released.size() > v.points[i - 1].released.size());
        CHECK(std::includes(v.points[i].released.begin(), v.points[i].released.end(), v.points[i - 1].released.begin(),
                            v.points[i - 1].released.end()));
        CHECK(std::includes(v.deps.begin(), v.deps.end(), v.points[i].released.begin(), v.points[i].released.end()));
      }
      CHECK(std::max<std::int64_t>(0, v.points.back().extra) == v.extra);
      corrected += v.points.size() > 1;
    }
  MESSAGE(groups.size() << " groups, " << options << " options, " << corrected << " variants with correction terms");
  CHECK(corrected >= groups.size());  // most groups read data before their peak
}

TEST_CASE("hiremate H-ILP: backward variants provide the data they compute again, and the model holds what the plans hold (resnet50)") {
  // resnet50's blocks: a group's backward schedule often computes a value again that the backward
  // part of the group before it reads too (a block's output, read by the next block's and by its
  // own gradient). Such a value need not be held from the forward pass on; the model held it (a
  // scratch run of hiremate_plan at 40% of the peak, one partition: the model's excess over its
  // first start's simulated peak was 402,044 bytes before backward variants provided data, 707
  // after).
  const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/resnet50.training.json"));
  const auto part = hiremate_partition(g, {});
  REQUIRE(!part.levels.empty());
  std::vector<std::vector<std::size_t>> groups;
  for (const auto& grp : part.levels[0].groups) groups.push_back(grp.vertices);
  const std::size_t N = groups.size();
  const std::vector<std::size_t> owner = detail::hiremate::group_owner(g, groups);
  std::vector<std::vector<detail::hiremate::group_choice>> choices(N);
  std::size_t most_options = 0;
  for (std::size_t j = 0; j < N; ++j) {
    const auto r = hiremate_subgraph_options(g, groups[j], {.budgets = 4, .max_options = 4, .resident_levels = 0});
    REQUIRE(r.status == solve_status::feasible);
    for (const auto& o : r.options) choices[j].push_back(detail::hiremate::choice_of(o, r.sub, nullptr));
    most_options = std::max(most_options, choices[j].size());
  }
  const auto p = detail::hiremate::make_hilp(g, groups, owner, choices);
  REQUIRE(p);
  std::size_t providing = 0;
  for (std::size_t k = N; k < 2 * N; ++k)
    for (const auto& v : p->variants[k]) {
      providing += !v.provides.empty();
      CHECK(std::is_sorted(v.provides.begin(), v.provides.end()));
      for (auto d : v.provides) {
        CAPTURE(d);
        CHECK(p->producer[d] == detail::hiremate::hilp_backward(N, k));  // its own group's forward data
        CHECK_FALSE(detail::hiremate::hilp_reads(v, d));
        bool read_later = false;  // by a backward part after it
        for (std::size_t later = k + 1; later < 2 * N; ++later)
          for (const auto& w : p->variants[later]) read_later = read_later || detail::hiremate::hilp_reads(w, d);
        CHECK(read_later);
      }
    }
  // The model's peak of the schedules that run every group with its o-th option, against the
  // simulated peak of their expanded plans.
  const std::int64_t budget = no_remat_peak(g);
  std::size_t compared = 0;
  std::int64_t largest_excess = 0, unit = 1;
  for (const bool free_values : {false, true}) {
    const auto hm = detail::hiremate::build_hilp(*p, budget, free_values);
    REQUIRE(hm);
    unit = hm->unit;
    for (std::size_t o = 0; o < most_options; ++o) {
      std::vector<std::size_t> choice(N);
      for (std::size_t j = 0; j < N; ++j) choice[j] = std::min(o, choices[j].size() - 1);
      const auto s = detail::hiremate::hilp_schedule_of_choice(N, choice);
      std::vector<const std::vector<std::size_t>*> parts;
      for (const auto& stage : s)
        for (const auto& [k, v] : stage) parts.push_back(p->variants[k][v].vertices);
      const auto seq = detail::hiremate::expand_parts(g, parts, owner);
      REQUIRE(seq);
      const auto x = detail::hiremate::assign_hilp(*p, *hm, s);
      REQUIRE(x);
      const std::int64_t model = detail::hiremate::hilp_peak(*hm, *x), simulated = detail::sequence_peak_cost(g, *seq).first;
      CAPTURE(o);
      CAPTURE(free_values);
      CHECK(model >= simulated);
      largest_excess = std::max(largest_excess, model - simulated);
      ++compared;
    }
  }
  MESSAGE(N << " groups, " << providing << " backward variants provide data; " << compared << " schedules, the model's largest excess "
            << largest_excess << " bytes (unit " << unit << ")");
  CHECK(providing >= N / 2);
  CHECK(largest_excess <= 64 * unit);  // rounding up to whole units only
}
