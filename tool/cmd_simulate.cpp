// memsched simulate GRAPH (--order ORDER.json | --plan PLAN.json) [--arena STRATEGY] [--time-limit S]
//                         [--onchip BYTES] [--no-timeline] [--csv FILE] [--json]

#include "cli.hpp"

#include <memsched/core/write_file.hpp>
#include <memsched/sim/arena.hpp>
#include <memsched/sim/offchip_traffic.hpp>
#include <memsched/sim/simulate_order.hpp>
#include <memsched/sim/simulate_plan.hpp>

#include <iostream>
#include <span>
#include <string_view>

namespace memsched_cli {
namespace {

std::string simulate_usage() {
  return "usage: memsched simulate GRAPH (--order ORDER.json | --plan PLAN.json)\n"
         "                         [--arena auto|greedy-by-size|first-fit|exact|none] [--time-limit S]\n"
         "                         [--onchip BYTES] [--json]\n\n"
         "Checks an execution order or plan of GRAPH and simulates its memory (model: docs/simulator.md).\n"
         "ORDER.json is {\"order\": [ids]} (the output of `memsched order` is accepted) or a bare array;\n"
         "PLAN.json is {\"steps\": [{\"op\": \"compute\", \"node\": id}, {\"op\": \"free\", \"node\": id}, ...]}.\n\n"
         "Prints a summary:\n\n"
         "  valid            yes (order of 4 steps)\n"
         "  peak             60 at step 2 (node 101)\n"
         "  arena            60, greedy-by-size, fragmentation 0.00%\n"
         "  arena status     optimal (proven), lower bound 60\n"
         "  timeline         --csv FILE writes it; --json prints everything\n\n"
         "--json prints instead one line {\"valid\": true, \"peak_bytes\", \"peak_step\", \"peak_node\",\n"
         "\"total_cost\", \"overhead\", \"arena\", \"arena_bytes\", \"arena_lower_bound\", \"arena_status\",\n"
         "\"fragmentation\", \"offchip_bytes\", \"offchip\", \"timeline\": [...]} and nothing else on stdout.\n"
         "An order or plan the simulator rejects is said on stderr and printed as the result (\"valid no:\n"
         "...\", with --json {\"valid\": false, \"error\": \"...\"}), exit code 1; a file that cannot be read\n"
         "as an order or plan of GRAPH (unknown node id, bad format) is an error naming the file and the\n"
         "entry (stderr only, exit code 1).\n\n"
         "options:\n"
         "  --order FILE     the order to simulate\n"
         "  --plan FILE      the plan (compute/free steps, recomputation allowed) to simulate\n"
         "  --arena NAME     tensor placement for arena_bytes: auto (default: greedy-by-size, or first-fit\n"
         "                   when more than 2^24 pairs of tensors live at once; \"arena\" names the one\n"
         "                   used), greedy-by-size (as TFLite; quadratic in the tensors live at once),\n"
         "                   first-fit, exact (the least arena, docs/layout.md: arena_status optimal\n"
         "                   when proven, arena_lower_bound the proven bound), or none (no placement:\n"
         "                   the arena fields are null)\n"
         "  --time-limit S   limit of --arena exact (default 10): the best layout found, not proven\n"
         "  --onchip BYTES   on-chip capacity: offchip_bytes = bytes moved off and back on chip under\n"
         "                   Belady eviction (orders only; null without this option or for plans)\n"
         "  --no-timeline    leave \"timeline\" out (it has one entry per step: a plan of millions of\n"
         "                   steps prints hundreds of MB)\n"
         "  --csv FILE       write the timeline as CSV: step,node,op,live_before,transient,live_after\n"
         "                   (op compute or free; what scripts/plot.py timeline reads)\n"
         "  --json           the result as one line of JSON\n";
}

// One timeline entry as nlohmann's dump() writes it (keys sorted), so
// that the output is the same as a DOM's without holding one object per step (a 2-million-step plan
// made a 2 GB DOM).
struct timeline_entry {
  std::size_t step;
  std::string_view op;  // empty for an order (no "op" key)
  std::int64_t node, live_before, live_after;
  std::optional<std::int64_t> transient, offset;  // compute steps only
};

void write_entry(std::ostream& out, const timeline_entry& e) {
  bool first = true;
  auto key = [&](std::string_view name) -> std::ostream& {
    out << (first ? "{" : ",") << '"' << name << "\":";
    first = false;
    return out;
  };
  key("live_after") << e.live_after;
  key("live_before") << e.live_before;
  key("node") << e.node;
  if (e.offset) key("offset") << *e.offset;
  if (!e.op.empty()) key("op") << '"' << e.op << '"';
  key("step") << e.step;
  if (e.transient) key("transient") << *e.transient;
  out << '}';
}

// Prints `doc` as one line of JSON, with "timeline": [entry(0), ..., entry(steps - 1)] in its
// place among the sorted keys (or without it when `timeline` is false), streamed entry by entry.
template <class Entry>
void print_with_timeline(json doc, bool timeline, std::size_t steps, Entry entry) {
  if (!timeline) return print_json(doc);
  static constexpr std::string_view mark = "\"memsched timeline\"";
  doc["timeline"] = "memsched timeline";
  const std::string text = doc.dump();
  const std::size_t at = text.find(mark);
  std::cout << std::string_view(text).substr(0, at) << '[';
  for (std::size_t k = 0; k < steps; ++k) {
    if (k > 0) std::cout << ',';
    write_entry(std::cout, entry(k));
  }
  std::cout << ']' << std::string_view(text).substr(at + mark.size()) << '\n';
}

// --csv FILE: the timeline as CSV rows (checked like every written file).
template <class Entry>
void write_timeline_csv(const std::string& path, std::size_t steps, Entry entry) {
  memsched::write_file(path, [&](std::ostream& out) {
    out << "step,node,op,live_before,transient,live_after\n";
    for (std::size_t k = 0; k < steps; ++k) {
      const timeline_entry e = entry(k);
      out << e.step << ',' << e.node << ',' << (e.op.empty() ? "compute" : e.op) << ',' << e.live_before << ','
          << e.transient.value_or(e.live_before) << ',' << e.live_after << '\n';
    }
  });
}

// The exact strategy's limits: --time-limit, 10 s by default.
memsched::layout_options arena_options(const parsed_args& args) {
  return {.time_limit = time_limit_of(args).value_or(std::chrono::duration<double>(10.0))};
}

// --arena: a strategy, or none (no placement).
std::optional<memsched::arena_strategy> parse_strategy(const std::string& name) {
  if (name == "auto") return memsched::arena_strategy::automatic;
  if (name == "greedy-by-size") return memsched::arena_strategy::greedy_by_size;
  if (name == "first-fit") return memsched::arena_strategy::first_fit;
  if (name == "exact") return memsched::arena_strategy::exact;
  if (name == "none") return std::nullopt;
  throw usage_error("unknown --arena '" + name + "' (auto, greedy-by-size, first-fit, exact or none)");
}

// The layout of `what` (an order or a plan) by --arena, or none.
template <class What>
auto place_tensors(const memsched::memory_graph& g, const What& what, const parsed_args& args) {
  using layout = decltype(memsched::plan_arena(g, what, memsched::arena_strategy::first_fit));
  const auto strategy = parse_strategy(args.get_or("arena", "auto"));
  return strategy ? std::optional<layout>(memsched::plan_arena_with(g, what, *strategy, arena_options(args))) : std::nullopt;
}

// The arena fields of simulate's output (null with --arena none).
template <class Arena>
void add_arena(json& out, const std::optional<Arena>& placed) {
  if (!placed) {
    for (const char* key : {"arena", "arena_bytes", "arena_lower_bound", "arena_status", "fragmentation"}) out[key] = nullptr;
    return;
  }
  const Arena& arena = *placed;
  out["arena"] = std::string(to_string(arena.strategy));
  out["arena_bytes"] = arena.arena_bytes;
  out["arena_lower_bound"] = arena.lower_bound;
  out["arena_status"] = std::string(to_string(arena.status));
  out["fragmentation"] = arena.fragmentation;
}

// An order or plan the simulator rejects: a result (stdout, exit code 1), said on stderr too.
int invalid(const std::string& kind, const std::string& error, const parsed_args& args) {
  std::cerr << "memsched simulate: invalid " << kind << ": " << error << '\n';
  print_result({{"valid", false}, {"error", error}}, args, [&](std::ostream& os) { summary_line(os, "valid", "no: " + error); });
  return 1;
}

// What a person reads without --json: the figures of `doc` with units.
void simulate_summary(std::ostream& os, const json& doc, std::size_t steps, const parsed_args& args) {
  const bool plan = doc["kind"] == "plan";
  summary_line(os, "valid", std::string("yes (") + (plan ? "plan" : "order") + " of " + grouped(static_cast<std::int64_t>(steps)) + " steps)");
  std::string peak = bytes_text(doc["peak_bytes"].get<std::int64_t>());
  if (doc["peak_step"].is_number())
    peak += " at step " + std::to_string(doc["peak_step"].get<std::int64_t>()) + " (node " + std::to_string(doc["peak_node"].get<std::int64_t>()) + ")";
  summary_line(os, "peak", peak);
  if (plan) {
    summary_line(os, "computes", grouped(doc["computes"].get<std::int64_t>()));
    summary_line(os, "overhead", percent_text(doc["overhead"].get<double>(), true) + " compute (total cost " + number_text(doc["total_cost"].get<double>()) + ")");
  }
  if (doc["arena"].is_string()) {
    summary_line(os, "arena", bytes_text(doc["arena_bytes"].get<std::int64_t>()) + ", " + doc["arena"].get<std::string>() + ", fragmentation " +
                                  percent_text(doc["fragmentation"].get<double>()));
    summary_line(os, "arena status", status_text(doc["arena_status"].get<std::string>()) + ", lower bound " +
                                         bytes_text(doc["arena_lower_bound"].get<std::int64_t>()));
  }
  if (doc["offchip"].is_object()) {
    const json& t = doc["offchip"];
    if (doc["offchip_bytes"].is_number())
      summary_line(os, "off-chip traffic", bytes_text(doc["offchip_bytes"].get<std::int64_t>()) + " with " + bytes_text(t["capacity"].get<std::int64_t>()) +
                                               " on chip (" + grouped(t["evictions"].get<std::int64_t>()) + " evictions, " +
                                               grouped(t["reloads"].get<std::int64_t>()) + " reloads)");
    else
      summary_line(os, "off-chip traffic", "none possible: " + t["error"].get<std::string>());
  }
  summary_line(os, "timeline", args.get("csv") ? "written to " + *args.get("csv") : "--csv FILE writes it; --json prints everything");
}

int simulate_order_file(const memsched::memory_graph& g, const std::string& path,
                        const parsed_args& args) {
  const std::vector<std::size_t> order = memsched::read_order(path, g.all_ids());
  memsched::order_simulation sim;
  try {
    sim = memsched::simulate_order(g, order);
  } catch (const memsched::invalid_order& e) {
    return invalid("order", e.what(), args);
  }
  const auto arena = place_tensors(g, std::span<const std::size_t>(order), args);
  json out = {{"valid", true},
              {"kind", "order"},
              {"peak_bytes", sim.peak_bytes},
              {"peak_step", order.empty() ? json(nullptr) : json(sim.peak_step)},
              {"peak_node", order.empty() ? json(nullptr) : json(g.id(order[sim.peak_step]))},
              {"resident_at_peak", memsched::order_to_json(g.all_ids(), sim.resident_at_peak)},
              {"total_cost", g.total_cost()},
              {"overhead", 0.0},
              {"offchip_bytes", nullptr},
              {"offchip", nullptr}};
  add_arena(out, arena);
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
  const auto entry = [&](std::size_t k) {
    const std::size_t v = order[k];
    return timeline_entry{k, {}, g.id(v), sim.live_before[k], sim.live_after[k], sim.transient[k],
                          arena ? std::optional<std::int64_t>(arena->offset[v]) : std::nullopt};
  };
  if (const auto csv = args.get("csv")) write_timeline_csv(*csv, order.size(), entry);
  if (args.has("json")) print_with_timeline(std::move(out), !args.has("no-timeline"), order.size(), entry);
  else simulate_summary(std::cout, out, order.size(), args);
  return 0;
}

int simulate_plan_file(const memsched::memory_graph& g, const std::string& path,
                       const parsed_args& args) {
  if (args.has("onchip")) throw usage_error("--onchip applies to --order only");
  const memsched::execution_plan plan = memsched::read_plan(path, g.all_ids());
  memsched::plan_simulation sim;
  try {
    sim = memsched::simulate_plan(g, plan);
  } catch (const memsched::invalid_plan& e) {
    return invalid("plan", e.what(), args);
  }
  const auto arena = place_tensors(g, plan, args);
  json out = {{"valid", true},
              {"kind", "plan"},
              {"peak_bytes", sim.peak_bytes},
              {"peak_step", sim.computes == 0 ? json(nullptr) : json(sim.peak_step)},
              {"peak_node", sim.computes == 0 ? json(nullptr) : json(g.id(plan.steps[sim.peak_step].node))},
              {"computes", sim.computes},
              {"total_cost", sim.total_cost},
              {"overhead", sim.overhead},
              {"offchip_bytes", nullptr},
              {"offchip", nullptr}};
  add_arena(out, arena);
  const auto entry = [&](std::size_t k) {
    const auto& s = plan.steps[k];
    timeline_entry e{k, to_string(s.op), g.id(s.node), sim.live_before[k], sim.live_after[k], std::nullopt, std::nullopt};
    if (s.op == memsched::plan_op::compute) {
      e.transient = sim.transient[k];
      if (arena) e.offset = arena->offset[k];
    }
    return e;
  };
  if (const auto csv = args.get("csv")) write_timeline_csv(*csv, plan.steps.size(), entry);
  if (args.has("json")) print_with_timeline(std::move(out), !args.has("no-timeline"), plan.steps.size(), entry);
  else simulate_summary(std::cout, out, plan.steps.size(), args);
  return 0;
}

int run_simulate(const std::vector<std::string>& argv) {
  const parsed_args args(argv, option_spec{{"order", "plan", "arena", "time-limit", "onchip", "csv"}, {"json", "no-timeline"}});
  const std::string& path = args.one_positional("graph file");
  const auto order_file = args.get("order");
  const auto plan_file = args.get("plan");
  if (order_file.has_value() == plan_file.has_value()) throw usage_error("give exactly one of --order and --plan");
  // Malformed options are usage errors before any work.
  (void)args.get_int("onchip");
  if (auto a = args.get("arena")) (void)parse_strategy(*a);
  (void)time_limit_of(args);
  const auto graph = load_graph(path);
  const memsched::memory_graph g = memsched::make_memory_graph(graph, "memsched simulate");
  return order_file ? simulate_order_file(g, *order_file, args) : simulate_plan_file(g, *plan_file, args);
}

const register_subcommand simulate_command{
    {"simulate", "check an order or plan and simulate its memory (peak, arena, off-chip traffic)", simulate_usage, run_simulate}};

}  // namespace
}  // namespace memsched_cli
