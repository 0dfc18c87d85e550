// memsched remat GRAPH --budget B --algo auto [--order ORDER.json | --order-from graph|kahn|best|heuristic]
//   [--time-limit S] [--backend cbc|glpk|none] [--threads N] [--gap G] [--progress] [--max-memory BYTES|N%]
// The library's best method for the graph and budget: memsched::remat_plan (remat/remat_plan.hpp).

#include "cli.hpp"
#include "remat_order.hpp"

#include <memsched/remat/remat_plan.hpp>
#ifdef MEMSCHED_HAVE_CBC
#include <memsched/solver/backends/cbc.hpp>
#endif
#ifdef MEMSCHED_HAVE_GLPK
#include <memsched/solver/backends/glpk.hpp>
#endif

#include <chrono>
#include <optional>
#include <string>

namespace memsched_cli {
namespace {

const std::string auto_usage = std::string(
    "    The library's best plan: every heuristic, DTR (each cheap score), HiRemate on training\n"
    "    graphs, then Checkmate's MILP started from every plan that follows the input order, for\n"
    "    the time left (remat_plan). Extra fields: method (which one won), cost_bound (null when\n"
    "    none), backend, order_source, seconds_to_best, message.\n"
    "    --backend cbc|glpk|none MILP solver (default: cbc when built); none: no MILP stage\n") + remat_order_usage +
    "    --time-limit S          wall clock for the whole run (default 60)\n"
    "    --threads N             solver and HiRemate threads\n"
    "    --gap G                 the MILP's relative gap (default 1e-6)\n"
    "    --progress              print each better plan to stderr\n"
    "    --max-memory BYTES|N%   cap on the MILP model's estimated memory (default: half the RAM)\n";

const option_spec auto_spec{{"backend", "order", "order-from", "time-limit", "threads", "gap", "max-memory"}, {"progress"}};

/// Calls fn with the backend --backend names (no_solver for "none").
template <class Fn>
memsched::remat_result with_auto_backend(const parsed_args& args, Fn&& fn) {
  const std::string backend = args.get_or("backend",
#if defined(MEMSCHED_HAVE_CBC)
                                          "cbc"
#elif defined(MEMSCHED_HAVE_GLPK)
                                          "glpk"
#else
                                          "none"
#endif
  );
  if (backend == "none") return fn(memsched::no_solver{});
#ifdef MEMSCHED_HAVE_CBC
  if (backend == "cbc") return fn(memsched::cbc_backend{});
#endif
#ifdef MEMSCHED_HAVE_GLPK
  if (backend == "glpk") return fn(memsched::glpk_backend{});
#endif
  throw usage_error("--backend '" + backend + "' is not available for auto (built: "
#ifdef MEMSCHED_HAVE_CBC
                    "cbc "
#endif
#ifdef MEMSCHED_HAVE_GLPK
                    "glpk "
#endif
                    "none)");
}

memsched::remat_result run_auto(const memsched::dataflow_graph& graph, std::int64_t budget, const parsed_args& args, json& extra) {
  const auto t0 = std::chrono::steady_clock::now();
  // 60 s when absent (the MILP stage needs a limit on large graphs); none when huge.
  const auto limit = time_limit_or_default(args);
  const auto max_memory = max_memory_of(args);
  const unsigned threads = threads_of(args);
  const double gap = args.get_double("gap").value_or(1e-6);
  const memsched::input_order_result in = remat_order_of(graph, budget, args, order_limit(limit));
  const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress_printer printer(args.has("progress"), used);
  return with_auto_backend(args, [&](const auto& backend) -> memsched::remat_result {
    memsched::remat_plan_options o{.backend = backend};
    o.order = in.order;
    o.solver.time_limit = left_of(limit, used);  // --time-limit covers the input order too
    o.solver.threads = threads;
    o.solver.relative_gap = gap;
    o.solver.observer = printer;
    if (max_memory) o.max_bytes = *max_memory;
    const memsched::remat_result r = memsched::remat_plan(graph, budget, o);
    extra["method"] = r.stats.method.empty() ? json(nullptr) : json(r.stats.method);
    extra["cost_bound"] = r.cost_bound ? json(*r.cost_bound) : json(nullptr);
    extra["backend"] = std::string(backend.name());
    extra["order_source"] = in.source;
    extra["order_peak"] = in.peak_bytes;
    extra["seconds_to_best"] = has_solution(r.status) ? json(r.stats.seconds_to_best + used) : json(nullptr);
    if (r.stats.solver_status) extra["solver_status"] = std::string(to_string(*r.stats.solver_status));
    return r;  // cmd_remat writes seconds and message
  });
}

const register_remat_algorithm auto_algorithm{{"auto", auto_usage, auto_spec, run_auto}};

}  // namespace
}  // namespace memsched_cli
