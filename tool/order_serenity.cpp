// memsched order GRAPH --algo serenity [--budget BYTES] [--soft-budget paper|bounded|off] [--no-divide]
//   [--rewrite] [--time-limit S] [--attempt-time-limit S] [--max-states N] [--max-memory BYTES|N%] [--threads N]
//   [--decision-budget N] [--decisions-on-training] [--beam-width N] [--reorder-window N] [--reorder-attempts N] [--progress]

#include "cli.hpp"

#include <memsched/order/serenity.hpp>


#include <memsched/graph/identity_rewrite.hpp>

namespace memsched_cli {
namespace {

memsched::serenity_options serenity_options_of(const parsed_args& args) {
  memsched::serenity_options o;
  if (auto b = args.get("budget")) o.budget = budget_of(*b, "budget");
  const std::string soft = args.get_or("soft-budget", "off");
  if (soft == "off") o.soft_budget = memsched::soft_budget_mode::off;
  else if (soft == "paper") o.soft_budget = memsched::soft_budget_mode::paper;
  else if (soft == "bounded") o.soft_budget = memsched::soft_budget_mode::bounded;
  else throw usage_error("--soft-budget must be off, paper or bounded, got '" + soft + "'");
  o.divide = !args.has("no-divide");
  o.time_limit = time_limit_of(args);  // the tool's one rule: seconds > 0, huge = none
  if (auto t = time_limit_of(args, "attempt-time-limit")) o.attempt_time_limit = *t;
  o.max_states = count_of(args, "max-states", o.max_states);  // 0: the library's range error names the flag
  // The same memory cap flag, and rule, as the solver-based remat algorithms.
  if (auto cap = max_memory_of(args, "max-memory")) o.max_bytes = *cap;
  o.decision_budget = count_of(args, "decision-budget", o.decision_budget);
  o.decisions_on_training = args.has("decisions-on-training");
  o.beam_width = count_of(args, "beam-width", o.beam_width);
  o.reorder_window = count_of(args, "reorder-window", o.reorder_window);
  o.reorder_attempts = count_of(args, "reorder-attempts", o.reorder_attempts);
  o.threads = threads_of(args, o.threads);
  return o;
}

memsched::order_result run_serenity(const memsched::dataflow_graph& g, const parsed_args& args) {
  memsched::serenity_options o = serenity_options_of(args);
  progress_printer printer(args);
  if (printer.active()) o.observer = printer;
  if (args.has("rewrite")) {
    const auto rw = memsched::rewrite_identities(g);
    memsched::order_result r = memsched::serenity_order(rw.graph, o);
    // peak_bytes and lower_bound stay those of the rewritten graph; the order lists the original nodes.
    r.order = memsched::original_order(rw, g, r.order);
    return r;
  }
  return memsched::serenity_order(g, o);
}

const register_order_algorithm serenity{
    {"serenity",
     "    Peak-memory-optimal order (Serenity, MLSys 2020): dynamic programming over signatures,\n"
     "    divide and conquer at single-node cuts, soft budgeting. Options:\n"
     "      --budget BYTES            only orders with peak <= BYTES (status infeasible if none)\n"
     "      --soft-budget MODE        off (default), paper (Algorithm 2 as published), bounded\n"
     "      --no-divide               do not split at single-node cuts\n"
     "      --rewrite                 solve the identity-rewritten graph (graph/identity_rewrite.hpp):\n"
     "                                peak and bound are the rewritten graph's; the order lists the\n"
     "                                original nodes, each where its last rewritten part runs\n"
     "      --time-limit S            stop the proof after S seconds (status feasible)\n"
     "      --attempt-time-limit S    time limit T of one soft-budget attempt (default 1)\n"
     "      --max-states N            cap on stored partial schedules per search\n"
     "      --max-memory BYTES|N%     cap on search memory: bytes, or a percentage of the RAM in\n"
     "                                (0, 100] (default 4 GiB)\n"
     "      --threads N               threads over segments (0: all cores; default 1)\n"
     "      --progress                print every better order and lower bound on stderr\n"
     "      --decision-budget N       first slice (expanded signatures) of the decision searches and\n"
     "                                the layered DP, which take turns on each segment in doubling\n"
     "                                slices (default 524288; 0: layered DP only)\n"
     "      --decisions-on-training   let them take turns on training segments (backward or loss\n"
     "                                vertices) too; by default the layered DP runs alone there\n"
     "      --beam-width N            width of the beam search that seeds the upper bound (default\n"
     "                                64; 0: none)\n"
     "      --reorder-window N        local search over orders after the beam: windows of up to N\n"
     "                                vertices around the peak re-ordered (default 0: off; <= 64; try 32)\n"
     "      --reorder-attempts N      windows and moves the local search tries per segment\n"
     "                                (default 4096)\n",
     {{"budget", "soft-budget", "time-limit", "attempt-time-limit", "max-states", "max-memory", "threads",
       "decision-budget", "beam-width", "reorder-window", "reorder-attempts"},
      {"no-divide", "rewrite", "progress", "decisions-on-training"}},
     run_serenity}};

}  // namespace
}  // namespace memsched_cli
