// memsched remat GRAPH --budget BYTES --algo NAME [--out PLAN.json] [--json]

#include "cli.hpp"
#include "remat_budget.hpp"

#include <memsched/remat/checkpoint_plan.hpp>

#include <chrono>

namespace memsched_cli {
namespace {

std::string remat_usage() {
  std::string text =
      "usage: memsched remat GRAPH --budget BYTES|PCT% --algo NAME [--out PLAN.json] [--json]\n\n"
      "Computes an execution plan (compute/free steps, with recomputation) of the training graph GRAPH\n"
      "whose peak memory is within the budget (bytes, or a percentage of the no-remat peak, i.e. the\n"
      "peak of checkpoint-all). Prints {\"algorithm\", \"status\", \"budget\", \"peak_bytes\", \"total_cost\",\n"
      "\"overhead\", \"seconds\", \"steps\": [{\"op\", \"node\"}], ...}; --out writes the same document\n"
      "(readable by `memsched simulate --plan`). Exit code 2 when the algorithm finds no plan within the\n"
      "budget (status infeasible (proven), no_solution (not proven), time_limit or unsupported; steps\n"
      "empty; \"message\" says why).\n\n"
      "algorithms:\n";
  for (const auto& [name, algo] : remat_algorithms()) text += "  " + name + "\n" + algo.usage;
  return text;
}

int run_remat(const std::vector<std::string>& argv) {
  option_spec spec{{"algo", "out", "budget"}, {"json"}};
  for (const auto& [name, algo] : remat_algorithms()) spec.merge(algo.options);
  const parsed_args args(argv, spec);
  const std::string& path = args.one_positional("graph file");
  const std::string name = args.get_or("algo", "checkpoint-all");
  const auto it = remat_algorithms().find(name);
  if (it == remat_algorithms().end()) throw usage_error("unknown --algo '" + name + "'");
  const auto budget_text = args.get("budget");
  if (!budget_text) throw usage_error("--budget is required");
  const auto graph = load_graph(path);
  const std::int64_t budget = parse_budget(
      *budget_text, [&] { return memsched::checkpoint_all_plan(graph, memsched::unlimited_budget).peak_bytes; }, "budget");
  json extra = json::object();
  const auto start = std::chrono::steady_clock::now();
  const memsched::remat_result result = it->second.run(graph, budget, args, extra);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  json doc = {{"algorithm", name},
              {"status", std::string(to_string(result.status))},
              {"budget", budget},
              {"peak_bytes", result.peak_bytes},
              {"total_cost", result.total_cost},
              {"overhead", result.overhead},
              {"seconds", seconds}};
  if (result.cost_bound) doc["cost_bound"] = *result.cost_bound;
  if (!result.message.empty()) doc["message"] = result.message;
  for (auto& [key, value] : extra.items()) doc[key] = value;
  const auto ids = node_ids(graph);
  doc["steps"] = memsched::plan_to_json(ids, result.plan);
  if (auto out = args.get("out")) memsched::write_plan(*out, ids, result.plan, doc);
  print_json(doc, args.has("json"));
  return memsched::has_solution(result.status) ? 0 : 2;
}

const register_subcommand remat_command{
    {"remat", "plan with recomputation within a memory budget", remat_usage, run_remat}};

}  // namespace
}  // namespace memsched_cli
