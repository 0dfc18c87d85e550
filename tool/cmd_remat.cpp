// memsched remat GRAPH --budget BYTES --algo NAME [--out PLAN.json] [--json]

#include "cli.hpp"
#include "remat_order.hpp"

#include <memsched/remat/checkpoint_plan.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <ostream>

namespace memsched_cli {
namespace {

std::string remat_usage() {
  std::string text =
      "usage: memsched remat GRAPH --budget BYTES|PCT% --algo NAME [--out PLAN.json] [--json] [--quiet]\n\n"
      "Computes an execution plan (compute/free steps, with recomputation) of the training graph GRAPH\n"
      "whose peak memory is within the budget (bytes, or a percentage of the no-remat peak, i.e. the\n"
      "peak of checkpoint-all: a finite decimal > 0). --algo is required; options of another algorithm\n"
      "are errors. Prints a summary:\n\n"
      "  algorithm        auto (best plan from lifetime-search)\n"
      "  status           feasible (not proven optimal)\n"
      "  budget           8,388,608 (8.0 MiB)\n"
      "  peak             8,380,416 (8.0 MiB), 99.90% of the budget\n"
      "  overhead         +1.52% compute (total cost ...)\n"
      "  cost bound       +0.40% (no plan along the order costs less), gap 1.10%\n"
      "  steps            ... (... computes)\n"
      "  time             5.01 s\n"
      "  plan             written to PLAN.json\n\n"
      "--out PLAN.json writes the plan (readable by `memsched simulate --plan`). --json prints instead one\n"
      "line {\"algorithm\", \"status\", \"budget\", \"peak_bytes\", \"total_cost\", \"overhead\",\n"
      "\"seconds\", \"steps\": [{\"op\", \"node\"}], ...} (the document --out writes) and nothing else on\n"
      "stdout. A search with a time limit shows a live progress line on stderr when it is a terminal\n"
      "(elapsed / limit, phase, best overhead, bound, gap); --quiet: none; --progress: one line per\n"
      "report. Exit code 2 when the algorithm finds no plan within the\n"
      "budget (status infeasible (proven), no_solution (not proven), time_limit or unsupported; steps\n"
      "empty; \"message\" says why).\n\n"
      "algorithms:\n";
  for (const auto& [name, algo] : remat_algorithms()) text += "  " + name + "\n" + algo.usage;
  return text;
}

// What a person reads without --json: the plan's figures against the budget, with units, and
// where the plan went. `base` is the cost of computing every vertex once.
void remat_summary(std::ostream& os, const json& doc, double base, const std::optional<std::string>& out) {
  std::string algorithm = doc["algorithm"].get<std::string>();
  if (doc.contains("method") && doc["method"].is_string()) algorithm += " (best plan from " + doc["method"].get<std::string>() + ")";
  summary_line(os, "algorithm", algorithm);
  summary_line(os, "status", status_text(doc["status"].get<std::string>()));
  const auto budget = doc["budget"].get<std::int64_t>();
  summary_line(os, "budget", bytes_text(budget));
  const std::size_t steps = doc["steps"].size();
  if (steps > 0) {
    const auto peak = doc["peak_bytes"].get<std::int64_t>();
    summary_line(os, "peak", bytes_text(peak) + (budget > 0 ? ", " + percent_text(static_cast<double>(peak) / static_cast<double>(budget)) + " of the budget" : ""));
    summary_line(os, "overhead", percent_text(doc["overhead"].get<double>(), true) + " compute (total cost " + number_text(doc["total_cost"].get<double>()) + ")");
    if (doc.contains("cost_bound") && doc["cost_bound"].is_number() && base > 0) {
      const double bound = doc["cost_bound"].get<double>(), cost = doc["total_cost"].get<double>();
      summary_line(os, "cost bound", percent_text(bound / base - 1, true) + " (no plan along the order costs less), gap " +
                                         percent_text(cost > 0 ? std::max(0.0, (cost - bound) / cost) : 0.0));
    }
    std::size_t computes = 0;
    for (const auto& step : doc["steps"]) computes += step["op"] == "compute";
    summary_line(os, "steps", grouped(static_cast<std::int64_t>(steps)) + " (" + grouped(static_cast<std::int64_t>(computes)) + " computes)");
  }
  if (doc.contains("message")) summary_line(os, "message", doc["message"].get<std::string>());
  summary_line(os, "time", seconds_text(doc["seconds"].get<double>()));
  if (steps > 0) summary_line(os, "plan", out ? "written to " + *out : "not written (--out PLAN.json writes it; --json prints everything)");
}

int run_remat(const std::vector<std::string>& argv) {
  const option_spec common{{"algo", "out", "budget"}, {"json", "quiet"}};
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
      budget_of(*budget_text, "budget", [&] { return budget_reference_peak(graph); });
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
  const auto out = args.get("out");
  if (out) memsched::write_plan(*out, ids, result.plan, doc);
  print_result(doc, args, [&](std::ostream& os) { remat_summary(os, doc, total_cost_of(graph), out); });
  return memsched::has_solution(result.status) ? 0 : 2;
}

const register_subcommand remat_command{
    {"remat", "plan with recomputation within a memory budget", remat_usage, run_remat}};

}  // namespace
}  // namespace memsched_cli
