// memsched simulate GRAPH (--order ORDER.json | --plan PLAN.json) [--arena STRATEGY] [--onchip BYTES] [--json]

#include "cli.hpp"

#include <memsched/sim/arena.hpp>
#include <memsched/sim/offchip_traffic.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

namespace memsched_cli {
namespace {

std::string simulate_usage() {
  return "usage: memsched simulate GRAPH (--order ORDER.json | --plan PLAN.json)\n"
         "                         [--arena greedy-by-size|first-fit] [--onchip BYTES] [--json]\n\n"
         "Checks an execution order or plan of GRAPH and simulates its memory (model: docs/simulator.md).\n"
         "ORDER.json is {\"order\": [ids]} (the output of `memsched order` is accepted) or a bare array;\n"
         "PLAN.json is {\"steps\": [{\"op\": \"compute\", \"node\": id}, {\"op\": \"free\", \"node\": id}, ...]}.\n\n"
         "Prints {\"valid\": true, \"peak_bytes\", \"peak_step\", \"peak_node\", \"total_cost\", \"overhead\",\n"
         "\"arena\", \"arena_bytes\", \"fragmentation\", \"offchip_bytes\", \"offchip\", \"timeline\": [...]}.\n"
         "An order or plan the simulator rejects prints {\"valid\": false, \"error\": \"...\"} and exits with\n"
         "code 1; a file that cannot be read as an order or plan of GRAPH (unknown node id, bad format)\n"
         "is an error naming the file and the entry (stderr, exit code 1).\n\n"
         "options:\n"
         "  --order FILE     the order to simulate\n"
         "  --plan FILE      the plan (compute/free steps, recomputation allowed) to simulate\n"
         "  --arena NAME     tensor placement for arena_bytes: greedy-by-size (default, as TFLite) or\n"
         "                   first-fit\n"
         "  --onchip BYTES   on-chip capacity: offchip_bytes = bytes moved off and back on chip under\n"
         "                   Belady eviction (orders only; null without this option or for plans)\n"
         "  --json           one-line JSON\n";
}

memsched::arena_strategy parse_strategy(const std::string& name) {
  if (name == "greedy-by-size") return memsched::arena_strategy::greedy_by_size;
  if (name == "first-fit") return memsched::arena_strategy::first_fit;
  throw usage_error("unknown --arena '" + name + "' (greedy-by-size or first-fit)");
}

int invalid(const std::string& error, bool one_line) {
  print_json({{"valid", false}, {"error", error}}, one_line);
  return 1;
}

int simulate_order_file(const memsched::memory_graph& g, const std::string& path,
                        const parsed_args& args) {
  const bool one_line = args.has("json");
  const std::vector<std::size_t> order = memsched::read_order(path, g.all_ids());
  memsched::order_simulation sim;
  try {
    sim = memsched::simulate_order(g, order);
  } catch (const memsched::invalid_order& e) {
    return invalid(e.what(), one_line);
  }
  const auto strategy = parse_strategy(args.get_or("arena", "greedy-by-size"));
  const memsched::arena_plan arena = memsched::plan_arena(g, order, strategy);
  json out = {{"valid", true},
              {"kind", "order"},
              {"peak_bytes", sim.peak_bytes},
              {"peak_step", order.empty() ? json(nullptr) : json(sim.peak_step)},
              {"peak_node", order.empty() ? json(nullptr) : json(g.id(order[sim.peak_step]))},
              {"resident_at_peak", memsched::order_to_json(g.all_ids(), sim.resident_at_peak)},
              {"total_cost", g.total_cost()},
              {"overhead", 0.0},
              {"arena", std::string(to_string(strategy))},
              {"arena_bytes", arena.arena_bytes},
              {"fragmentation", arena.fragmentation},
              {"offchip_bytes", nullptr},
              {"offchip", nullptr}};
  if (const auto onchip = args.get_int("onchip")) {
    if (*onchip < 0) throw usage_error("--onchip must be >= 0");
    const auto t = memsched::offchip_traffic(g, order, *onchip);
    out["offchip"] = {{"status", std::string(to_string(t.status))},
                      {"capacity", t.capacity},
                      {"bytes_written", t.bytes_written},
                      {"bytes_read", t.bytes_read},
                      {"evictions", t.evictions},
                      {"reloads", t.reloads},
                      {"max_working_set", t.max_working_set}};
    if (t.status == memsched::solve_status::feasible)
      out["offchip_bytes"] = t.total_bytes;
    else
      out["offchip"]["error"] = t.error;
  }
  json timeline = json::array();
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t v = order[k];
    timeline.push_back({{"step", k},
                        {"node", g.id(v)},
                        {"live_before", sim.live_before[k]},
                        {"transient", sim.transient[k]},
                        {"live_after", sim.live_after[k]},
                        {"offset", arena.offset[v]}});
  }
  out["timeline"] = std::move(timeline);
  print_json(out, one_line);
  return 0;
}

int simulate_plan_file(const memsched::memory_graph& g, const std::string& path,
                       const parsed_args& args) {
  const bool one_line = args.has("json");
  if (args.has("onchip")) throw usage_error("--onchip applies to --order only");
  const memsched::execution_plan plan = memsched::read_plan(path, g.all_ids());
  memsched::plan_simulation sim;
  try {
    sim = memsched::simulate_plan(g, plan);
  } catch (const memsched::invalid_plan& e) {
    return invalid(e.what(), one_line);
  }
  const auto strategy = parse_strategy(args.get_or("arena", "greedy-by-size"));
  const memsched::plan_arena_layout arena = memsched::plan_arena(g, plan, strategy);
  json out = {{"valid", true},
              {"kind", "plan"},
              {"peak_bytes", sim.peak_bytes},
              {"peak_step", sim.computes == 0 ? json(nullptr) : json(sim.peak_step)},
              {"peak_node", sim.computes == 0 ? json(nullptr) : json(g.id(plan.steps[sim.peak_step].node))},
              {"computes", sim.computes},
              {"total_cost", sim.total_cost},
              {"overhead", sim.overhead},
              {"arena", std::string(to_string(strategy))},
              {"arena_bytes", arena.arena_bytes},
              {"fragmentation", arena.fragmentation},
              {"offchip_bytes", nullptr},
              {"offchip", nullptr}};
  json timeline = json::array();
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    const auto& s = plan.steps[k];
    json step = {{"step", k}, {"op", std::string(to_string(s.op))}, {"node", g.id(s.node)}, {"live_before", sim.live_before[k]}};
    if (s.op == memsched::plan_op::compute) {
      step["transient"] = sim.transient[k];
      step["offset"] = arena.offset[k];
    }
    step["live_after"] = sim.live_after[k];
    timeline.push_back(std::move(step));
  }
  out["timeline"] = std::move(timeline);
  print_json(out, one_line);
  return 0;
}

int run_simulate(const std::vector<std::string>& argv) {
  const parsed_args args(argv, option_spec{{"order", "plan", "arena", "onchip"}, {"json"}});
  const std::string& path = args.one_positional("graph file");
  const auto order_file = args.get("order");
  const auto plan_file = args.get("plan");
  if (order_file.has_value() == plan_file.has_value()) throw usage_error("give exactly one of --order and --plan");
  // Malformed options are usage errors before any work.
  (void)args.get_int("onchip");
  if (auto a = args.get("arena")) (void)parse_strategy(*a);
  const auto graph = load_graph(path);
  const memsched::memory_graph g = memsched::make_memory_graph(graph, "memsched simulate");
  return order_file ? simulate_order_file(g, *order_file, args) : simulate_plan_file(g, *plan_file, args);
}

const register_subcommand simulate_command{
    {"simulate", "check an order or plan and simulate its memory (peak, arena, off-chip traffic)", simulate_usage, run_simulate}};

}  // namespace
}  // namespace memsched_cli
