// memsched remat GRAPH --budget BYTES --algo NAME [--out PLAN.json] [--json]

#include "cli.hpp"

#include <memsched/remat/checkpoint_plan.hpp>

#include <chrono>

namespace memsched_cli {
namespace {

std::string remat_usage() {
  std::string text =
      "usage: memsched remat GRAPH --budget BYTES|PCT% --algo NAME [--out PLAN.json] [--json]\n\n"
      "Computes an execution plan (compute/free steps, with recomputation) of the training graph GRAPH\n"
      "whose peak memory is within the budget (bytes, or a percentage of the no-remat peak, i.e. the\n"
      "peak of checkpoint-all: a finite decimal > 0). --algo is required; options of another algorithm\n"
      "are errors. Prints {\"algorithm\", \"status\", \"budget\", \"peak_bytes\", \"total_cost\",\n"
      "\"overhead\", \"seconds\", \"steps\": [{\"op\", \"node\"}], ...}; --out writes the same document\n"
      "(readable by `memsched simulate --plan`). Exit code 2 when the algorithm finds no plan within the\n"
      "budget (status infeasible (proven), no_solution (not proven), time_limit or unsupported; steps\n"
      "empty; \"message\" says why).\n\n"
      "algorithms:\n";
  for (const auto& [name, algo] : remat_algorithms()) text += "  " + name + "\n" + algo.usage;
  return text;
}

int run_remat(const std::vector<std::string>& argv) {
  const option_spec common{{"algo", "out", "budget"}, {"json"}};
  option_spec spec = common;
  for (const auto& [name, algo] : remat_algorithms()) spec.merge(algo.options);
  const parsed_args args(argv, spec);
  const std::string& path = args.one_positional("graph file");
  const auto algo = args.get("algo");
  if (!algo) throw usage_error("--algo is required");
  const std::string name = *algo;
  const auto it = remat_algorithms().find(name);
  if (it == remat_algorithms().end()) throw usage_error("unknown --algo '" + name + "'");
  check_algorithm_options(args, common, name, it->second.options);
  const auto budget_text = args.get("budget");
  if (!budget_text) throw usage_error("--budget is required");
  // Bytes are checked before the graph is read; a percentage needs its peak.
  if (budget_text->empty() || budget_text->back() != '%') (void)budget_of(*budget_text, "budget", [] { return std::int64_t{0}; });
  const auto graph = load_graph(path);
  const std::int64_t budget =
      budget_of(*budget_text, "budget", [&] { return memsched::checkpoint_all_plan(graph, memsched::unlimited_budget).peak_bytes; });
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
