// `memsched remat --algo free-order`: rematerialization with the order free
// (remat/free_order.hpp).

#include "cli.hpp"

#include <memsched/remat/free_order.hpp>

#include <string>

namespace memsched_cli {
namespace {

memsched::remat_result run_free_order(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args, json& extra) {
  memsched::free_order_options o;
  o.max_evaluations = count_of(args, "max-evaluations", o.max_evaluations);
  o.max_copy_depth = count_of(args, "max-copy-depth", o.max_copy_depth);
  o.lifetime_rounds = count_of(args, "max-rounds", o.lifetime_rounds);
  o.seed = count_of(args, "seed", o.seed);
  o.solver.time_limit = time_limit_of(args);  // none when absent: the runs and rounds are counted
  memsched::remat_result r = memsched::free_order_plan(graph, budget, o);
  extra["max_evaluations"] = o.max_evaluations;
  extra["max_copy_depth"] = o.max_copy_depth;
  extra["rounds"] = r.stats.lns_rounds;
  return r;
}

const bool registered = [] {
  remat_algorithm a;
  a.name = "free-order";
  a.usage =
      "    The order free: values resident across an over-budget step are copied for their later\n"
      "    readers while that lowers the peak of Serenity's order of the copied graph, then the\n"
      "    lifetime search runs along that order (docs/remat_auto.md). Reaches budgets below every\n"
      "    order's peak; no bound.\n"
      "    --max-evaluations N  Serenity runs of the copy search (default 2000)\n"
      "    --max-copy-depth N   levels of inputs copied with a value (default 1)\n"
      "    --max-rounds N       the lifetime search's rounds (default 200)\n"
      "    --seed S             the lifetime search's seed (default 0)\n"
      "    --time-limit S       wall clock for the run (default none: everything is counted)\n";
  a.options = {{"max-evaluations", "max-copy-depth", "max-rounds", "seed", "time-limit"}, {}};
  a.run = run_free_order;
  register_remat_algorithm{std::move(a)};
  return true;
}();

}  // namespace
}  // namespace memsched_cli
