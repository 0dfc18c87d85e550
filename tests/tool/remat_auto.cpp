// `memsched remat --algo auto`: runs the built tool (MEMSCHED_TOOL_PATH); its plan is the library's
// remat_plan along the same input order (re-simulated against the graph), the JSON carries the
// method and the bound, and its flags are checked.

#include <memsched/graph/json_io.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/remat_plan.hpp>
#include <memsched/sim/plan_io.hpp>
#include <memsched/sim/simulate_plan.hpp>
#ifdef MEMSCHED_HAVE_CBC
#include <memsched/solver/backends/cbc.hpp>
#endif

#include "../support/random_dag.hpp"
#include "../support/run_tool.hpp"
#include "../support/training_chain.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;

namespace {

/// support/training_chain.hpp's chain, with its roles, as a graph file: x0 -> x1 -> x2 -> loss;
/// gradients g2, g1, g0 (the output); 10 bytes and cost 1 each.
std::filesystem::path write_training_chain(const temp_dir& dir) {
  const std::filesystem::path path = dir / "chain.json";
  write_json_graph(path, to_dataflow_graph(training_chain_with_roles_data()));
  return path;
}

}  // namespace

TEST_CASE("memsched remat --algo auto: the library's plan along Kahn's order on resnet18, usage errors") {
  const temp_dir dir;
  const std::filesystem::path path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "torch" / "resnet18.training.json";
  const dataflow_graph df = read_json_graph(path);
  const memory_graph g = make_memory_graph(df);
  const std::vector<std::int64_t>& ids = g.all_ids();
  const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
  const std::vector<std::size_t> kahn = remat_input_order(df, input_order_options{.source = input_order_source::kahn}).order;
  std::size_t plans = 0, skipped_methods = 0;
  for (int pct : {50, 70, 90}) {
    CAPTURE(pct);
    const std::int64_t budget = peak * pct / 100;
    // No MILP and no time limit (a limit beyond 10^9 s is none): the same plan on every run.
    const tool_run r = run_tool("remat " + path.string() + " --budget " + std::to_string(budget) +
                                    " --algo auto --backend none --order-from kahn --lifetime-rounds 10 --time-limit 1e12 --json",
                                dir);
    const remat_result lib = remat_plan(df, budget, remat_plan_options{.order = kahn, .lifetime_rounds = 10});
    CHECK(r.exit_code == (has_solution(lib.status) ? 0 : 2));
    const json doc = json::parse(r.out);
    REQUIRE(doc.at("status") == std::string(to_string(lib.status)));
    CHECK(doc.at("algorithm") == "auto");
    CHECK(doc.at("backend") == "none");
    CHECK(doc.at("order_source") == "kahn");
    CHECK(doc.contains("cost_bound"));
    CHECK(doc.at("cost_bound").is_null() == !lib.cost_bound);
    if (!has_solution(lib.status)) continue;
    ++plans;
    CHECK(doc.at("method") == lib.stats.method);
    const execution_plan plan = plan_from_json(doc, ids, "tool output");
    CHECK(plan == lib.plan);
    const plan_simulation sim = simulate_plan(g, plan);
    CHECK(sim.peak_bytes <= budget);
    CHECK(doc.at("peak_bytes") == sim.peak_bytes);
    CHECK(doc.at("total_cost").get<double>() == doctest::Approx(sim.total_cost));
    CHECK(doc.at("total_cost").get<double>() == doctest::Approx(lib.total_cost));
    // --skip: the library's plan without those stages.
    const json skipped_doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(budget) +
                                               " --algo auto --backend none --order-from kahn --lifetime-rounds 10"
                                               " --skip eviction-greedy,hiremate --time-limit 1e12 --json",
                                           dir);
    const remat_result lib_skipped =
        remat_plan(df, budget, remat_plan_options{.order = kahn, .eviction_greedy = false, .lifetime_rounds = 10, .hiremate = false});
    REQUIRE(has_solution(lib_skipped.status));
    CHECK(skipped_doc.at("method") == lib_skipped.stats.method);
    CHECK(skipped_doc.at("method") != "hiremate");
    CHECK(plan_from_json(skipped_doc, ids, "tool output") == lib_skipped.plan);
    skipped_methods += lib_skipped.stats.method != lib.stats.method;
  }
  CHECK(plans == 3);
  MESSAGE(skipped_methods << " of 3 budgets return another method with --skip eviction-greedy,hiremate");
  // Usage errors: exit 2, nothing on standard output, the flag named.
  const std::string base = "remat " + path.string() + " --budget 70% --algo auto";
  for (const std::string bad : {" --order-from anywhere", " --lifetime-rounds -1", " --ladder-steps -1", " --ladder-steps 1001", " --skip milp", " --backend nope", " --dtr-heuristic lru", " --time-limit 0", " --threads -1"}) {
    CAPTURE(bad);
    const tool_run r = run_tool(base + bad, dir);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(bad.substr(1, bad.find(' ', 1) - 1)) != std::string::npos);
  }
  // An unknown backend: the built ones listed, blank-separated, "none" last.
  const tool_run nope = run_tool(base + " --backend nope", dir);
  std::string built = "(built:";
#ifdef MEMSCHED_HAVE_CBC
  built += " cbc";
#endif
#ifdef MEMSCHED_HAVE_GLPK
  built += " glpk";
#endif
  built += " none)";
  CHECK(nope.err.find("--backend 'nope' is not available for auto " + built) != std::string::npos);
}

TEST_CASE("memsched remat --algo auto --order-from free: the file's order and the best one, each order's cost; TDI 0 where the best order fits") {
  const temp_dir dir;
  const std::filesystem::path path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "moccasin" / "random_layered_n100.json";
  const dataflow_graph df = read_json_graph(path);
  const memory_graph g = make_memory_graph(df);
  const input_order_result file_order = remat_input_order(df, input_order_options{.source = input_order_source::graph});
  const input_order_result best = remat_input_order(df, input_order_options{.source = input_order_source::best, .serenity_time_limit = std::chrono::duration<double>(30), .serenity_max_states = 100'000});
  REQUIRE(best.peak_bytes < file_order.peak_bytes);  // the file's order does not fit at the best order's peak
  const json doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(best.peak_bytes) +
                                     " --algo auto --backend none --order-from free --lifetime-rounds 10 --time-limit 1e12"
                                     " --json",
                                 dir);
  CHECK(doc.at("status") == "optimal");
  CHECK(doc.at("overhead").get<double>() == doctest::Approx(0));
  CHECK(doc.at("order_source") == "free");
  const json& orders = doc.at("orders");
  REQUIRE(orders.size() == 3);  // the two orders, then free_order_plan's
  CHECK(orders[0].at("source") == file_order.source);
  CHECK(orders[0].at("peak_bytes") == file_order.peak_bytes);
  CHECK(orders[1].at("source") == "best");
  CHECK(orders[1].at("peak_bytes") == best.peak_bytes);
  CHECK(orders[1].at("overhead").get<double>() == doctest::Approx(0));
  CHECK(orders[2].at("source") == "free-order");
  CHECK(orders[2].at("peak_bytes").is_null());
  CHECK(orders[2].at("overhead").get<double>() == doctest::Approx(0));  // Serenity's order of the uncopied graph fits
  // Along the file's order alone the same budget needs recomputation.
  const remat_result along_file = remat_plan(df, best.peak_bytes, remat_plan_options{.order = file_order.order, .lifetime_rounds = 10});
  if (has_solution(along_file.status)) {
    CHECK(along_file.overhead > 0);
    CHECK(orders[0].at("total_cost").get<double>() == doctest::Approx(along_file.total_cost));
  } else {
    CHECK(orders[0].at("total_cost").is_null());
  }
  // The library's plan over the same two orders.
  const remat_result lib = remat_plan(
      df, best.peak_bytes, remat_plan_options{.order = file_order.order, .more_orders = {best.order}, .lifetime_rounds = 10, .free_order = true});
  CHECK(plan_from_json(doc, g.all_ids(), "tool output") == lib.plan);
  CHECK(simulate_plan(g, lib.plan).peak_bytes <= best.peak_bytes);
  // No limit that can pass: the run ends with every stage finished, in the tool as in the library.
  CHECK(lib.stats.ended_by == remat_end_rule::finished);
  CHECK(doc.at("ended_by") == std::string(to_string(lib.stats.ended_by)));

  // Below the best order's peak free_order_plan's copies give the cheapest plan: the free-order
  // stage ended the run, and the tool reports its rule.
  const std::int64_t tighter = best.peak_bytes * 95 / 100;
  const json free_doc = run_tool_json("remat " + path.string() + " --budget " + std::to_string(tighter) +
                                          " --algo auto --backend none --order-from free --lifetime-rounds 10 --time-limit 1e12 --json",
                                      dir);
  const remat_result free_lib = remat_plan(
      df, tighter, remat_plan_options{.order = file_order.order, .more_orders = {best.order}, .lifetime_rounds = 10, .free_order = true});
  REQUIRE(has_solution(free_lib.status));
  CHECK(free_doc.at("orders").back().at("source") == "free-order");
  CHECK(free_doc.at("ended_by") == std::string(to_string(free_lib.stats.ended_by)));
  CHECK(free_lib.stats.method == "free-order");
  // The free-order stage ends by its proof or by finishing; no limit can pass.
  CHECK((free_lib.stats.ended_by == (free_lib.status == solve_status::optimal ? remat_end_rule::bound_met : remat_end_rule::finished)));
  CHECK(plan_from_json(free_doc, g.all_ids(), "tool output") == free_lib.plan);
  CHECK(simulate_plan(g, free_lib.plan).peak_bytes <= tighter);
}

TEST_CASE("memsched remat --algo auto --ladder-steps: the library's ladder plan, no dearer at a looser ladder budget; the incumbents") {
  const temp_dir dir;
  const std::filesystem::path path = dir / "dag.json";
  write_json_graph(path, to_dataflow_graph(random_dag(14, 0.3, 8)));
  const dataflow_graph df = read_json_graph(path);
  const memory_graph g = make_memory_graph(df);
  const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
  const std::vector<std::size_t> kahn = remat_input_order(df, input_order_options{.source = input_order_source::kahn}).order;
  std::optional<double> looser;  // the cost at the budget 5% above
  for (int pct : {95, 90, 85, 80, 75}) {
    CAPTURE(pct);
    const tool_run r = run_tool("remat " + path.string() + " --budget " + std::to_string(pct) +
                                    "% --algo auto --backend none --order-from kahn --ladder-steps 20 --time-limit 1e12 --json",
                                dir);
    const json doc = json::parse(r.out);
    // "P%" of the tool's reference peak is a ladder budget when P is a multiple of 5.
    const auto budget = static_cast<std::int64_t>(pct / 100.0 * static_cast<double>(peak));
    CHECK(doc.at("budget") == budget);
    const remat_result lib = remat_plan(df, budget, remat_plan_options{.order = kahn, .ladder_steps = 20, .ladder_peak = peak});
    CHECK(r.exit_code == (has_solution(lib.status) ? 0 : 2));
    REQUIRE(doc.at("status") == std::string(to_string(lib.status)));
    // No time limit (huge): every stage ran to its counted end, unless no stage ran at all.
    CHECK(doc.at("ended_by") == std::string(to_string(lib.stats.ended_by)));
    CHECK(doc.at("ended_by") == (lib.status == solve_status::infeasible ? "none" : "finished"));
    const json& incumbents = doc.at("incumbents");
    if (!has_solution(lib.status)) {
      CHECK(incumbents.empty());
      CHECK(doc.at("seconds_to_first").is_null());
      looser.reset();
      continue;
    }
    CHECK(plan_from_json(doc, g.all_ids(), "tool output") == lib.plan);
    // Each better plan, in time order, each cheaper; the last is the plan returned.
    REQUIRE(!incumbents.empty());
    CHECK(doc.at("seconds_to_first") == incumbents.front().at(0));
    for (std::size_t k = 1; k < incumbents.size(); ++k) {
      CHECK(incumbents[k].at(0).get<double>() >= incumbents[k - 1].at(0).get<double>());
      CHECK(incumbents[k].at(1).get<double>() < incumbents[k - 1].at(1).get<double>());
    }
    CHECK(incumbents.back().at(1).get<double>() == doctest::Approx(doc.at("total_cost").get<double>()));
    if (looser) CHECK(*looser <= doc.at("total_cost").get<double>() * (1 + 1e-12));
    looser = doc.at("total_cost").get<double>();
  }
}

TEST_CASE("memsched remat --algo auto --backend none: the native bound proves a training chain's plan optimal") {
  const temp_dir dir;
  // The chain of the CBC case: at 40 bytes x0 or x1 must go while x2's gradient runs, so every
  // plan costs at least 8 (remat_cost_lower_bound), and one recomputation reaches it.
  const auto path = write_training_chain(dir);
  const json d2 =
      run_tool_json("remat " + path.string() + " --budget 40 --algo auto --backend none --order-from kahn --json", dir);
  CHECK(d2.at("status") == "optimal");
  REQUIRE(d2.at("cost_bound").is_number());
  CHECK(d2.at("cost_bound").get<double>() == doctest::Approx(8.0));
  CHECK(d2.at("total_cost") == 8.0);
  const memory_graph g = make_memory_graph(read_json_graph(path));
  const plan_simulation sim = simulate_plan(g, plan_from_json(d2, g.all_ids(), "tool output"));
  CHECK(sim.peak_bytes <= 40);
  CHECK(sim.total_cost == 8.0);
}

#ifdef MEMSCHED_HAVE_CBC
TEST_CASE("memsched remat --algo auto --backend cbc: a training chain proven optimal, the bound in the JSON") {
  const temp_dir dir;
  // The training chain of support/training_chain.hpp: the no-remat peak is 50; at 40 one
  // recomputation is the least (cost 8 of 7).
  const auto path = write_training_chain(dir);
  const dataflow_graph df = read_json_graph(path);
  const memory_graph g = make_memory_graph(df);
  REQUIRE(g.has_training_roles());
  const json doc = run_tool_json(
      "remat " + path.string() + " --budget 40 --algo auto --backend cbc --order-from kahn --time-limit 1e12 --json", dir);
  CHECK(doc.at("status") == "optimal");
  CHECK(doc.at("backend") == "cbc");
  CHECK(doc.at("total_cost") == 8.0);
  REQUIRE(doc.at("cost_bound").is_number());
  CHECK(doc.at("cost_bound").get<double>() == doctest::Approx(8.0));
  CHECK(doc.at("solver_status") == "optimal");
  const execution_plan plan = plan_from_json(doc, g.all_ids(), "tool output");
  const plan_simulation sim = simulate_plan(g, plan);
  CHECK(sim.peak_bytes <= 40);
  CHECK(sim.total_cost == 8.0);
  const std::vector<std::size_t> kahn = remat_input_order(df, input_order_options{.source = input_order_source::kahn}).order;
  const remat_result lib = remat_plan(df, 40, remat_plan_options{.backend = cbc_backend{}, .order = kahn});
  CHECK(plan == lib.plan);
  CHECK(doc.at("method") == lib.stats.method);
  // Below what x2's gradient needs with its inputs (30 bytes): proven infeasible, exit 2.
  const tool_run below = run_tool("remat " + path.string() + " --budget 29 --algo auto --json", dir);
  CHECK(below.exit_code == 2);
  const json d3 = json::parse(below.out);
  CHECK(d3.at("status") == "infeasible");
  CHECK(d3.at("method").is_null());
  CHECK(d3.at("steps").empty());
}
#endif
