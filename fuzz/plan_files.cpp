// libFuzzer harness: order and plan documents (sim/plan_io.hpp) on arbitrary text, read as the tool
// reads them (JSON, then order_from_json / plan_from_json against a graph's ids). The graph is a
// fixed 7-vertex training graph, or the document's "graph" member when it is a graph the JSON
// reader accepts. Accepted orders and plans go through the simulator; check_plan and simulate_plan
// must agree, and writing then reading must give the same order or plan back.

#include "harness.hpp"

#include <memsched/graph/detail/input_limits.hpp>
#include <memsched/sim/plan_io.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <nlohmann/json.hpp>

#include <optional>

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memsched;
  using fuzz::require;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The reader of read_order / read_plan (graph/detail/json_reader.hpp): every rejection is a
  // file_error (tests/data/fuzz/plan/number_overflow.json: a number beyond double).
  detail::json_value doc;
  try {
    detail::check_json_nesting(text, "fuzz");
    doc = detail::parse_json(text, "fuzz");
  } catch (const file_error&) {
    return 0;
  }
  memory_graph m = fixed_graph();
  if (doc.is_object() && doc.contains("graph")) {
    try {
      m = make_memory_graph(parse_json_graph(doc["graph"].dump(), "fuzz"), "fuzz");
    } catch (const file_error&) {
      return 0;
    }
  }
  const std::vector<std::int64_t>& ids = m.all_ids();
  const std::int64_t lower_bound = kahn_order(m).lower_bound;

  std::optional<std::vector<std::size_t>> order;
  try {
    order = order_from_json(doc, ids, "fuzz");
  } catch (const file_error&) {
  }
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

  std::optional<execution_plan> plan;
  try {
    plan = plan_from_json(doc, ids, "fuzz");
  } catch (const file_error&) {
  }
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
