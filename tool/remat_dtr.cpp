// `memsched remat --algo dtr`: Dynamic Tensor Rematerialization along an input order (remat/dtr.hpp).

#include "cli.hpp"
#include "remat_order.hpp"

#include <memsched/remat/dtr.hpp>

#include <chrono>
#include <string>

namespace memsched_cli {
namespace {

memsched::remat_result run_dtr(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args, json& extra) {
  memsched::dtr_options o;
  const std::string h = args.get_or("dtr-heuristic", "dtr-eq");
  const auto parsed = memsched::parse_dtr_heuristic(h);
  if (!parsed) throw usage_error("--dtr-heuristic must be dtr, dtr-eq, local, lru or size, got '" + h + "'");
  o.heuristic = *parsed;
  if (args.get("max-computations"))
    o.max_computations = static_cast<std::size_t>(integer_of(args, "max-computations", 1, 1, std::numeric_limits<long long>::max()));
  o.time_limit = time_limit_of(args);
  // Serenity's part of --order-from best: its counted state limit, with a 1 s backstop.
  const memsched::input_order_result in = remat_order_of(graph, budget, args, std::chrono::duration<double>(2.0));
  o.order = in.order;
  memsched::remat_result r = memsched::dtr_plan(graph, budget, o);
  extra["order_source"] = in.source;
  extra["order_peak"] = in.peak_bytes;
  extra["dtr_heuristic"] = h;
  return r;
}

const bool registered = [] {
  remat_algorithm a;
  a.name = "dtr";
  a.usage = std::string(
                "    Dynamic Tensor Rematerialization (Kirisame et al. 2021) walking an input order: evict the\n"
                "    resident value with the smallest h = cost / (bytes * staleness) when memory runs out.\n"
                "    --dtr-heuristic H  dtr, dtr-eq (default), local, lru or size\n"
                "    --max-computations N  give up (no solution) after N computations (default 64 n + 64)\n"
                "    --time-limit S     stop after S seconds of the walk (status time_limit, no plan)\n") +
            remat_order_usage;
  a.options = {{"dtr-heuristic", "max-computations", "time-limit", "order", "order-from"}, {}};
  a.run = run_dtr;
  register_remat_algorithm{std::move(a)};
  return true;
}();

}  // namespace
}  // namespace memsched_cli
