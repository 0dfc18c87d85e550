// memsched remat GRAPH --budget B --algo auto [--order ORDER.json | --order-from graph|kahn|best|heuristic|free]
//   [--ladder-steps N] [--lifetime-rounds N] [--skip STAGES] [--time-limit S] [--backend cbc|glpk|none] [--threads N] [--gap G] [--progress] [--max-memory BYTES|N%]
// The library's best method for the graph and budget: memsched::remat_plan (remat/remat_plan.hpp).

#include "cli.hpp"
#include "remat_order.hpp"

#include <memsched/remat/remat_plan.hpp>
#include <memsched/sim/simulate_order.hpp>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace memsched_cli {
namespace {

const std::string auto_usage = std::string(
    "    The library's best plan: every heuristic, DTR (each cheap score), Checkmate's eviction\n"
    "    greedy, the lifetime search, HiRemate on training graphs, then Checkmate's MILP started\n"
    "    from every plan that follows the input order, for the time left (remat_plan; stages in\n"
    "    docs/remat_auto.md). Extra fields: method (which one won), cost_bound (a proven\n"
    "    lower bound along the order; null when none), backend, order_source, seconds_to_best,\n"
    "    seconds_to_first, incumbents ([seconds, total cost] of each better plan), ended_by\n"
    "    (the rule that ended the run: finished, stalled, bound_met, time_limit), message.\n"
    "    --backend cbc|glpk|none MILP solver (default: cbc when built); none: no MILP stage\n") + remat_order_usage +
    "    --order-from free       the order as a decision: the portfolio along the given order\n"
    "                            (--order, else the file's) and along the best order, then\n"
    "                            free_order_plan (copies of values re-ordered by Serenity), the time\n"
    "                            shared; the cheapest wins. Extra field orders: [{source, peak_bytes,\n"
    "                            total_cost, overhead, cost_bound}] per order and for free-order\n"
    "                            (null cost: no plan; null peak_bytes: no fixed order; cost_bound:\n"
    "                            along the order, over every plan for free-order); cost_bound is\n"
    "                            then over every plan\n" +
    "    --ladder-steps N        plan first at each budget j/N of the --budget reference peak\n"
    "                            below B (j = 1 .. N-1), lowest first, each run offered the plan\n"
    "                            below; without a time limit a looser budget then never gets a\n"
    "                            dearer plan than one of these (N = 20: every 5%); 0: none (default)\n"
    "    --lifetime-rounds N     the lifetime search's rounds (default 200; 0: skip the stage)\n"
    "    --skip STAGES           comma-separated stages not to run: eviction-greedy,\n"
    "                            lifetime-search, hiremate\n"
    "    --time-limit S          wall clock for the whole run (default 60)\n"
    "    --threads N             solver and HiRemate threads\n"
    "    --gap G                 the MILP's relative gap, in [0, 1] (default 1e-6)\n"
    "    --progress              print each better plan to stderr\n"
    "    --max-memory BYTES|N%   cap on the MILP model's estimated memory (default: half the RAM)\n";

const option_spec auto_spec{{"backend", "order", "order-from", "ladder-steps", "lifetime-rounds", "skip", "time-limit", "threads", "gap", "max-memory"}, {"progress"}};

/// Applies --skip: each named stage is switched off in `o`; a usage_error names any other item.
template <class Options>
void skip_stages(const parsed_args& args, Options& o) {
  const auto list = args.get("skip");
  if (!list) return;
  for (const std::string& stage : split_list(*list)) {
    if (stage == "eviction-greedy") o.eviction_greedy = false;
    else if (stage == "lifetime-search") o.lifetime_rounds = 0;
    else if (stage == "hiremate") o.hiremate = false;
    else throw usage_error("--skip: unknown stage '" + stage + "' (stages: eviction-greedy, lifetime-search, hiremate)");
  }
}

memsched::remat_result run_auto(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args, json& extra) {
  const auto t0 = std::chrono::steady_clock::now();
  // 60 s when absent (the MILP stage needs a limit on large graphs); none when huge.
  const auto limit = time_limit_or_default(args);
  const auto max_memory = max_memory_of(args);
  const unsigned threads = threads_of(args);
  const double gap = gap_of(args);
  // --order-from free: the given order, then the best one (the library tries both: more_orders).
  std::vector<memsched::input_order_result> orders;
  const bool free_order = args.get_or("order-from", "") == "free";
  if (free_order) {
    if (auto file = args.get("order")) {
      std::vector<std::size_t> order = memsched::read_order(*file, node_ids(graph));
      const std::int64_t peak = memsched::simulate_order(graph, std::span<const std::size_t>(order)).peak_bytes;
      orders.push_back({std::move(order), peak, "file"});
    } else {
      orders.push_back(memsched::remat_input_order(graph, memsched::input_order_options{.source = memsched::input_order_source::graph}));
    }
    orders.push_back(memsched::remat_input_order(graph, memsched::input_order_within(order_limit(limit))));
  } else {
    orders.push_back(remat_order_of(graph, budget, args, order_limit(limit)));
  }
  const memsched::input_order_result& in = orders.front();
  const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress_printer printer(args, used, progress_values::cost, total_cost_of(graph));
  return with_milp_backend(args, "auto", /*allow_none=*/std::true_type{}, [&](const auto& backend) -> memsched::remat_result {
    memsched::remat_plan_options o{.backend = backend};
    o.lifetime_rounds = count_of(args, "lifetime-rounds", o.lifetime_rounds);
    o.ladder_steps = count_of(args, "ladder-steps", 0);  // remat_plan names the flag when it is out of range
    if (o.ladder_steps > 0) o.ladder_peak = budget_reference_peak(graph);
    skip_stages(args, o);
    o.order = in.order;
    for (std::size_t k = 1; k < orders.size(); ++k) o.more_orders.push_back(orders[k].order);
    o.free_order = free_order;
    o.solver.time_limit = left_of(limit, used);  // --time-limit covers the input order too
    o.solver.threads = threads;
    o.solver.relative_gap = gap;
    o.solver.observer = printer;
    if (max_memory) o.max_bytes = *max_memory;
    const memsched::remat_result r = memsched::remat_plan(graph, budget, o);
    extra["method"] = r.stats.method.empty() ? json(nullptr) : json(r.stats.method);
    extra["cost_bound"] = r.cost_bound ? json(*r.cost_bound) : json(nullptr);
    extra["backend"] = std::string(backend.name());
    extra["order_source"] = free_order ? std::string("free") : in.source;
    extra["order_peak"] = in.peak_bytes;
    if (free_order) {
      json per_order = json::array();
      for (std::size_t k = 0; k < r.stats.cost_per_order.size(); ++k) {
        const auto& cost = r.stats.cost_per_order[k];
        const auto& bound = k < r.stats.cost_bound_per_order.size() ? r.stats.cost_bound_per_order[k] : std::nullopt;
        const bool fixed = k < orders.size();
        per_order.push_back({{"source", fixed ? orders[k].source : std::string("free-order")},
                             {"peak_bytes", fixed ? json(orders[k].peak_bytes) : json(nullptr)},
                             {"total_cost", cost ? json(cost->total_cost) : json(nullptr)},
                             {"overhead", cost ? json(cost->overhead) : json(nullptr)},
                             {"cost_bound", bound ? json(*bound) : json(nullptr)}});
      }
      extra["orders"] = std::move(per_order);
    }
    extra["seconds_to_best"] = has_solution(r.status) ? json(r.stats.seconds_to_best + used) : json(nullptr);
    // The anytime profile: when each better plan came (seconds from the start, total cost).
    json incumbents = json::array();
    for (const auto& [seconds, cost] : printer.trace()) incumbents.push_back({seconds, cost});
    extra["seconds_to_first"] = printer.trace().empty() ? json(nullptr) : json(printer.trace().front().first);
    extra["incumbents"] = std::move(incumbents);
    extra["ended_by"] = std::string(to_string(r.stats.ended_by));
    if (r.stats.solver_status) extra["solver_status"] = std::string(to_string(*r.stats.solver_status));
    return r;  // cmd_remat writes seconds and message
  });
}

const register_remat_algorithm auto_algorithm{{"auto", auto_usage, auto_spec, run_auto}};

}  // namespace
}  // namespace memsched_cli
