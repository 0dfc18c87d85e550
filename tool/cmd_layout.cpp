// memsched layout FILE.csv [--capacity C] [--time-limit S] [--node-limit N] [--max-memory M]
//                          [--out OUT.csv] [--json]

#include "cli.hpp"

#include <memsched/sim/layout.hpp>
#include <memsched/sim/layout_io.hpp>

#include <iostream>

namespace memsched_cli {
namespace {

std::string layout_usage() {
  return "usage: memsched layout FILE.csv [--capacity BYTES] [--time-limit S] [--node-limit N]\n"
         "                       [--max-memory BYTES|N%] [--out OUT.csv] [--json]\n\n"
         "Places buffers with known lifetimes in one arena so that buffers live at the same time never\n"
         "overlap (model: docs/layout.md): greedy layouts, then an exact search that proves the least\n"
         "arena or finds a layout within --capacity.\n"
         "FILE.csv is MiniMalloc's format: a header naming id, lower (or begin), upper (exclusive) or end\n"
         "(inclusive), size, and optionally alignment and offset (a fixed offset); one buffer a row.\n\n"
         "Prints a summary (status in words, arena, bound, greedy start, valid); --json: one line {\"file\", \"buffers\", \"capacity\", \"status\", \"arena_bytes\", \"lower_bound\", \"max_load\",\n"
         "\"greedy_bytes\", \"nodes\", \"valid\"}. status: optimal (the least arena, or a layout within the\n"
         "capacity whose arena equals the bound), feasible (a layout not proven least), infeasible\n"
         "(proven: no layout fits the capacity), time_limit (a limit stopped the search first). The\n"
         "exit code is 0 whatever the status; errors in FILE.csv name the file, line and column (exit 1).\n\n"
         "options:\n"
         "  --capacity BYTES  find any layout within BYTES (decision); default: the least arena\n"
         "  --time-limit S    stop after S seconds with the best layout found (not proven)\n"
         "  --node-limit N    stop after N search nodes (a limit that does not depend on the machine)\n"
         "  --max-memory M    cap on the search's memory (bytes or % of the machine's; default 1 GiB)\n"
         "  --out OUT.csv     write the buffers with their offsets (an `offset` column)\n"
         "  --json            one-line JSON\n";
}

int run_layout(const std::vector<std::string>& argv) {
  const parsed_args args(argv, option_spec{{"capacity", "time-limit", "node-limit", "max-memory", "out"}, {"json"}});
  const std::string& path = args.one_positional("CSV file");
  memsched::layout_options options;
  if (const auto c = args.get("capacity")) options.capacity = budget_of(*c, "capacity");
  options.time_limit = time_limit_of(args);
  if (const auto n = args.get_int("node-limit")) {
    if (*n < 0) throw usage_error("--node-limit must be >= 0");
    options.node_limit = static_cast<std::uint64_t>(*n);
  }
  if (const auto m = max_memory_of(args)) options.max_bytes = *m;
  const memsched::layout_problem problem = memsched::read_layout_csv(std::filesystem::path(path));
  const memsched::layout_result r = memsched::solve_layout(problem.buffers, options);
  const bool found = !r.offsets.empty() || problem.buffers.empty();
  const memsched::layout_check check = found ? memsched::check_layout(problem.buffers, r.offsets, options.capacity)
                                             : memsched::layout_check{};
  if (const auto out = args.get("out"); out && found) memsched::write_layout_csv(*out, problem, r.offsets);
  json doc = {{"file", path},
              {"buffers", problem.buffers.size()},
              {"capacity", options.capacity ? json(*options.capacity) : json(nullptr)},
              {"status", std::string(to_string(r.status))},
              {"arena_bytes", found ? json(r.arena_bytes) : json(nullptr)},
              {"lower_bound", r.lower_bound},
              {"max_load", r.stats.max_load},
              {"greedy_bytes", r.stats.greedy_bytes},
              {"nodes", r.stats.nodes},
              {"valid", found ? json(check.valid) : json(nullptr)}};
  if (!check.valid) doc["error"] = check.error;
  print_result(doc, args, [&](std::ostream& os) {
    summary_line(os, "buffers", grouped(static_cast<std::int64_t>(problem.buffers.size())));
    if (options.capacity) summary_line(os, "capacity", bytes_text(*options.capacity));
    summary_line(os, "status", status_text(doc["status"].get<std::string>()));
    if (found) summary_line(os, "arena", bytes_text(r.arena_bytes));
    summary_line(os, "lower bound", bytes_text(r.lower_bound) + " (most bytes live at once " + bytes_text(r.stats.max_load) + ")");
    summary_line(os, "greedy start", bytes_text(r.stats.greedy_bytes));
    if (found) summary_line(os, "valid", check.valid ? "yes (re-checked)" : "no: " + check.error);
    const auto out = args.get("out");
    if (found) summary_line(os, "layout", out ? "written to " + *out : "not written (--out OUT.csv writes the offsets)");
  });
  return check.valid ? 0 : 1;
}

const register_subcommand layout_command{
    {"layout", "place buffers with lifetimes in the smallest arena (or within a capacity), exactly", layout_usage, run_layout}};

}  // namespace
}  // namespace memsched_cli
