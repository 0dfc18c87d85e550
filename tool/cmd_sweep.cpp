// memsched sweep GRAPH [--budgets B1,B2,...] [--num-budgets N] [--algos A,B,...] [--csv FILE] [--json]

#include "cli.hpp"

#include <memsched/core/write_file.hpp>
#include <memsched/remat/sweep.hpp>

#include <cstdio>

namespace memsched_cli {
namespace {

std::string sweep_usage() {
  return "usage: memsched sweep GRAPH [--budgets B1,B2,...] [--num-budgets N] [--algos A,B,...] [--csv FILE] [--json]\n\n"
         "Runs every applicable rematerialization heuristic (or those of --algos) on the training graph\n"
         "GRAPH at each budget (bytes or percentages of the no-remat peak, e.g. 90%,80%,70%; default:\n"
         "--num-budgets (10, at most 10000) budgets from the peak lower bound to the no-remat peak) and prints, per\n"
         "budget, each heuristic's peak, total cost and overhead, or its status when it has no plan within the\n"
         "budget (no_solution; infeasible when no plan can fit).\n"
         "--csv writes budget,algorithm,status,peak_bytes,total_cost,overhead,seconds rows.\n";
}

/// More budgets than a plot or a table can show: a typo, not a request (each costs a run of every heuristic).
constexpr long long max_num_budgets = 10000;

int run_sweep(const std::vector<std::string>& argv) {
  const option_spec spec{{"budgets", "num-budgets", "algos", "csv"}, {"json"}};
  const parsed_args args(argv, spec);
  const std::string& path = args.one_positional("graph file");
  const auto graph = load_graph(path);
  memsched::sweep_options options;
  options.num_budgets = static_cast<std::size_t>(integer_of(args, "num-budgets", static_cast<long long>(options.num_budgets), 1, max_num_budgets));
  if (auto list = args.get("budgets")) {
    std::optional<std::int64_t> peak;
    auto no_remat = [&] {
      if (!peak) peak = memsched::checkpoint_all_plan(graph, memsched::unlimited_budget).peak_bytes;
      return *peak;
    };
    for (const auto& b : split_list(*list)) options.budgets.push_back(budget_of(b, "budgets", no_remat));
    if (options.budgets.empty()) throw usage_error("--budgets is empty");
    if (options.budgets.size() > max_num_budgets)
      throw usage_error("--budgets lists " + std::to_string(options.budgets.size()) + " budgets, at most " + std::to_string(max_num_budgets));
  }
  if (auto list = args.get("algos")) {
    for (const auto& a : split_list(*list)) {
      const auto h = memsched::parse_remat_heuristic(a);
      if (!h) throw usage_error("unknown heuristic '" + a + "' in --algos");
      options.heuristics.push_back(*h);
    }
  }
  const memsched::sweep_result sweep = memsched::remat_sweep(graph, options);
  if (auto csv = args.get("csv")) {
    memsched::write_file(*csv, [&](std::ostream& out) {
      out << "budget,algorithm,status,peak_bytes,total_cost,overhead,seconds\n";
      for (const auto& row : sweep.rows)
        for (const auto& e : row.entries) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.17g", e.total_cost);
          out << row.budget << ',' << to_string(e.heuristic) << ',' << to_string(e.status) << ',' << e.peak_bytes << ','
              << buf << ',' << e.overhead << ',' << e.seconds << '\n';
        }
    });
  }
  if (args.has("json")) {
    json rows = json::array();
    for (const auto& row : sweep.rows) {
      json entries = json::array();
      for (const auto& e : row.entries)
        entries.push_back({{"algorithm", std::string(to_string(e.heuristic))},
                           {"status", std::string(to_string(e.status))},
                           {"peak_bytes", e.peak_bytes},
                           {"total_cost", e.total_cost},
                           {"overhead", e.overhead},
                           {"seconds", e.seconds}});
      rows.push_back({{"budget", row.budget}, {"entries", std::move(entries)}});
    }
    print_json({{"lower_bound", sweep.lower_bound}, {"no_remat_peak", sweep.no_remat_peak}, {"rows", std::move(rows)}});
    return 0;
  }
  std::cout << "no-remat peak " << sweep.no_remat_peak << " bytes, lower bound " << sweep.lower_bound << " bytes\n";
  for (const auto& row : sweep.rows) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%",
                  sweep.no_remat_peak > 0 ? 100.0 * static_cast<double>(row.budget) / static_cast<double>(sweep.no_remat_peak) : 0.0);
    std::cout << "budget " << row.budget << " (" << pct << " of no-remat peak)\n";
    for (const auto& e : row.entries) {
      char line[160];
      if (e.status == memsched::solve_status::feasible)
        std::snprintf(line, sizeof line, "  %-18s overhead %8.4f%%  peak %lld\n", std::string(to_string(e.heuristic)).c_str(),
                      100.0 * e.overhead, static_cast<long long>(e.peak_bytes));
      else
        std::snprintf(line, sizeof line, "  %-18s %-18s (peak %lld)\n", std::string(to_string(e.heuristic)).c_str(),
                      std::string(to_string(e.status)).c_str(), static_cast<long long>(e.peak_bytes));
      std::cout << line;
    }
  }
  return 0;
}

const register_subcommand sweep_command{{"sweep", "rematerialization heuristics over a range of memory budgets", sweep_usage, run_sweep}};

}  // namespace
}  // namespace memsched_cli
