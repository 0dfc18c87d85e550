// libFuzzer harness: order and plan documents (sim/plan_io.hpp) on arbitrary text, read as the tool
// reads them (read_order / read_plan: the streaming reader, here on the text) and as documents
// (parse_json, then order_from_json / plan_from_json against a graph's ids): both must give the
// same order or plan, or the same file_error (the reader's own nesting limit included: the text is
// not pre-filtered). The graph is a fixed 7-vertex training graph, or the document's "graph"
// member when it is a graph the JSON reader accepts. Accepted orders and plans go through the
// simulator; check_plan and simulate_plan must agree, and writing then reading must give the same
// order or plan back.

#include "harness.hpp"

#include <memsched/sim/plan_io.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace {

memsched::memory_graph fixed_graph() {
  using memsched::node_role;
  memsched::memory_graph_data d;
  d.num_nodes = 7;
  d.edges = {{0, 1}, {1, 2}, {0, 2}, {2, 3}, {3, 4}, {1, 4}, {4, 5}, {0, 6}, {5, 6}};
  d.bytes = {4, 8, 2, 16, 1, 8, 3};
  d.cost = {1, 2, 0.5, 4, 1, 2, 1};
  d.workspace = {0, 1, 0, 3, 0, 0, 0};
  d.ids = {10, 11, 12, -13, 14, 15, 1LL << 40};
  d.roles = {node_role::forward, node_role::forward, node_role::forward, node_role::loss,
             node_role::backward, node_role::backward, node_role::backward};
  d.grad_of = {std::nullopt, std::nullopt, std::nullopt, std::nullopt, 2, 1, 0};
  d.outputs = std::vector<std::size_t>{6};
  return memsched::memory_graph(d, "fixed");
}

/// f()'s result, or the message of the file_error it threw (then the result is empty).
template <class F>
auto result_or_error(F&& f, std::string& error) -> std::optional<decltype(f())> {
  try {
    return f();
  } catch (const memsched::file_error& e) {
    error = e.what();
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memsched;
  using fuzz::require;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The reader of read_order / read_plan (graph/detail/json_reader.hpp): every rejection is a
  // file_error (tests/data/fuzz/plan/number_overflow.json: a number beyond double).
  std::string doc_error;
  const std::optional<detail::json_value> doc = result_or_error([&] { return detail::parse_json(text, "fuzz"); }, doc_error);
  memory_graph m = fixed_graph();
  if (doc && doc->is_object() && doc->contains("graph")) {
    try {
      m = make_memory_graph(parse_json_graph((*doc)["graph"].dump(), "fuzz"), "fuzz");
    } catch (const file_error&) {
      return 0;
    }
  }
  const std::vector<std::int64_t>& ids = m.all_ids();
  const std::int64_t lower_bound = kahn_order(m).lower_bound;

  // The document reading is the reference for the streaming one (tests/sim/plan_io.cpp likewise).
  std::string order_error = doc_error, streamed_order_error;
  std::optional<std::vector<std::size_t>> order;
  if (doc) order = result_or_error([&] { return order_from_json(*doc, ids, "fuzz"); }, order_error);
  const auto streamed_order = result_or_error([&] { return detail::read_order_text(text, ids, "fuzz"); }, streamed_order_error);
  require(streamed_order == order && streamed_order_error == order_error, "read_order and order_from_json disagree");
  if (order) {
    require(order_from_json(order_to_json(ids, *order), ids, "again") == *order, "order round trip");
    try {
      const order_simulation sim = simulate_order(m, std::span<const std::size_t>(*order));
      require(order->size() == m.size(), "a valid order lists every vertex");
      require(sim.peak_bytes >= lower_bound, "order peak above the lower bound");
    } catch (const invalid_order& e) {
      require(e.position() <= order->size(), "invalid_order position");
    }
  }

  std::string plan_error = doc_error, streamed_plan_error;
  std::optional<execution_plan> plan;
  if (doc) plan = result_or_error([&] { return plan_from_json(*doc, ids, "fuzz"); }, plan_error);
  const auto streamed_plan = result_or_error([&] { return detail::read_plan_text(text, ids, "fuzz"); }, streamed_plan_error);
  require(streamed_plan == plan && streamed_plan_error == plan_error, "read_plan and plan_from_json disagree");
  if (plan) {
    const execution_plan back = plan_from_json(nlohmann::json{{"steps", plan_to_json(ids, *plan)}}, ids, "again");
    require(back.steps.size() == plan->steps.size(), "plan round trip length");
    for (std::size_t i = 0; i < back.steps.size(); ++i)
      require(back.steps[i].op == plan->steps[i].op && back.steps[i].node == plan->steps[i].node, "plan round trip step");
    const plan_check verdict = check_plan(m, *plan);
    try {
      const plan_simulation sim = simulate_plan(m, *plan);
      require(verdict.valid, "simulate_plan accepted what check_plan rejected");
      require(sim.computes <= plan->steps.size() && sim.total_cost >= 0 && sim.peak_bytes >= 0, "plan simulation totals");
    } catch (const invalid_plan& e) {
      require(!verdict.valid, "simulate_plan rejected what check_plan accepted");
      require(e.step() <= plan->steps.size(), "invalid_plan step");
    }
  }
  return 0;
}
