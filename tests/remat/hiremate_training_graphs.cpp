// HiRemate on the training graphs of the test data (tests/data/torch): the heuristic start beside
// the hierarchy, budgets from infeasible to the no-remat peak, partitions and rounds, Serenity's
// option, pinned values. A file of its own so that CI's sanitizer phase runs it beside
// tests/remat/hiremate.cpp (together they took 577 s there on a slow machine, against ctest's
// 600 s limit).
#include <memsched/graph/json_io.hpp>
#include <memsched/remat/hiremate.hpp>

#include "../support/hiremate_checks.hpp"
#include "../support/no_remat_peak.hpp"
#include "../support/observer_recorder.hpp"

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
using testing::observer_recorder;

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
      const auto first = hiremate_plan(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.partitions = 1, .also_full_rounds = false}});
      const auto several = hiremate_plan(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.partitions = 4, .also_full_rounds = false}});
      CHECK(first.stats.hiremate->partitions_tried == 1);
      CHECK(several.stats.hiremate->partitions_tried >= 1);
      CHECK(several.stats.hiremate->partitions_tried <= 4);
      if (!has_solution(first.status)) continue;
      REQUIRE(has_solution(several.status));
      check_hiremate_result(g, several, budget);
      CHECK(several.total_cost <= first.total_cost);
      cheaper += several.total_cost < first.total_cost;
      // The winner is M^l x 2^j, and one partition at that M^l gives the same plan.
      const std::size_t ml = several.stats.hiremate->max_lower;
      CHECK(ml % first.stats.hiremate->max_lower == 0);
      CHECK(std::has_single_bit(ml / first.stats.hiremate->max_lower));
      const auto direct = hiremate_plan(
          g, budget, hiremate_options{.partition = {.max_lower = ml}, .heuristic_start = false, .tuning = {.partitions = 1, .also_full_rounds = false}});
      CHECK(direct.plan == several.plan);
      CHECK(direct.stats.hiremate->groups == several.stats.hiremate->groups);
      // The winner's problems: solved there or taken from a finer partition's (the same options:
      // the plans above are equal); one partition reuses nothing.
      CHECK(several.stats.hiremate->classes_solved + several.stats.hiremate->classes_reused == direct.stats.hiremate->classes_solved);
      CHECK(direct.stats.hiremate->classes_reused == 0);
      CHECK(first.stats.hiremate->classes_reused == 0);
      if (ml == first.stats.hiremate->max_lower) CHECK(several.stats.hiremate->classes_reused == 0);
      reused += several.stats.hiremate->classes_reused > 0;
      MESSAGE(std::string(name) << " at " << pct << "%: M^l " << first.stats.hiremate->max_lower << " " << first.overhead << ", best of "
                   << several.stats.hiremate->partitions_tried << " partitions (M^l " << ml << ") " << several.overhead);
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
      const auto stop = hiremate_plan(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.also_full_rounds = false}});
      const auto full = hiremate_plan(
          g, budget, hiremate_options{.partition = {.stop_at_max_top = false}, .heuristic_start = false, .tuning = {.also_full_rounds = false}});
      const auto both = hiremate_plan(g, budget, hiremate_options{.heuristic_start = false});
      CHECK_FALSE(stop.stats.hiremate->partition.full_rounds);
      CHECK(full.stats.hiremate->partition.full_rounds);
      CHECK(both.stats.hiremate->partitions_tried > stop.stats.hiremate->partitions_tried);
      CHECK(both.stats.hiremate->partitions_tried <= stop.stats.hiremate->partitions_tried + full.stats.hiremate->partitions_tried);
      const bool has_stop = has_solution(stop.status), has_full = has_solution(full.status);
      REQUIRE(has_solution(both.status) == (has_stop || has_full));
      if (!has_stop && !has_full) continue;
      check_hiremate_result(g, both, budget);
      const auto& cheaper = !has_stop || (has_full && full.total_cost < stop.total_cost) ? full : stop;
      CHECK(both.plan == cheaper.plan);
      CHECK(both.total_cost == cheaper.total_cost);
      CHECK(both.stats.hiremate->partition.full_rounds == cheaper.stats.hiremate->partition.full_rounds);
      if (has_stop && has_full && full.total_cost != stop.total_cost) (&cheaper == &full ? full_wins : stop_wins) += 1;
      only_full += !has_stop;
      MESSAGE(std::string(name) << " at " << pct << "%: stopped rounds " << (has_stop ? std::to_string(stop.overhead) : "no plan") << ", finished "
                   << (has_full ? std::to_string(full.overhead) : "no plan"));
    }
  // Each kind wins somewhere (GoogLeNet at 40%; transformer at 30%), and GoogLeNet at 30% and
  // DARTS at 30% and 40% have a plan only with finished rounds.
  CHECK(full_wins >= 1);
  CHECK(stop_wins >= 1);
  CHECK(only_full >= 2);
}

TEST_CASE("hiremate: the heuristic start beside the hierarchy (two threads) gives the same plan and reports in order") {
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
    observer_recorder seen_one, seen_two;
    const auto one = hiremate_plan(g, budget, hiremate_options{.threads = 1, .observer = seen_one});
    const auto two = hiremate_plan(g, budget, hiremate_options{.threads = 2, .observer = seen_two});
    REQUIRE(one.status == two.status);
    if (!has_solution(one.status)) continue;
    check_hiremate_result(g, two, budget);
    CHECK(one.plan == two.plan);
    CHECK(one.stats.hiremate->source == two.stats.hiremate->source);
    CHECK(one.stats.start_source == two.stats.start_source);
    CHECK(one.stats.hiremate->heuristic_cost == two.stats.hiremate->heuristic_cost);
    (one.stats.hiremate->source == "heuristic" ? from_start : from_hierarchy) += 1;
    MESSAGE(name << " at " << pct << "%: the plan of the " << one.stats.hiremate->source);
    // Each run reports strictly better values, the last one the returned plan's cost.
    for (const auto* seen : {&seen_one, &seen_two}) {
      REQUIRE(!seen->values.empty());
      for (std::size_t i = 1; i < seen->values.size(); ++i) CHECK(seen->values[i] < seen->values[i - 1]);
      CHECK(seen->values.back() == doctest::Approx(two.total_cost));
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
    const auto r = hiremate_plan(g, budget, hiremate_options{.heuristic_start = false});
    CAPTURE(pct);
    CAPTURE(name);
    REQUIRE(r.stats.hiremate.has_value());  // the hierarchy's statistics come with every answer, plan or not
    if (pct == 100) REQUIRE(has_solution(r.status));
    if (has_solution(r.status)) check_hiremate_result(g, r, budget);
    else CHECK(r.plan.steps.empty());  // never a plan over budget
    // Below the per-node bound nothing can fit: proven, and said so.
    CHECK((r.status == solve_status::infeasible) == (budget < peak_lower_bound(g)));
    const auto heur = heuristic_start(g, budget);
    const auto full = hiremate_plan(g, budget, hiremate_options{});
    check_cheaper_of(g, full, r, heur, budget);
    MESSAGE(std::string(name) << " at " << pct << "%: " << to_string(r.status) << " overhead " << r.overhead << " (" << r.message << ")");
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
    const auto with = hiremate_plan(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.partitions = 1}});
    const auto without = hiremate_plan(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.serenity_states = 0, .partitions = 1}});
    CHECK(with.stats.hiremate->classes_serenity > 0);
    CHECK(without.stats.hiremate->classes_serenity == 0);
    for (const auto* r : {&with, &without}) check_hiremate_result(g, *r, budget);
    differ += with.plan != without.plan;
    MESSAGE(pct << "%: " << with.stats.hiremate->classes_serenity << " of " << with.stats.hiremate->classes_solved << " problems with Serenity's option; overhead "
                << with.overhead << " against " << without.overhead << " without");
  }
  CHECK(differ >= 1);
  // In one problem of randwire_ws_stage at 20% of the peak, Serenity's order
  // computes an outside input (0 bytes) after the barrier: the option moves the outside inputs to
  // the front, or it would not run every forward vertex first and would be dropped.
  const dataflow_graph randwire = read_json_graph(std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/randwire_ws_stage.training.json");
  const memory_graph rg = make_memory_graph(randwire);
  const std::int64_t tight = no_remat_peak(rg) / 5;
  const auto moved = hiremate_plan(randwire, tight, hiremate_options{.heuristic_start = false});
  CHECK(moved.stats.hiremate->classes_serenity == 1);
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
    const auto full = hiremate_plan(g, budget, hiremate_options{});
    check_hiremate_result(g, full, budget);
    CHECK(full.stats.start_source == heur.stats.method);
    CHECK(full.stats.start_cost == doctest::Approx(heur.total_cost).epsilon(1e-12));
    CHECK(full.total_cost <= heur.total_cost * (1 + 1e-12));
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
    const auto r = hiremate_plan(g, budget, hiremate_options{.heuristic_start = false, .tuning = {.also_full_rounds = false}});
    REQUIRE(has_solution(r.status));
    check_hiremate_result(g, r, budget);
    CHECK(r.stats.hiremate->top_method == hiremate_top_method::chain);
    REQUIRE(r.stats.hiremate->chain_cost);
    CHECK(*r.stats.hiremate->chain_cost == r.total_cost);
  }
}
