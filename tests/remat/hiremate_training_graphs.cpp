// HiRemate on the training graphs of the test data (tests/data/torch): the heuristic start beside
// the hierarchy, budgets from infeasible to the no-remat peak, partitions and rounds, Serenity's
// option, pinned values. A file of its own so that CI's sanitizer phase runs it beside
// tests/remat/hiremate.cpp (together they took 577 s there on a slow machine, against ctest's
// 600 s limit).
#include <memsched/graph/json_io.hpp>
#include <memsched/remat/hiremate.hpp>

#include "../support/hiremate_checks.hpp"
#include "../support/no_remat_peak.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

using namespace memsched;
using testing::check_cheaper_of;
using testing::check_hiremate_result;
using testing::heuristic_start;
using testing::no_remat_peak;

// Costs and plans compared across partitions: Release phase only (27 s under the sanitizers); the
// partitions' code, reuse across them included, runs there in every case with default options.
TEST_CASE("hiremate: several partitions: never dearer than the first, the winner's own plan, cheaper at some budgets" *
          doctest::skip(MEMSCHED_TEST_UNDER_SANITIZERS)) {
  std::size_t cheaper = 0, reused = 0;
  for (const char* name : {"resnet18", "gpt2_small"})
    for (int pct : {30, 40, 50}) {
      const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/" + name + ".training.json"));
      const std::int64_t budget = no_remat_peak(g) * pct / 100;
      CAPTURE(name);
      CAPTURE(pct);
      // The grains alone (the next case covers the two kinds of rounds).
      const auto first = hiremate_plan_detailed(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.partitions = 1, .also_full_rounds = false}});
      const auto several = hiremate_plan_detailed(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.partitions = 4, .also_full_rounds = false}});
      CHECK(first.stats.partitions_tried == 1);
      CHECK(several.stats.partitions_tried >= 1);
      CHECK(several.stats.partitions_tried <= 4);
      if (!has_solution(first.result.status)) continue;
      REQUIRE(has_solution(several.result.status));
      check_hiremate_result(g, several.result, budget);
      CHECK(several.result.total_cost <= first.result.total_cost);
      cheaper += several.result.total_cost < first.result.total_cost;
      // The winner is M^l x 2^j, and one partition at that M^l gives the same plan.
      const std::size_t ml = several.stats.max_lower;
      CHECK(ml % first.stats.max_lower == 0);
      CHECK(std::has_single_bit(ml / first.stats.max_lower));
      const auto direct = hiremate_plan_detailed(
          g, budget, hiremate_options{.partition = {.max_lower = ml}, .heuristic_start = false, .tuning = {.partitions = 1, .also_full_rounds = false}});
      CHECK(direct.result.plan == several.result.plan);
      CHECK(direct.stats.groups == several.stats.groups);
      // The winner's problems: solved there or taken from a finer partition's (the same options:
      // the plans above are equal); one partition reuses nothing.
      CHECK(several.stats.classes_solved + several.stats.classes_reused == direct.stats.classes_solved);
      CHECK(direct.stats.classes_reused == 0);
      CHECK(first.stats.classes_reused == 0);
      if (ml == first.stats.max_lower) CHECK(several.stats.classes_reused == 0);
      reused += several.stats.classes_reused > 0;
      MESSAGE(std::string(name) << " at " << pct << "%: M^l " << first.stats.max_lower << " " << first.result.overhead << ", best of "
                   << several.stats.partitions_tried << " partitions (M^l " << ml << ") " << several.result.overhead);
    }
  CHECK(cheaper >= 1);
  CHECK(reused >= 1);  // so the equal plans above cover problems taken from a finer partition
}

TEST_CASE("hiremate: also_full_rounds: the cheaper of the stopped and the finished rounds' plans" *
          doctest::skip(MEMSCHED_TEST_UNDER_SANITIZERS)) {
  // Stopped rounds leave GoogLeNet's first inception blocks split into branches (the level has
  // M^t = 30 nodes before the blocks are wrapped): the block's input and the branches' outputs
  // are read across groups, pinned, and no top level fits 30% of the peak. Finished rounds wrap
  // whole blocks. Each setting alone, then both: the plan of the cheaper, found as it is alone.
  std::size_t full_wins = 0, stop_wins = 0, only_full = 0;
  for (const char* name : {"googlenet", "darts_v2_normal_cell", "transformer"})
    for (int pct : {30, 40, 50}) {
      const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/" + name + ".training.json"));
      const std::int64_t budget = no_remat_peak(g) * pct / 100;
      CAPTURE(name);
      CAPTURE(pct);
      const auto stop = hiremate_plan_detailed(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.also_full_rounds = false}});
      const auto full = hiremate_plan_detailed(
          g, budget, hiremate_options{.partition = {.stop_at_max_top = false}, .heuristic_start = false, .tuning = {.also_full_rounds = false}});
      const auto both = hiremate_plan_detailed(g, budget, hiremate_options{.heuristic_start = false});
      CHECK_FALSE(stop.stats.partition.full_rounds);
      CHECK(full.stats.partition.full_rounds);
      CHECK(both.stats.partitions_tried > stop.stats.partitions_tried);
      CHECK(both.stats.partitions_tried <= stop.stats.partitions_tried + full.stats.partitions_tried);
      const bool has_stop = has_solution(stop.result.status), has_full = has_solution(full.result.status);
      REQUIRE(has_solution(both.result.status) == (has_stop || has_full));
      if (!has_stop && !has_full) continue;
      check_hiremate_result(g, both.result, budget);
      const auto& cheaper = !has_stop || (has_full && full.result.total_cost < stop.result.total_cost) ? full : stop;
      CHECK(both.result.plan == cheaper.result.plan);
      CHECK(both.result.total_cost == cheaper.result.total_cost);
      CHECK(both.stats.partition.full_rounds == cheaper.stats.partition.full_rounds);
      if (has_stop && has_full && full.result.total_cost != stop.result.total_cost) (&cheaper == &full ? full_wins : stop_wins) += 1;
      only_full += !has_stop;
      MESSAGE(std::string(name) << " at " << pct << "%: stopped rounds " << (has_stop ? std::to_string(stop.result.overhead) : "no plan") << ", finished "
                   << (has_full ? std::to_string(full.result.overhead) : "no plan"));
    }
  // Each kind wins somewhere (GoogLeNet at 40%; transformer at 30%), and GoogLeNet at 30% and
  // DARTS at 30% and 40% have a plan only with finished rounds.
  CHECK(full_wins >= 1);
  CHECK(stop_wins >= 1);
  CHECK(only_full >= 2);
}

TEST_CASE("hiremate: the heuristic start beside the hierarchy (two threads) gives the same plan and reports in order") {
  struct incumbents {
    std::vector<double> values;
    void on_incumbent(double, double value, double) { values.push_back(value); }
  };
  std::size_t from_start = 0, from_hierarchy = 0;
  // Under the sanitizers (where the nine cases take over two minutes) the first two: the plan of
  // the heuristic start at 30%, the hierarchy's at 70%.
  const std::vector<std::pair<std::string, int>> cases{{"gpt2_small", 30},  {"gpt2_small", 70},  {"gpt2_small", 50},
                                                       {"resnet18", 30},    {"resnet18", 50},    {"resnet18", 70},
                                                       {"transformer", 30}, {"transformer", 50}, {"transformer", 70}};
  for (const auto& [name, pct] : std::span(cases).first(MEMSCHED_TEST_UNDER_SANITIZERS ? 2 : cases.size())) {
    const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/" + name + ".training.json"));
    const std::int64_t budget = no_remat_peak(g) * pct / 100;
    INFO(name << " at " << pct << "%");
    incumbents seen_one, seen_two;
    const auto one = hiremate_plan_detailed(g, budget, hiremate_options{.threads = 1, .observer = seen_one});
    const auto two = hiremate_plan_detailed(g, budget, hiremate_options{.threads = 2, .observer = seen_two});
    REQUIRE(one.result.status == two.result.status);
    if (!has_solution(one.result.status)) continue;
    check_hiremate_result(g, two.result, budget);
    CHECK(one.result.plan == two.result.plan);
    CHECK(one.stats.source == two.stats.source);
    CHECK(one.result.stats.start_source == two.result.stats.start_source);
    CHECK(one.stats.heuristic_cost == two.stats.heuristic_cost);
    (one.stats.source == "heuristic" ? from_start : from_hierarchy) += 1;
    MESSAGE(name << " at " << pct << "%: the plan of the " << one.stats.source);
    // Each run reports strictly better values, the last one the returned plan's cost.
    for (const auto* seen : {&seen_one, &seen_two}) {
      REQUIRE(!seen->values.empty());
      for (std::size_t i = 1; i < seen->values.size(); ++i) CHECK(seen->values[i] < seen->values[i - 1]);
      CHECK(seen->values.back() == doctest::Approx(two.result.total_cost));
    }
  }
  // Both sources occur, so both orders of taking the start were exercised.
  CHECK(from_start >= 1);
  CHECK(from_hierarchy >= 1);
}

TEST_CASE("hiremate: a training graph of the test data at several budgets") {
  // Under the sanitizers 30% (resnet18: proven infeasible) and 100% only.
  const std::vector<int> percents{30, 100, 50, 80};
  for (const char* name : {"resnet18", "darts_v2_normal_cell"})
  for (int pct : std::span(percents).first(MEMSCHED_TEST_UNDER_SANITIZERS ? 2 : 4)) {
    const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/" + name + ".training.json"));
    const std::int64_t peak = no_remat_peak(g);
    const std::int64_t budget = peak * pct / 100;
    const auto r = hiremate_plan_detailed(g, budget, hiremate_options{.heuristic_start = false});
    CAPTURE(pct);
    CAPTURE(name);
    if (pct == 100) REQUIRE(has_solution(r.result.status));
    if (has_solution(r.result.status)) check_hiremate_result(g, r.result, budget);
    else CHECK(r.result.plan.steps.empty());  // never a plan over budget
    // Below the per-node bound nothing can fit: proven, and said so.
    CHECK((r.result.status == solve_status::infeasible) == (budget < peak_lower_bound(g)));
    const auto heur = heuristic_start(g, budget);
    const auto full = hiremate_plan(g, budget, hiremate_options{});
    check_cheaper_of(g, full, r.result, heur, budget);
    MESSAGE(std::string(name) << " at " << pct << "%: " << to_string(r.result.status) << " overhead " << r.result.overhead << " (" << r.result.message << ")");
  }
}

TEST_CASE("hiremate: serenity_states gives GoogLeNet's inception blocks their least-peak order") {
  // In GoogLeNet's inception blocks the no-recomputation peak is in the backward part, where the
  // order matters: some classes get the option along Serenity's order (a lower peak, no
  // recomputation), and the hierarchy's plan changes at some budgets.
  const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/googlenet.training.json"));
  const std::int64_t peak = no_remat_peak(g);
  std::size_t differ = 0;
  for (int pct : {40, 50, 60}) {
    CAPTURE(pct);
    const std::int64_t budget = peak * pct / 100;
    const auto with = hiremate_plan_detailed(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.partitions = 1}});
    const auto without = hiremate_plan_detailed(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.serenity_states = 0, .partitions = 1}});
    CHECK(with.stats.classes_serenity > 0);
    CHECK(without.stats.classes_serenity == 0);
    for (const auto* r : {&with, &without}) check_hiremate_result(g, r->result, budget);
    differ += with.result.plan != without.result.plan;
    MESSAGE(pct << "%: " << with.stats.classes_serenity << " of " << with.stats.classes_solved << " problems with Serenity's option; overhead "
                << with.result.overhead << " against " << without.result.overhead << " without");
  }
  CHECK(differ >= 1);
  // In one problem of randwire_ws_stage at 20% of the peak, Serenity's order
  // computes an outside input (0 bytes) after the barrier: the option moves the outside inputs to
  // the front, or it would not run every forward vertex first and would be dropped.
  const dataflow_graph randwire = read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/randwire_ws_stage.training.json");
  const memory_graph rg = make_memory_graph(randwire);
  const std::int64_t tight = no_remat_peak(rg) / 5;
  const auto moved = hiremate_plan_detailed(randwire, tight, hiremate_options{.heuristic_start = false});
  CHECK(moved.stats.classes_serenity == 1);
}

// Which start wins on four real graphs (a cost comparison: Release phase only; the start's code
// runs under the sanitizers in the limit and tiny-stack cases).
TEST_CASE("hiremate: the start takes Checkmate's eviction greedy where it is the cheapest" * doctest::skip(MEMSCHED_TEST_UNDER_SANITIZERS)) {
  // Budgets where one of the eviction greedy's plans along the topological order is cheaper than
  // the heuristics' and DTR's (found with the tool): the start, hence the answer, is never dearer.
  int greedy_won = 0;
  for (const auto& [name, pct] : {std::pair{"mobilenet_v2", 40}, std::pair{"gpt2_small", 70}, std::pair{"resnet50", 50}, std::pair{"resnet18", 50}}) {
    const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/" + name + ".training.json"));
    const std::int64_t budget = no_remat_peak(g) * pct / 100;
    CAPTURE(name);
    const remat_result heur = heuristic_start(g, budget);
    REQUIRE(has_solution(heur.status));
    const auto full = hiremate_plan_detailed(g, budget, hiremate_options{});
    check_hiremate_result(g, full.result, budget);
    CHECK(full.result.stats.start_source == heur.stats.method);
    CHECK(full.result.stats.start_cost == doctest::Approx(heur.total_cost).epsilon(1e-12));
    CHECK(full.result.total_cost <= heur.total_cost * (1 + 1e-12));
    greedy_won += heur.stats.method.starts_with("eviction greedy");
  }
  CHECK(greedy_won >= 3);
}

TEST_CASE("hiremate: pinned values over their live ranges give resnet18's chain plans") {
  // resnet18's level 0 interleaves branches: 20 one-vertex groups whose values are read across
  // non-adjacent groups. Counted throughout, those pinned bytes left no chain schedule at 50-80% of
  // the peak; over their live ranges they do.
  const memory_graph g = make_memory_graph(read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/resnet18.training.json"));
  const std::int64_t peak = no_remat_peak(g);
  const hiremate_partition_result part = hiremate_partition(g);
  std::vector<std::vector<std::size_t>> groups;
  for (const auto& group : part.levels.at(0).groups) groups.push_back(group.vertices);
  const detail::hiremate::chain_model ranged = detail::hiremate::make_chain(g, groups, detail::hiremate::group_owner(g, groups));
  const detail::hiremate::chain_model throughout = detail::hiremate::pinned_throughout(ranged);
  REQUIRE(ranged.pinned_ranged > 0);
  CHECK(throughout.pinned == ranged.pinned + ranged.pinned_ranged);
  for (const auto& st : ranged.stages) {
    CHECK(st.pinned_forward <= ranged.pinned_ranged);
    CHECK(st.pinned_backward <= ranged.pinned_ranged);
  }
  CHECK(ranged.stages.front().pinned_forward < ranged.stages.back().pinned_forward);  // nothing is written before stage 0
  for (int pct : {50, 60, 70, 80}) {
    const std::int64_t budget = peak * pct / 100;
    CAPTURE(pct);
    // The partition above (stopped rounds); finished rounds wrap the branches into blocks.
    const auto r = hiremate_plan_detailed(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.also_full_rounds = false}});
    REQUIRE(has_solution(r.result.status));
    check_hiremate_result(g, r.result, budget);
    CHECK(r.stats.top_method == hiremate_top_method::chain);
    REQUIRE(r.stats.chain_cost);
    CHECK(*r.stats.chain_cost == r.result.total_cost);
  }
}
