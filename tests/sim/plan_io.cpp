// Order and plan files: round trips through files and every error, with the file and entry named.
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/sim/plan_io.hpp>

#include <doctest/doctest.h>

#include "../support/file_errors.hpp"
#include "../support/temp_dir.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace memsched;
using memsched::testing::error_of;
using memsched::testing::temp_dir;
using json = nlohmann::json;

TEST_CASE("plan_io: orders round-trip through files, ids in the file and indices in memory") {
  const temp_dir dir;
  const std::vector<std::int64_t> ids{100, 7, -3, 42};  // index -> id
  const std::string path = (dir / "order.json").string();
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::size_t> order{0, 1, 2, 3};
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(static_cast<std::size_t>(trial % 5));  // any length, the file does not judge validity
    write_order(path, ids, order, {{"algorithm", "test"}, {"peak_bytes", 12}});
    CHECK(read_order(path, ids) == order);
    // The file holds the ids, and the other fields.
    std::ifstream in(path);
    const json doc = json::parse(in);
    CHECK(doc.at("algorithm") == "test");
    CHECK(doc.at("peak_bytes") == 12);
    REQUIRE(doc.at("order").size() == order.size());
    for (std::size_t k = 0; k < order.size(); ++k) CHECK(doc["order"][k] == ids[order[k]]);
  }
  // A bare array is an order file too; duplicates are read as written (the simulator judges them).
  const std::string bare = dir.write("bare.json", "[42, 100, 42]").string();
  CHECK(read_order(bare, ids) == std::vector<std::size_t>{3, 0, 3});
}

TEST_CASE("plan_io: plans round-trip through files") {
  const temp_dir dir;
  const std::vector<std::int64_t> ids{10, 11, 12};
  execution_plan plan;
  plan.steps = {{plan_op::compute, 0}, {plan_op::compute, 1}, {plan_op::free, 0}, {plan_op::compute, 0},
                {plan_op::compute, 2}, {plan_op::free, 1}};
  const std::string path = (dir / "plan.json").string();
  write_plan(path, ids, plan, {{"algorithm", "x"}});
  CHECK(read_plan(path, ids) == plan);
  std::ifstream in(path);
  const json doc = json::parse(in);
  CHECK(doc.at("algorithm") == "x");
  CHECK(doc.at("steps")[2] == json{{"op", "free"}, {"node", 10}});
  CHECK(doc.at("steps")[4] == json{{"op", "compute"}, {"node", 12}});
  // An empty plan, and null fields.
  write_plan(path, ids, execution_plan{}, nullptr);
  CHECK(read_plan(path, ids).steps.empty());
}

TEST_CASE("plan_io: vertex_ids reads the ids through the node maps") {
  dataflow_graph g;
  for (std::int64_t id : {5, 9, 2}) {
    const auto v = add_vertex(g);
    g[v].id = id;
    g[v].bytes = 1;
  }
  const auto ids = vertex_ids(g, default_node_maps(g));
  CHECK(ids == std::vector<std::int64_t>{5, 9, 2});
  CHECK(order_to_json(ids, std::vector<std::size_t>{2, 0}) == json::array({2, 5}));
  CHECK_THROWS_AS((void)order_to_json(ids, std::vector<std::size_t>{3}), std::out_of_range);
}

TEST_CASE("plan_io: every error is a file_error naming the file and the entry") {
  const temp_dir dir;
  const std::vector<std::int64_t> ids{100, 101};
  auto order_error = [&](const std::string& text) {
    const std::string path = dir.write("o.json", text).string();
    return error_of([&] { (void)read_order(path, ids); });
  };
  auto plan_error = [&](const std::string& text) {
    const std::string path = dir.write("p.json", text).string();
    return error_of([&] { (void)read_plan(path, ids); });
  };
  const std::string o = (dir / "o.json").string(), p = (dir / "p.json").string();

  const std::string missing = (dir / "missing.json").string();
  CHECK(error_of([&] { (void)read_order(missing, ids); }) == missing + ": cannot open the file");
  CHECK(error_of([&] { (void)read_plan(missing, ids); }) == missing + ": cannot open the file");
  CHECK(order_error("{\"order\": [100,").rfind(o + ": not valid JSON", 0) == 0);
  CHECK(plan_error("steps").rfind(p + ": not valid JSON", 0) == 0);
  // Found by fuzz/plan_files: a number beyond double was nlohmann's out_of_range, not a file_error.
  const std::string overflow = std::string(MEMSCHED_TEST_DATA_DIR) + "/fuzz/plan/number_overflow.json";
  CHECK(error_of([&] { (void)read_order(overflow, ids); }).rfind(overflow + ": not valid JSON", 0) == 0);
  CHECK(error_of([&] { (void)read_plan(overflow, ids); }).rfind(overflow + ": not valid JSON", 0) == 0);
  // A directory and nesting deeper than the readers' limit are file errors naming the file.
  CHECK(error_of([&] { (void)read_order(dir.path().string(), ids); }) == dir.path().string() + ": is a directory, not a file");
  CHECK(order_error(std::string(300, '[') + std::string(300, ']')) == o + ": line 1: arrays and objects nested deeper than 256 levels");

  CHECK(order_error(R"({"peak": 3})") == o + ": expected {\"order\": [ids]} or an array of ids");
  CHECK(order_error(R"({"order": 100})") == o + ": order: expected an array of node ids");
  CHECK(order_error("17") == o + ": order: expected an array of node ids");
  CHECK(order_error(R"([100, 7])") == o + ": order[1]: unknown node id 7");
  CHECK(order_error(R"({"order": [100, "101"]})") == o + ": order[1]: not an integer node id (\"101\")");
  CHECK(order_error(R"([1.5])") == o + ": order[0]: not an integer node id (1.5)");

  CHECK(plan_error("[]") == p + ": expected an object with a 'steps' array");
  CHECK(plan_error(R"({"steps": {}})") == p + ": expected an object with a 'steps' array");
  CHECK(plan_error(R"({"steps": [{"op": "compute"}]})") == p + ": steps[0]: expected {\"op\", \"node\"}");
  CHECK(plan_error(R"({"steps": [{"op": "compute", "node": 100}, 3]})") == p + ": steps[1]: expected {\"op\", \"node\"}");
  CHECK(plan_error(R"({"steps": [{"op": "keep", "node": 100}]})") == p + ": steps[0].op must be \"compute\" or \"free\"");
  CHECK(plan_error(R"({"steps": [{"op": 1, "node": 100}]})") == p + ": steps[0].op must be \"compute\" or \"free\"");
  CHECK(plan_error(R"({"steps": [{"op": "free", "node": 102}]})") == p + ": steps[0].node: unknown node id 102");
  CHECK(plan_error(R"({"steps": [{"op": "free", "node": null}]})") == p + ": steps[0].node: not an integer node id (null)");

  // Writing where no file can be created.
  const std::string nowhere = (dir / "no-such-dir" / "x.json").string();
  CHECK(error_of([&] { write_order(nowhere, ids, std::vector<std::size_t>{0}); }) == nowhere + ": cannot open the file for writing");
  CHECK(error_of([&] { write_plan(nowhere, ids, execution_plan{}); }) == nowhere + ": cannot open the file for writing");
  REQUIRE(std::filesystem::exists("/dev/full"));  // Linux: opens, but every write fails (a full disk)
  CHECK(error_of([&] { write_order("/dev/full", ids, std::vector<std::size_t>{0}); }) == "/dev/full: cannot write the file");
  CHECK(error_of([&] { write_plan("/dev/full", ids, execution_plan{}); }) == "/dev/full: cannot write the file");
}

TEST_CASE("plan_io: read_plan and read_order stream their arrays and agree with plan_from_json / order_from_json") {
  // read_plan / read_order convert each entry as the JSON reader reads it (no json_value per step:
  // issue 11, a 2-million-step plan); plan_from_json / order_from_json on the parsed document are
  // the reference, for valid documents, documents with a bad entry, and errors in either order.
  const temp_dir dir;
  const std::vector<std::int64_t> ids{100, 101, -5};
  auto result_of = [](auto&& f) -> std::string {
    try {
      return "ok " + f();
    } catch (const file_error& e) {
      return e.what();
    }
  };
  auto show_plan = [](const execution_plan& p) {
    std::string s;
    for (const auto& st : p.steps) s += std::string(to_string(st.op)) + ":" + std::to_string(st.node) + " ";
    return s;
  };
  auto show_order = [](const std::vector<std::size_t>& o) {
    std::string s;
    for (const auto v : o) s += std::to_string(v) + " ";
    return s;
  };
  std::mt19937 rng(11);
  const std::vector<std::string> step_texts = {R"({"op": "compute", "node": 100})", R"({"node": -5, "op": "free"})", R"({"op": "free", "node": 101, "x": [1, {}]})",
                                               R"({"op": "compute", "node": 7})", R"({"op": "keep", "node": 100})", R"(3)", R"({"op": "free"})"};
  const std::vector<std::string> entry_texts = {"100", "101", "-5", "7", "\"100\"", "1.5", "[100]"};
  for (int trial = 0; trial < 300; ++trial) {
    const bool bad_allowed = trial % 3 == 0;
    auto pick = [&](const std::vector<std::string>& texts) {
      return texts[std::uniform_int_distribution<std::size_t>(0, bad_allowed ? texts.size() - 1 : 2)(rng)];
    };
    std::string steps = "[", entries = "[";
    const int n = static_cast<int>(rng() % 6);
    for (int k = 0; k < n; ++k) {
      steps += (k ? ", " : "") + pick(step_texts);
      entries += (k ? ", " : "") + pick(entry_texts);
    }
    steps += "]";
    entries += "]";
    // Other members before and after, a nested "steps"/"order" that is not the document's, and
    // sometimes a broken tail or a repeated member.
    const std::string tail = trial % 7 == 0 ? ", \"x\": [1,,]}" : trial % 11 == 0 ? ", \"steps\": [], \"order\": []}" : "}";
    const std::string plan_text = "{\"algorithm\": \"a\", \"meta\": {\"steps\": 3}, \"steps\": " + steps + tail;
    const std::string order_text = trial % 2 ? entries : "{\"meta\": {\"order\": 1}, \"order\": " + entries + tail;
    const std::string pp = dir.write("p.json", plan_text).string(), op = dir.write("o.json", order_text).string();
    const std::string streamed_plan = result_of([&] { return show_plan(read_plan(pp, ids)); });
    const std::string reference_plan =
        result_of([&] { return show_plan(plan_from_json(detail::parse_json(plan_text, pp), std::span<const std::int64_t>(ids), pp)); });
    CHECK_MESSAGE(streamed_plan == reference_plan, plan_text);
    const std::string streamed_order = result_of([&] { return show_order(read_order(op, ids)); });
    const std::string reference_order =
        result_of([&] { return show_order(order_from_json(detail::parse_json(order_text, op), std::span<const std::int64_t>(ids), op)); });
    CHECK_MESSAGE(streamed_order == reference_order, order_text);
  }
}
