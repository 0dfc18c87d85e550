// `memsched train`, `remat`, `revolve` and `sweep`: runs the built tool (MEMSCHED_TOOL_PATH) and
// checks its output against the library and the shared graphs.

#include <memsched/graph/json_io.hpp>
#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/input_order.hpp>
#include <memsched/remat/revolve.hpp>
#include <memsched/remat/training_graph.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include "../support/run_tool.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;

namespace {

const std::filesystem::path data_dir(MEMSCHED_TEST_DATA_DIR);

}  // namespace

TEST_CASE("memsched train writes the shared training graphs") {
  const temp_dir dir;
  for (const char* name : {"resnet18", "transformer", "unet"}) {
    CAPTURE(name);
    const auto out = dir / "t.json";
    const tool_run r = run_tool("train " + (data_dir / "torch" / (std::string(name) + ".inference.json")).string() + " --out " + out.string(), dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const dataflow_graph built = read_json_graph(out);
    const dataflow_graph expected = read_json_graph(data_dir / "torch" / (std::string(name) + ".training.json"));
    REQUIRE(num_vertices(built) == num_vertices(expected));
    for (std::size_t v = 0; v < num_vertices(built); ++v) {
      CHECK(built[v].id == expected[v].id);
      CHECK(built[v].bytes == expected[v].bytes);
      CHECK(built[v].cost == expected[v].cost);
      CHECK(built[v].op == expected[v].op);
      CHECK(built[v].grad_of == expected[v].grad_of);
    }
    std::set<std::pair<std::int64_t, std::int64_t>> a, b;
    for (auto [e, end] = boost::edges(built); e != end; ++e) a.emplace(built[source(*e, built)].id, built[target(*e, built)].id);
    for (auto [e, end] = boost::edges(expected); e != end; ++e)
      b.emplace(expected[source(*e, expected)].id, expected[target(*e, expected)].id);
    CHECK(a == b);
    CHECK(*built[boost::graph_bundle].outputs == *expected[boost::graph_bundle].outputs);
  }
  CHECK(run_tool("train", dir).exit_code == 2);
  CHECK(run_tool("train /nonexistent.json", dir).exit_code == 1);
}

TEST_CASE("memsched remat: JSON, plans the simulator accepts, infeasible -> exit 2") {
  const temp_dir dir;
  const auto path = data_dir / "torch" / "resnet18.training.json";
  const dataflow_graph g = read_json_graph(path);
  const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
  for (auto h : all_remat_heuristics) {
    CAPTURE(to_string(h));
    const std::int64_t budget = peak * 85 / 100;
    const auto out = dir / "plan.json";
    const tool_run r = run_tool("remat " + path.string() + " --budget " + std::to_string(budget) + " --algo " +
                                      std::string(to_string(h)) + " --json --out " + out.string(),
                                  dir);
    const remat_result lib = run_remat_heuristic(g, h, budget, {});
    if (lib.status == solve_status::unsupported) {
      CHECK(r.exit_code == 2);
      continue;
    }
    const json doc = json::parse(r.out);
    CHECK(doc.at("algorithm") == std::string(to_string(h)));
    CHECK(doc.at("status") == std::string(to_string(lib.status)));
    CHECK(doc.at("peak_bytes") == lib.peak_bytes);
    CHECK(doc.at("budget") == budget);
    CHECK(doc.at("overhead").get<double>() == doctest::Approx(lib.overhead));
    if (lib.status == solve_status::feasible) {
      CHECK(r.exit_code == 0);
      CHECK(doc.at("steps").size() == lib.plan.steps.size());
      // The written plan, read back by node id, passes the simulator with the reported numbers.
      std::ifstream in(out);
      const json written = json::parse(in);
      execution_plan plan;
      for (const auto& s : written.at("steps"))
        plan.steps.push_back({s.at("op") == "compute" ? plan_op::compute : plan_op::free, s.at("node").get<std::size_t>()});
      const plan_simulation sim = simulate_plan(g, plan);  // ids are indices in this graph
      CHECK(sim.peak_bytes == doc.at("peak_bytes").get<std::int64_t>());
      CHECK(sim.peak_bytes <= budget);
    } else {
      CHECK(r.exit_code == 2);
      CHECK(doc.at("steps").empty());
    }
  }
  // checkpoint-all at the no-remat peak: overhead exactly 0; one byte less: no plan (not a proof:
  // no_solution, with a message), exit 2; below what one vertex needs with its inputs: infeasible.
  const json ok =
      run_tool_json("remat " + path.string() + " --budget " + std::to_string(peak) + " --algo checkpoint-all --json", dir);
  CHECK(ok.at("overhead") == 0.0);
  const tool_run no = run_tool("remat " + path.string() + " --budget " + std::to_string(peak - 1) + " --algo checkpoint-all --json", dir);
  CHECK(no.exit_code == 2);
  CHECK(json::parse(no.out).at("status") == "no_solution");
  CHECK_FALSE(json::parse(no.out).at("message").get<std::string>().empty());
  const tool_run none = run_tool("remat " + path.string() + " --budget 1 --algo checkpoint-all --json", dir);
  CHECK(none.exit_code == 2);
  CHECK(json::parse(none.out).at("status") == "infeasible");
  // Percent budgets, fixed-parameter options, and usage errors.
  CHECK(run_tool("remat " + path.string() + " --budget 100% --algo revolve --snapshots 3 --json", dir).exit_code == 0);
  CHECK(run_tool("remat " + path.string() + " --budget 100% --algo best-heuristic --json", dir).exit_code == 0);
  CHECK(run_tool("remat " + path.string() + " --budget 95% --algo ap-greedy --segment-bytes 1000000 --json", dir).exit_code != 1);
  CHECK(run_tool("remat " + path.string() + " --algo ap-greedy", dir).exit_code == 2);  // no budget
  CHECK(run_tool("remat " + path.string() + " --budget 5 --algo nope", dir).exit_code == 2);
  CHECK(run_tool("remat " + path.string() + " --budget lots --algo ap-greedy", dir).exit_code == 2);
}

TEST_CASE("memsched revolve prints the schedule and t(l, s)") {
  const temp_dir dir;
  const json doc = run_tool_json("revolve --steps 100 --snaps 5 --json", dir);
  CHECK(doc.at("forward_steps") == 316);
  const revolve_schedule sched = revolve_actions(100, 5);
  REQUIRE(doc.at("actions").size() == sched.actions.size());
  for (std::size_t i = 0; i < sched.actions.size(); ++i) {
    CHECK(doc["actions"][i].at("op") == std::string(to_string(sched.actions[i].op)));
    CHECK(doc["actions"][i].at("state") == sched.actions[i].state);
  }
  const tool_run text = run_tool("revolve --steps 10 --snaps 3", dir);
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("forward steps: 15") != std::string::npos);
  CHECK(text.out.find("firsturn") != std::string::npos);
  CHECK(run_tool("revolve --steps 10", dir).exit_code == 2);
  CHECK(run_tool("revolve --steps 10 --snaps 0", dir).exit_code == 2);
}

TEST_CASE("memsched sweep: table, JSON and CSV") {
  const temp_dir dir;
  const auto path = data_dir / "torch" / "vgg16.training.json";
  const auto csv = dir / "sweep.csv";
  const json doc = run_tool_json("sweep " + path.string() + " --budgets 90%,80%,70% --json --csv " + csv.string(), dir);
  REQUIRE(doc.at("rows").size() == 3);
  const dataflow_graph g = read_json_graph(path);
  CHECK(doc.at("no_remat_peak") == checkpoint_all_plan(g, unlimited_budget).peak_bytes);
  for (const auto& row : doc["rows"])
    for (const auto& e : row.at("entries")) {
      if (e.at("status") == "feasible") CHECK(e.at("peak_bytes").get<std::int64_t>() <= row.at("budget").get<std::int64_t>());
      if (e.at("algorithm") == "checkpoint-all") CHECK(e.at("status") == "no_solution");
    }
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  CHECK(header == "budget,algorithm,status,peak_bytes,total_cost,overhead,seconds");
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  CHECK(lines == 3 * all_remat_heuristics.size());  // vgg16's forward part is a chain
  const tool_run table = run_tool("sweep " + path.string() + " --num-budgets 2 --algos revolve,ap-sqrtn", dir);
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("revolve") != std::string::npos);
  CHECK(run_tool("sweep " + path.string() + " --algos nope", dir).exit_code == 2);
}

#if defined(MEMSCHED_HAVE_CBC) && defined(MEMSCHED_HAVE_GECODE)
TEST_CASE("memsched remat: checkmate and moccasin choose the input order the same way") {
  const temp_dir dir;
  // A training graph without an order in the file: --order-from graph falls back to checkpoint-all's.
  const auto path = data_dir / "torch" / "vgg16.training.json";
  const dataflow_graph g = read_json_graph(path);
  REQUIRE(g[boost::graph_bundle].order.empty());
  const auto expected = remat_input_order(g, {.source = input_order_source::graph});
  for (const char* algo : {"checkmate-lp", "moccasin"}) {
    CAPTURE(algo);
    const json doc = run_tool_json(
        "remat " + path.string() + " --budget 100% --algo " + algo + " --order-from graph --time-limit 5 --json", dir);
    CHECK(doc.at("order_source") == expected.source);
  }
  CHECK(run_tool("remat " + path.string() + " --budget 100% --algo moccasin --order-from nope", dir).exit_code == 2);
}
#endif

TEST_CASE("memsched remat: a budget above every peak (up to 2^63 - 1) is unconstrained for every algorithm") {
  // Tables in units of the budget once rounded budget + units - 1 past 2^63 (HiRemate, and auto
  // through it): every algorithm the tool offers must plan as with the no-remat peak.
  const temp_dir dir;
  const auto inference = dir / "g.json", training = dir / "t.json";
  REQUIRE(run_tool("generate random-layered --nodes 40 --seed 4 --out " + inference.string(), dir).exit_code == 0);
  REQUIRE(run_tool("train " + inference.string() + " --out " + training.string(), dir).exit_code == 0);
  const dataflow_graph g = read_json_graph(training);
  const std::int64_t peak = checkpoint_all_plan(g, unlimited_budget).peak_bytes;
  const std::set<std::string> timed{"auto", "checkmate-lp", "checkmate-milp", "dtr", "free-order", "hiremate", "lifetime-search", "moccasin"};
  const std::vector<std::string> algorithms{"ap-greedy",    "ap-sqrtn",       "auto",       "best-heuristic",    "checkmate-lp",     "checkmate-milp",
                                            "checkpoint-all", "dtr",          "free-order", "hiremate",          "lifetime-search",  "linearized-greedy",
                                            "linearized-sqrtn", "moccasin",   "revolve"};
  for (const std::string budget : {"9223372036854775807", "9223372036854771712", "9223372036854775000", "4611686018427387904"}) {
    for (const auto& a : algorithms) {
      CAPTURE(budget);
      CAPTURE(a);
      if (a == "moccasin" || a == "checkmate-milp" || a == "auto") {
        if (budget != "9223372036854775807") continue;  // the solver-based ones once (time)
      }
      const auto out = dir / "plan.json";
      const tool_run r = run_tool("remat " + training.string() + " --budget " + budget + " --algo " + a + (timed.count(a) ? " --time-limit 20" : "") +
                                      " --json --out " + out.string(),
                                  dir);
      if (r.exit_code == 2 && r.out.find("\"unsupported\"") != std::string::npos) continue;  // the backend was not built
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      const json doc = json::parse(r.out);
      CHECK(doc.at("budget") == std::stoll(budget));
      CHECK(doc.at("peak_bytes").get<std::int64_t>() <= std::max<std::int64_t>(peak, 1));
      std::map<std::int64_t, std::size_t> index;
      for (std::size_t v = 0; v < num_vertices(g); ++v) index[g[v].id] = v;
      std::ifstream in(out);
      const json written = json::parse(in);
      execution_plan plan;
      for (const auto& s : written.at("steps"))
        plan.steps.push_back({s.at("op") == "compute" ? plan_op::compute : plan_op::free, index.at(s.at("node").get<std::int64_t>())});
      CHECK(simulate_plan(g, plan).peak_bytes == doc.at("peak_bytes").get<std::int64_t>());
    }
  }
  const tool_run sweep = run_tool("sweep " + training.string() + " --budgets 9223372036854775807,9223372036854771712 --json", dir);
  REQUIRE_MESSAGE(sweep.exit_code == 0, sweep.err);
}
