// memsched remat GRAPH --budget B --algo hiremate [--levels L] [--max-lower M] [--max-top M] [--max-chain-stages N] [--partition-rounds stop|full|both] [--options N] [--budgets K]
//   [--resident-levels K] [--nested-resident-levels K] [--nested-partitions N] [--nested-chain-units N] [--nested-start-dtr] [--ladder-rungs N] [--serenity-states N] [--merge-spans N] [--top-solver cbc|glpk|none] [--hilp-free] [--lower-solver cbc|glpk|none] [--time-limit S] [--max-memory BYTES|N%] [--threads N] [--no-heuristic-start]
//   [--no-dtr] [--no-carry-regen] [--progress]

#include "cli.hpp"
#include "remat_order.hpp"

#include <memsched/remat/hiremate.hpp>
#include <memsched/experimental/hiremate_milp_lower.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace memsched_cli {
namespace {

const char* hiremate_usage =
    "    HiRemate (Gusak et al. 2024), two levels by default: H-Partition of the forward graph, each\n"
    "    distinct subgraph solved once for K budgets (best heuristic and DTR; with --levels, by a\n"
    "    hierarchy of one level less), one option per group chosen to fit the budget, or the groups\n"
    "    checkpointed as a chain (Rotor/Rockmate), expanded and re-simulated (with --top-solver also\n"
    "    the paper's H-ILP over the groups); the cheapest of these and the best heuristic's, DTR's\n"
    "    and Checkmate's eviction greedy's plans.\n"
    "    Extra JSON: hiremate {hierarchy_levels, levels (of the partition), subgraphs,\n"
    "    distinct_subgraphs, largest_subgraph, top_nodes, groups, max_lower, partition_rounds (of\n"
    "    the partition that gave the hierarchy's plan: stop or full), partitions_tried,\n"
    "    problems_solved, problems_reused, problems_serenity (those with the option along\n"
    "    Serenity's order), repair_rounds, source, start_method, top_method, seconds per phase,\n"
    "    costs, hilp_status, hilp_variables, hilp_constraints, hilp_budget_raised,\n"
    "    hilp_start_objective, hilp_objective, hilp_bound (the backend's proven bound on the\n"
    "    H-ILP model's optimum, when it gave one), hilp_seconds, level_reports: per level of the\n"
    "    hierarchy, lowest first, {level, method, solves, proven, cut, optimal}: which\n"
    "    levels were solved to optimality for their own problems (the plan itself never is)}.\n"
    "    --levels L              levels of the hierarchy, 2..4 (default 2: groups and top); L > 2:\n"
    "                            groups of up to M^l^(L-1) nodes, each solved per budget by a\n"
    "                            hierarchy of L - 1 levels (slower: about budgets x 4 times)\n"
    "    --max-lower M           nodes per group (M^l, default 20)\n"
    "    --max-top M             nodes of the top graph (M^t, default 30)\n"
    "    --max-chain-stages N    groups of the chain schedule at most: M^l is doubled until there are\n"
    "                            no more (default 128; 0: no cap)\n"
    "    --partitions N          partitions solved: M^l, 2 M^l, 4 M^l, ...; the cheapest plan of them\n"
    "                            (default 4; 1: M^l only)\n"
    "    --partition-rounds stop|full|both\n"
    "                            H-Partition's rounds stop at M^t nodes (the authors' rule), or wrap\n"
    "                            while candidates are left, or each grain both ways, the cheapest plan\n"
    "                            kept (default both: about the time of stop and full together)\n"
    "    --options N             options kept per subgraph (N_o, default 8)\n"
    "    --resident-levels K     extra solves per budget that hold less across the barrier (default 3)\n"
    "    --nested-resident-levels K\n"
    "                            the same for the groups --levels 3 or 4 solves by nested\n"
    "                            hierarchies (default 1)\n"
    "    --nested-partitions N   --partitions for those nested hierarchies (default 1)\n"
    "    --nested-chain-units N  resolution of those nested hierarchies' chain tables (default 128;\n"
    "                            0: no chain schedule in them; else >= 16)\n"
    "    --nested-start-dtr      DTR in those nested hierarchies' heuristic starts too (slower)\n"
    "    --ladder-rungs N        steps of the keep-set ladder added to each subgraph's options:\n"
    "                            checkpoint plans dropping more and more cheap values (default 32;\n"
    "                            1: nothing dropped and outputs only; 0: none)\n"
    "    --serenity-states N     each subgraph also gets its no-recomputation option along Serenity's\n"
    "                            least-peak order, searched with at most N stored states, where that\n"
    "                            peak is lower (default 65536; 0: none)\n"
    "    --budgets K             budgets solved per subgraph (default 8)\n"
    "    --top-solver cbc|glpk|none  MILP backend of the H-ILP top level (appendix B), started from\n"
    "                            the other two; 20 s per solve (default: none)\n"
    "    --hilp-free             the paper's FREE variables and correction terms in the H-ILP: data\n"
    "                            freed after their last use inside a stage, and not counted in a\n"
    "                            node's later peaks once it has read them (a larger model; needs\n"
    "                            --top-solver)\n"
    "    --lower-solver cbc|glpk|none  also Checkmate's MILP through that backend at the lowest level,\n"
    "                            on subgraph problems of at most 80 vertices, started from the\n"
    "                            heuristics' plan, 1 s per solve (default: none; much slower)\n"
    "    --time-limit S          seconds for the whole hierarchy (default: none)\n"
    "    --max-memory BYTES|N%   cap on the top-level tables and each lower solve's share (default:\n"
    "                            256 MiB for the chain table, none elsewhere)\n"
    "    --threads N             subgraphs solved in parallel, and with 2 or more the heuristic start\n"
    "                            beside them (result independent of N)\n"
    "    --no-heuristic-start    return the hierarchy's plan only\n"
    "    --no-dtr                no DTR plans, at the lowest level or as the start\n"
    "    --merge-spans N         groups a value spans beyond the next one are merged when the result\n"
    "                            has at most N x M^l vertices (default 8; 0: never)\n"
    "    --no-carry-regen        the chain holds each group's carry until the next group's backward\n"
    "                            part (no recomputation of it in between)\n"
    "    --progress              print phases and incumbents on stderr\n";

memsched::remat_result run_hiremate(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args, json& extra) {
  memsched::hiremate_options o;
  o.levels = count_of(args, "levels", o.levels);
  o.partition.max_lower = count_of(args, "max-lower", o.partition.max_lower);
  o.partition.max_top = count_of(args, "max-top", o.partition.max_top);
  o.tuning.max_chain_stages = count_of(args, "max-chain-stages", o.tuning.max_chain_stages);
  o.tuning.max_options = count_of(args, "options", o.tuning.max_options);
  o.tuning.partitions = count_of(args, "partitions", o.tuning.partitions);
  if (const std::string rounds = args.get_or("partition-rounds", "both"); rounds == "stop" || rounds == "full") {
    o.partition.stop_at_max_top = rounds == "stop";
    o.tuning.also_full_rounds = false;
  } else if (rounds != "both") {
    throw usage_error("--partition-rounds must be stop, full or both, not '" + rounds + "'");
  }
  o.tuning.budgets = count_of(args, "budgets", o.tuning.budgets);
  o.tuning.resident_levels = count_of(args, "resident-levels", o.tuning.resident_levels);
  o.tuning.nested_resident_levels = count_of(args, "nested-resident-levels", o.tuning.nested_resident_levels);
  o.tuning.nested_partitions = count_of(args, "nested-partitions", o.tuning.nested_partitions);
  o.tuning.nested_chain_units = count_of(args, "nested-chain-units", o.tuning.nested_chain_units);
  o.tuning.ladder_rungs = count_of(args, "ladder-rungs", o.tuning.ladder_rungs);
  o.tuning.serenity_states = count_of(args, "serenity-states", o.tuning.serenity_states);
  o.tuning.merge_spans = count_of(args, "merge-spans", o.tuning.merge_spans);
  o.time_limit = time_limit_of(args);
  if (auto cap = max_memory_of(args)) o.max_bytes = static_cast<std::int64_t>(std::min<std::uint64_t>(*cap, std::numeric_limits<std::int64_t>::max()));
  o.threads = threads_of(args);
  o.heuristic_start = !args.has("no-heuristic-start");
  o.dtr = !args.has("no-dtr");
  o.tuning.regenerate_carries = !args.has("no-carry-regen");
  o.tuning.nested_start_dtr = args.has("nested-start-dtr");
  progress_printer printer(args, 0, progress_values::cost, total_cost_of(graph));
  o.observer = printer;
  memsched::check_hiremate_options(o);  // before any work; main reports a bad flag as a usage error
  // The library's message names its own function; the tool's user makes a training graph with `train`.
  if (std::none_of(boost::vertices(graph).first, boost::vertices(graph).second,
                   [&](auto v) { return graph[v].role != memsched::node_role::forward; }))
    throw std::invalid_argument("hiremate plans a training graph and this one has no loss or backward nodes: make one with "
                                "`memsched train GRAPH --out TRAINING.json`");
  const std::string top = args.get_or("top-solver", "none");
  std::string built = "none";
#ifdef MEMSCHED_HAVE_CBC
  built += " cbc";
  if (top == "cbc") o.top_solver = memsched::milp_solve_function(memsched::cbc_backend{});
#endif
#ifdef MEMSCHED_HAVE_GLPK
  built += " glpk";
  if (top == "glpk") o.top_solver = memsched::milp_solve_function(memsched::glpk_backend{});
#endif
  if (top != "none" && !o.top_solver) throw usage_error("--top-solver '" + top + "' is not available (built: " + built + ")");
  o.tuning.hilp_free_values = args.has("hilp-free");
  if (o.tuning.hilp_free_values && top == "none") throw usage_error("--hilp-free needs --top-solver (it changes the H-ILP's model)");
  const std::string lower = args.get_or("lower-solver", "none");
#ifdef MEMSCHED_HAVE_CBC
  if (lower == "cbc") o.lower_solver = memsched::hiremate_milp_lower_solver(memsched::hiremate_milp_lower_options<memsched::cbc_backend>{});
#endif
#ifdef MEMSCHED_HAVE_GLPK
  if (lower == "glpk") o.lower_solver = memsched::hiremate_milp_lower_solver(memsched::hiremate_milp_lower_options<memsched::glpk_backend>{});
#endif
  if (lower != "none" && !o.lower_solver) throw usage_error("--lower-solver '" + lower + "' is not available (built: " + built + ")");
  const auto r = memsched::hiremate_plan(graph, budget, o);
  const auto& s = *r.stats.hiremate;
  json h;
  h["hierarchy_levels"] = s.levels;
  h["levels"] = s.partition.levels;
  h["subgraphs"] = s.partition.subgraphs;
  h["distinct_subgraphs"] = s.partition.distinct_subgraphs;
  h["largest_subgraph"] = s.partition.largest_subgraph;
  h["top_nodes"] = s.partition.top_nodes;
  h["groups"] = s.groups;
  h["max_lower"] = s.max_lower;
  h["partition_rounds"] = s.partition.full_rounds ? "full" : "stop";
  h["partitions_tried"] = s.partitions_tried;
  h["problems_solved"] = s.classes_solved;
  h["problems_reused"] = s.classes_reused;
  h["problems_serenity"] = s.classes_serenity;
  h["repair_rounds"] = s.repair_rounds;
  if (o.levels > 2) {
    h["nested_hierarchies"] = s.nested_hierarchies;
    h["nested_partitions_tried"] = s.nested_partitions_tried;
  }
  h["source"] = s.source;
  json levels = json::array();
  for (const auto& l : s.level_reports) {
    json level{{"level", std::string(to_string(l.level))}, {"solves", l.solves}, {"proven", l.proven}, {"cut", l.cut}, {"optimal", l.optimal()}};
    if (l.method != memsched::hiremate_top_method::none) level["method"] = std::string(to_string(l.method));
    levels.push_back(std::move(level));
  }
  h["level_reports"] = std::move(levels);
  if (o.lower_solver) {
    h["lower_solver_calls"] = s.lower_solver_calls;
    h["lower_solver_cheaper"] = s.lower_solver_cheaper;
  }
  if (!r.stats.start_source.empty()) h["start_method"] = r.stats.start_source;
  h["partition_seconds"] = s.partition.seconds;
  h["lower_seconds"] = s.lower_seconds;
  h["top_seconds"] = s.top_seconds;
  h["heuristic_seconds"] = s.heuristic_seconds;
  h["hierarchy_seconds"] = s.hierarchy_seconds;
  if (s.hierarchy_cost) h["hierarchy_cost"] = *s.hierarchy_cost;
  if (s.heuristic_cost) h["heuristic_cost"] = *s.heuristic_cost;
  if (s.groups_cost) h["groups_cost"] = *s.groups_cost;
  if (s.chain_cost) h["chain_cost"] = *s.chain_cost;
  if (s.hilp_cost) h["hilp_cost"] = *s.hilp_cost;
  if (s.top_method != memsched::hiremate_top_method::none) h["top_method"] = std::string(to_string(s.top_method));
  if (s.hilp_status) {
    h["hilp_status"] = std::string(to_string(*s.hilp_status));
    h["hilp_variables"] = s.hilp_variables;
    h["hilp_constraints"] = s.hilp_constraints;
    h["hilp_budget_raised"] = s.hilp_budget_raised;
    // Total costs in the graph's units: a bound below the start says how much cheaper a schedule
    // of that model can be at most; absent when the backend reported none.
    if (std::isfinite(s.hilp_start_objective)) h["hilp_start_objective"] = s.hilp_start_objective;
    if (std::isfinite(s.hilp_objective)) h["hilp_objective"] = s.hilp_objective;
    if (std::isfinite(s.hilp_bound)) h["hilp_bound"] = s.hilp_bound;
    h["hilp_seconds"] = s.hilp_seconds;
  }
  extra["hiremate"] = h;
  if (!r.message.empty()) extra["message"] = r.message;
  return r;
}

const register_remat_algorithm hiremate_algorithm{remat_algorithm{
    .name = "hiremate",
    .usage = hiremate_usage,
    .options = {{"levels", "max-lower", "max-top", "max-chain-stages", "partitions", "partition-rounds", "options", "budgets", "resident-levels", "nested-resident-levels", "nested-partitions", "nested-chain-units", "ladder-rungs", "serenity-states", "merge-spans", "top-solver", "lower-solver", "time-limit", "max-memory", "threads"}, {"no-heuristic-start", "no-dtr", "no-carry-regen", "nested-start-dtr", "hilp-free", "progress"}},
    .run = run_hiremate,
}};

}  // namespace
}  // namespace memsched_cli
