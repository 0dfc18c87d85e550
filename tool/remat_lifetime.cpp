// `memsched remat --algo lifetime-search`: the native engine along an input order
// (remat/lifetime_search.hpp).

#include "cli.hpp"
#include "remat_order.hpp"

#include <memsched/remat/lifetime_search.hpp>

#include <chrono>
#include <string>

namespace memsched_cli {
namespace {

memsched::remat_result run_lifetime(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args, json& extra) {
  const auto t0 = std::chrono::steady_clock::now();
  memsched::lifetime_search_options o;
  o.max_rounds = count_of(args, "max-rounds", o.max_rounds);
  o.max_stall_rounds = count_of(args, "max-stall-rounds", o.max_stall_rounds);
  o.seed = count_of(args, "seed", o.seed);
  const auto limit = time_limit_of(args);  // none when absent: the rounds are counted
  const memsched::input_order_result in = remat_order_of(graph, budget, args, order_limit(limit));
  o.order = in.order;
  o.solver.time_limit = left_of(limit, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  memsched::remat_result r = memsched::lifetime_search_plan(graph, budget, o);
  extra["order_source"] = in.source;
  extra["order_peak"] = in.peak_bytes;
  extra["max_rounds"] = o.max_rounds;
  extra["max_stall_rounds"] = o.max_stall_rounds;
  extra["rounds"] = r.stats.lns_rounds;
  return r;
}

const bool registered = [] {
  remat_algorithm a;
  a.name = "lifetime-search";
  a.usage = std::string(
                "    Native engine along an input order: values' lives are split where a step is over budget\n"
                "    (recomputing them at their next use; never thrashes), then a large-neighbourhood search\n"
                "    re-plans windows (docs/lifetime_search.md).\n"
                "    --max-rounds N     search rounds after the first plan (default 200; 0: none)\n"
                "    --max-stall-rounds N  stop after N rounds in a row without a cheaper plan\n"
                "                       (default 40; 0: no such stop)\n"
                "    --seed S           the search's tie-breaking seed (default 0)\n"
                "    --time-limit S     wall clock for the run (default none: the rounds are counted)\n") +
            remat_order_usage;
  a.options = {{"max-rounds", "max-stall-rounds", "seed", "time-limit", "order", "order-from"}, {}};
  a.run = run_lifetime;
  register_remat_algorithm{std::move(a)};
  return true;
}();

}  // namespace
}  // namespace memsched_cli
