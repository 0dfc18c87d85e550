// `memsched remat --algo hiremate`: runs the built tool (MEMSCHED_TOOL_PATH); the plan it prints is
// re-simulated against the graph, and the partition statistics are checked against the library.

#include <memsched/graph/json_io.hpp>
#include <memsched/remat/hiremate.hpp>
#include <memsched/sim/plan_io.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/no_remat_peak.hpp"
#include "../support/random_cases.hpp"
#include "../support/run_tool.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;

TEST_CASE("memsched remat --algo hiremate: valid plan within the budget, partition statistics") {
  const temp_dir dir;
  const std::filesystem::path path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "torch" / "resnet18.training.json";
  const dataflow_graph df = read_json_graph(path);  // with ops, as the tool reads it (ops decide the classes)
  const memory_graph g = make_memory_graph(df);
  const std::vector<std::int64_t>& ids = g.all_ids();
  const auto& topo = g.topological_order();
  const std::int64_t peak = simulate_order(g, std::vector<std::size_t>(topo.begin(), topo.end())).peak_bytes;
  // Under the sanitizers the tightest budget only: each budget is a library run and a tool run.
  const std::vector<int> pcts = MEMSCHED_TEST_UNDER_SANITIZERS ? std::vector<int>{60} : std::vector<int>{60, 80, 100};
  for (int pct : pcts) {
    CAPTURE(pct);
    const std::int64_t budget = peak * pct / 100;
    const json doc = run_tool_json(
        "remat " + path.string() + " --budget " + std::to_string(budget) + " --algo hiremate --threads 2 --json", dir);
    const auto lib = hiremate_plan(df, budget, hiremate_options{.threads = 1});
    REQUIRE(doc.at("status") == std::string(to_string(lib.status)));
    const auto& h = doc.at("hiremate");
    CHECK(h.at("levels") == lib.stats.hiremate->partition.levels);
    CHECK(h.at("groups") == lib.stats.hiremate->groups);
    CHECK(h.at("max_lower") == lib.stats.hiremate->max_lower);
    CHECK(h.at("distinct_subgraphs") == lib.stats.hiremate->partition.distinct_subgraphs);
    CHECK(h.at("largest_subgraph") == lib.stats.hiremate->partition.largest_subgraph);
    CHECK(h.at("source") == lib.stats.hiremate->source);
    CHECK(h.at("partitions_tried") == lib.stats.hiremate->partitions_tried);
    CHECK(h.at("partition_rounds") == (lib.stats.hiremate->partition.full_rounds ? "full" : "stop"));
    CHECK(h.at("problems_solved") == lib.stats.hiremate->classes_solved);
    CHECK(h.at("problems_reused") == lib.stats.hiremate->classes_reused);
    CHECK(h.at("problems_serenity") == lib.stats.hiremate->classes_serenity);
    CHECK(!h.contains("lower_solver_calls"));  // no --lower-solver: the default lowest level
    // Which levels were solved to optimality: the library's reports, lowest first.
    REQUIRE(h.at("level_reports").size() == lib.stats.hiremate->level_reports.size());
    REQUIRE(!lib.stats.hiremate->level_reports.empty());
    for (std::size_t l = 0; l < lib.stats.hiremate->level_reports.size(); ++l) {
      const auto& want = lib.stats.hiremate->level_reports[l];
      const auto& got = h.at("level_reports").at(l);
      CHECK(got.at("level") == std::string(to_string(want.level)));
      CHECK(got.at("solves") == want.solves);
      CHECK(got.at("proven") == want.proven);
      CHECK(got.at("cut") == want.cut);
      CHECK(got.at("optimal") == want.optimal());
      CHECK(got.contains("method") == (want.method != hiremate_top_method::none));
    }
    if (!has_solution(lib.status)) continue;
    const execution_plan plan = plan_from_json(doc, ids, "tool output");
    CHECK(plan == lib.plan);
    const plan_simulation sim = simulate_plan(g, plan);
    CHECK(sim.peak_bytes <= budget);
    CHECK(doc.at("peak_bytes") == sim.peak_bytes);
  }
  // The previous defaults through the flags: the library's plan with the same options.
  {
    const std::int64_t budget = peak * 90 / 100;
    const json doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(budget) +
                                       " --algo hiremate --options 4 --resident-levels 0 --no-heuristic-start --no-dtr --json",
                                   dir);
    const auto lib = hiremate_plan(df, budget, hiremate_options{.dtr = false, .heuristic_start = false, .tuning = {.max_options = 4, .resident_levels = 0}});
    REQUIRE(has_solution(lib.status));  // measured: the hierarchy plans resnet18 at 90% (+0.13%)
    REQUIRE(doc.at("status") == std::string(to_string(lib.status)));
    CHECK(plan_from_json(doc, ids, "tool output") == lib.plan);
  }
  // --max-chain-stages reaches the library: a cap of 8 groups doubles M^l from 4 (with M^t = 4:
  // the partition stops wrapping at M^t nodes).
  {
    const std::int64_t budget = peak * 80 / 100;
    const json doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(budget) +
                                       " --algo hiremate --max-lower 4 --max-top 4 --max-chain-stages 8 --no-heuristic-start"
                                       " --json",
                                   dir);
    const auto lib =
        hiremate_plan(df, budget, hiremate_options{.partition = {.max_lower = 4, .max_top = 4}, .heuristic_start = false, .tuning = {.max_chain_stages = 8}});
    CHECK(lib.stats.hiremate->max_lower > 4);
    CHECK(lib.stats.hiremate->groups <= 8);
    CHECK(doc.at("hiremate").at("max_lower") == lib.stats.hiremate->max_lower);
    CHECK(doc.at("hiremate").at("groups") == lib.stats.hiremate->groups);
    REQUIRE(doc.at("status") == std::string(to_string(lib.status)));
    if (has_solution(lib.status)) CHECK(plan_from_json(doc, ids, "tool output") == lib.plan);
  }
  // --max-memory reaches the library: a small cap coarsens the top-level tables, and the tool's
  // plan is the library's with the same cap (measured at 80%: 64 KiB gives the groups' plan,
  // +11% cost, instead of the chain's). --merge-spans 0 keeps resnet18's 30 groups: merged, the
  // tables are too small for the cap to change the plan; --partitions 1 --partition-rounds stop
  // keeps that one partition.
  {
    const std::int64_t budget = peak * 80 / 100;
    const json doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(budget) +
                                       " --algo hiremate --max-memory 65536 --merge-spans 0 --partitions 1 --partition-rounds stop"
                                       " --no-heuristic-start --json",
                                   dir);
    const auto capped = hiremate_plan(
        df, budget, hiremate_options{.max_bytes = 65536, .heuristic_start = false, .tuning = {.merge_spans = 0, .partitions = 1, .also_full_rounds = false}});
    const auto uncapped =
        hiremate_plan(df, budget, hiremate_options{.heuristic_start = false, .tuning = {.merge_spans = 0, .partitions = 1, .also_full_rounds = false}});
    REQUIRE(has_solution(capped.status));
    REQUIRE(has_solution(uncapped.status));
    CHECK(capped.plan != uncapped.plan);  // otherwise this case could not tell the flag was read
    CHECK(doc.at("hiremate").at("partitions_tried") == 1);
    const execution_plan plan = plan_from_json(doc, ids, "tool output");
    CHECK(plan == capped.plan);
    CHECK(simulate_plan(g, plan).peak_bytes <= budget);
  }
  // --levels, --nested-resident-levels, --nested-partitions, --nested-chain-units and
  // --nested-start-dtr reach the library: the third level's plan (level 1's groups, each solved by
  // two-level hierarchies), the same as the library's (measured: at 50% the third level wins with
  // the default 1 squeezed nested solve; at 40% and 60-90% the two-level solve of the same grain
  // does), as many nested hierarchies and as many partitions tried in them, the same hierarchy cost.
  const hiremate_options defaults;
  struct nested_case {
    std::string flags;
    std::size_t resident_levels, partitions, chain_units;
    bool start_dtr;
    bool heuristic_start;  // DTR in the nested starts matters only with the starts
    int pct;               // of the peak
  };
  // (At 50% the nested chain tables do not change the plan; at 45% they do.)
  const nested_case cases[] = {{"", 1, 1, defaults.tuning.nested_chain_units, false, false, 50},
                               {" --nested-resident-levels 0", 0, 1, defaults.tuning.nested_chain_units, false, false, 50},
                               {" --nested-partitions 3", 1, 3, defaults.tuning.nested_chain_units, false, false, 50},
                               {" --nested-chain-units 0", 1, 1, 0, false, false, 45},
                               {"", 1, 1, defaults.tuning.nested_chain_units, false, false, 45},
                               {"", 1, 1, defaults.tuning.nested_chain_units, false, true, 50},
                               {" --nested-start-dtr", 1, 1, defaults.tuning.nested_chain_units, true, true, 50}};
  std::vector<hiremate_stats> nested_stats;
  std::vector<execution_plan> nested_plans;
  for (const nested_case& c : cases) {
    CAPTURE(c.flags);
    CAPTURE(c.pct);
    CAPTURE(c.heuristic_start);
    const std::int64_t budget = peak * c.pct / 100;
    const json doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(budget) +
                                       " --algo hiremate --levels 3 --max-lower 6 --max-top 4 --budgets 4 --resident-levels 1" + c.flags +
                                       " --partitions 1 --partition-rounds stop --merge-spans 0" + (c.heuristic_start ? "" : " --no-heuristic-start") + " --json",
                                   dir);
    const auto lib = hiremate_plan(df, budget, hiremate_options{.partition = {.max_lower = 6, .max_top = 4}, .levels = 3, .heuristic_start = c.heuristic_start, .tuning = {.budgets = 4, .resident_levels = 1, .merge_spans = 0, .partitions = 1, .also_full_rounds = false, .nested_resident_levels = c.resident_levels, .nested_partitions = c.partitions, .nested_chain_units = c.chain_units, .nested_start_dtr = c.start_dtr}});
    REQUIRE(has_solution(lib.status));
    REQUIRE(lib.stats.hiremate->hierarchy_cost);
    CHECK(doc.at("hiremate").at("hierarchy_levels") == lib.stats.hiremate->levels);
    CHECK(doc.at("hiremate").at("groups") == lib.stats.hiremate->groups);
    CHECK(doc.at("hiremate").at("nested_hierarchies") == lib.stats.hiremate->nested_hierarchies);
    CHECK(doc.at("hiremate").at("nested_partitions_tried") == lib.stats.hiremate->nested_partitions_tried);
    CHECK(doc.at("hiremate").at("hierarchy_cost") == *lib.stats.hiremate->hierarchy_cost);
    const execution_plan plan = plan_from_json(doc, ids, "tool output");
    CHECK(plan == lib.plan);
    CHECK(simulate_plan(g, plan).peak_bytes <= budget);
    nested_stats.push_back(*lib.stats.hiremate);
    nested_plans.push_back(plan);
  }
  // Otherwise this test could not tell that each flag was read.
  CHECK(nested_stats[0].levels == 3);
  CHECK(nested_stats[1].nested_hierarchies > 0);
  CHECK(nested_stats[0].nested_hierarchies > nested_stats[1].nested_hierarchies);
  CHECK(nested_stats[0].nested_partitions_tried == nested_stats[0].nested_hierarchies);
  CHECK(nested_stats[2].nested_partitions_tried > nested_stats[2].nested_hierarchies);
  CHECK(nested_plans[3] != nested_plans[4]);
  CHECK(nested_stats[5].hierarchy_cost != nested_stats[6].hierarchy_cost);
  const tool_run bad_units = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --nested-chain-units 8", dir);
  CHECK(bad_units.exit_code == 2);
  CHECK(bad_units.err.find("--nested-chain-units must be 0 or >= 16") != std::string::npos);
  const tool_run bad_partitions = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --nested-partitions 0", dir);
  CHECK(bad_partitions.exit_code == 2);
  CHECK(bad_partitions.err.find("--nested-partitions must be in 1..16") != std::string::npos);
  const tool_run nested = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --nested-resident-levels -1", dir);
  CHECK(nested.exit_code == 2);
  CHECK(nested.err.find("--nested-resident-levels") != std::string::npos);
  const tool_run levels = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --levels 5", dir);
  CHECK(levels.exit_code == 2);
  CHECK(levels.err.find("--levels must be in 2..4") != std::string::npos);
  const tool_run memory = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --max-memory 0", dir);
  CHECK(memory.exit_code == 2);
  CHECK(memory.err.find("--max-memory must be a whole number of bytes > 0") != std::string::npos);
  // Usage errors.
  const tool_run lower = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --max-lower 1", dir);
  CHECK(lower.exit_code == 2);
  CHECK(lower.err.find("memsched remat: --max-lower must be >= 2, got 1\n") != std::string::npos);  // the flag, named
  const tool_run options = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --options 0", dir);
  CHECK(options.exit_code == 2);
  // max_options has no flag of its name (--options sets it): the library's message names the option.
  CHECK(options.err.find("memsched remat: hiremate_plan: tuning.max_options must be in 1..254\n") != std::string::npos);
  CHECK(run_tool("remat " + path.string() + " --budget 50% --algo hiremate --options 255", dir).exit_code == 2);
  CHECK(run_tool("remat " + path.string() + " --budget 50% --algo hiremate --resident-levels -1", dir).exit_code == 2);
  const tool_run stages = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --max-chain-stages -2", dir);
  CHECK(stages.exit_code == 2);
  CHECK(stages.err.find("--max-chain-stages") != std::string::npos);
  const tool_run below_top = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --max-chain-stages 10", dir);
  CHECK(below_top.exit_code == 2);
  CHECK(below_top.err.find("--max-chain-stages must be 0 or >= the partition's max_top (M^t)") != std::string::npos);
  const tool_run partitions = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --partitions 0", dir);
  CHECK(partitions.exit_code == 2);
  CHECK(partitions.err.find("--partitions must be in 1..16") != std::string::npos);
  const tool_run top = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --top-solver simplex", dir);
  CHECK(top.exit_code == 2);
  CHECK(top.err.find("--top-solver 'simplex' is not available (built: none") != std::string::npos);
  const tool_run free_alone = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --hilp-free", dir);
  CHECK(free_alone.exit_code == 2);
  CHECK(free_alone.err.find("--hilp-free needs --top-solver") != std::string::npos);
  const tool_run lower_solver = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --lower-solver simplex", dir);
  CHECK(lower_solver.exit_code == 2);
  CHECK(lower_solver.err.find("--lower-solver 'simplex' is not available (built: none") != std::string::npos);
}

#ifdef MEMSCHED_HAVE_CBC
namespace {
// resnet18's training graph and its vertex ids (to read the tool's plan back).
struct resnet18_training {
  std::filesystem::path path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "torch" / "resnet18.training.json";
  memory_graph graph = make_memory_graph(read_json_graph(path));
  std::vector<std::int64_t> ids = [this] {
    std::vector<std::int64_t> out;
    for (std::size_t v = 0; v < graph.size(); ++v) out.push_back(static_cast<std::int64_t>(graph.id(v)));
    return out;
  }();
};
}  // namespace

TEST_CASE("memsched remat --algo hiremate --top-solver cbc --hilp-free: the FREE variables reach the H-ILP") {
  const temp_dir dir;
  const resnet18_training t;
  const auto& path = t.path;
  const auto& g = t.graph;
  const auto& ids = t.ids;
  const std::int64_t budget = no_remat_peak(g) / 2;
  // The models' sizes do not depend on how far CBC gets, so a short time limit keeps this cheap.
  std::size_t variables[2] = {0, 0}, with_start = 0;
  for (const bool free_values : {false, true}) {
    const json doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(budget) +
                                       " --algo hiremate --top-solver cbc --partitions 1 --time-limit 4 --json" +
                                       (free_values ? " --hilp-free" : ""),
                                   dir);
    REQUIRE(doc.at("status") == "feasible");
    const json& h = doc.at("hiremate");
    variables[free_values] = h.at("hilp_variables").get<std::size_t>();
    CHECK(simulate_plan(g, plan_from_json(doc, ids, "tool output")).peak_bytes <= budget);
    // CBC starts from the cheapest start that fits the model: its answer is no dearer, and a bound
    // it proves is no higher than its answer. (Under a 4 s limit on a loaded machine the chain's
    // start can be cut short, so a run may have no start.)
    if (h.contains("hilp_start_objective")) {
      ++with_start;
      const double start = h.at("hilp_start_objective").get<double>(), answer = h.at("hilp_objective").get<double>();
      CHECK(answer > 0);
      CHECK(answer <= start * (1 + 1e-9));
      if (h.contains("hilp_bound")) CHECK(h.at("hilp_bound").get<double>() <= answer * (1 + 1e-9));
    }
  }
  CHECK(with_start >= 1);
  MESSAGE("H-ILP variables: " << variables[0] << " without FREE, " << variables[1] << " with");
  CHECK(variables[0] > 0);
  CHECK(variables[1] > variables[0]);
}

TEST_CASE("memsched remat --algo hiremate --lower-solver cbc: Checkmate's MILP at the lowest level, a plan within the budget") {
  const temp_dir dir;
  const resnet18_training t;
  const auto& path = t.path;
  const auto& g = t.graph;
  const auto& ids = t.ids;
  const std::int64_t budget = no_remat_peak(g) * 6 / 10;
  // Two budgets per class (each MILP may take its 1 s; the larger budget needs no recomputation,
  // which the MILP proves without a search): the flag's path, not the plan's quality.
  const json doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(budget) +
                                     " --algo hiremate --lower-solver cbc --budgets 2 --resident-levels 0 --partitions 1"
                                     " --partition-rounds stop --no-heuristic-start --json",
                                 dir);
  REQUIRE(doc.at("status") == "feasible");
  CHECK(doc.at("hiremate").at("source") == "hierarchy");
  // The flag reached the library: with one partition (one grain, stopped rounds), two budgets and
  // no squeezed solves, each subgraph problem is solved once or twice (equal budgets once), every
  // time by the lower solver.
  const int problems = doc.at("hiremate").at("problems_solved").get<int>();
  const int calls = doc.at("hiremate").at("lower_solver_calls").get<int>();
  CHECK(problems >= 1);
  CHECK(calls >= problems);
  CHECK(calls <= 2 * problems);
  CHECK(simulate_plan(g, plan_from_json(doc, ids, "tool output")).peak_bytes <= budget);
}
#endif

TEST_CASE("memsched remat --algo hiremate --serenity-states: GoogLeNet's options along Serenity's order") {
  const temp_dir dir;
  const std::filesystem::path path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "torch" / "googlenet.training.json";
  const dataflow_graph df = read_json_graph(path);
  const memory_graph g = make_memory_graph(df);
  const std::vector<std::int64_t>& ids = g.all_ids();
  const std::int64_t budget = no_remat_peak(g) / 2;
  std::vector<execution_plan> plans;
  std::vector<std::size_t> counts;
  for (const std::uint64_t states : {hiremate_options{}.tuning.serenity_states, std::uint64_t{0}}) {
    CAPTURE(states);
    const json doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(budget) + " --algo hiremate --partitions 1" +
                                       (states == 0 ? " --serenity-states 0" : "") + " --no-heuristic-start --json",
                                   dir);
    const auto lib = hiremate_plan(df, budget, hiremate_options{.heuristic_start = false, .tuning = {.serenity_states = states, .partitions = 1}});
    REQUIRE(has_solution(lib.status));
    CHECK(doc.at("hiremate").at("problems_serenity") == lib.stats.hiremate->classes_serenity);
    const execution_plan plan = plan_from_json(doc, ids, "tool output");
    CHECK(plan == lib.plan);
    CHECK(simulate_plan(g, plan).peak_bytes <= budget);
    plans.push_back(plan);
    counts.push_back(lib.stats.hiremate->classes_serenity);
  }
  // Otherwise this test could not tell that the flag was read.
  CHECK(counts[0] > 0);
  CHECK(counts[1] == 0);
  CHECK(plans[0] != plans[1]);
  const tool_run bad = run_tool("remat " + path.string() + " --budget 50% --algo hiremate --serenity-states -1", dir);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--serenity-states") != std::string::npos);
}

TEST_CASE("memsched remat --algo hiremate --partition-rounds: stopped, finished or both kinds of H-Partition's rounds") {
  // GoogLeNet at 30% of the peak: with stopped rounds the hierarchy has no plan (the first
  // inception blocks stay split into branches); with finished rounds it has one (measured +7.7%).
  const temp_dir dir;
  const std::filesystem::path path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "torch" / "googlenet.training.json";
  const dataflow_graph df = read_json_graph(path);
  const memory_graph g = make_memory_graph(df);
  const std::int64_t budget = no_remat_peak(g) * 30 / 100;
  struct rounds_case {
    const char* flag;
    hiremate_options options;
  };
  const rounds_case cases[] = {
      {"stop", {.heuristic_start = false, .tuning = {.also_full_rounds = false}}},
      {"full", {.partition = {.stop_at_max_top = false}, .heuristic_start = false, .tuning = {.also_full_rounds = false}}},
      {"both", {.heuristic_start = false}},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.flag));
    // Under the sanitizers "stop" and the default "both" only: "both" runs the full rounds too.
    if (MEMSCHED_TEST_UNDER_SANITIZERS && std::string(c.flag) == "full") continue;
    const auto lib = hiremate_plan(df, budget, c.options);
    // Without a plan the tool prints its JSON and exits with 2.
    const tool_run run = run_tool("remat " + path.string() + " --budget " + std::to_string(budget) + " --algo hiremate --partition-rounds " +
                                      c.flag + " --no-heuristic-start --json",
                                  dir);
    CHECK(run.exit_code == (has_solution(lib.status) ? 0 : 2));
    const json doc = json::parse(run.out);
    REQUIRE(doc.at("status") == std::string(to_string(lib.status)));
    CHECK(doc.at("hiremate").at("partitions_tried") == lib.stats.hiremate->partitions_tried);
    CHECK(doc.at("hiremate").at("partition_rounds") == (lib.stats.hiremate->partition.full_rounds ? "full" : "stop"));
    if (std::string(c.flag) == "stop") {
      CHECK_FALSE(has_solution(lib.status));
      continue;
    }
    REQUIRE(has_solution(lib.status));
    CHECK(lib.stats.hiremate->partition.full_rounds);
    const execution_plan plan = plan_from_json(doc, g.all_ids(), "tool output");
    CHECK(plan == lib.plan);
    CHECK(simulate_plan(g, plan).peak_bytes <= budget);
  }
  const tool_run bad = run_tool("remat " + path.string() + " --budget 30% --algo hiremate --partition-rounds some", dir);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--partition-rounds") != std::string::npos);
}
