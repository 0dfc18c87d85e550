// memsched order GRAPH --algo serenity [--budget BYTES] [--soft-budget paper|bounded|off] [--no-divide]
//   [--rewrite] [--time-limit S] [--attempt-time-limit S] [--max-states N] [--max-bytes N] [--threads N]
//   [--decision-budget N]

#include "cli.hpp"

#include <memsched/order/serenity.hpp>

#include <queue>
#include <utility>
#include <vector>

#if __has_include(<memsched/graph/identity_rewrite.hpp>)
#include <memsched/graph/identity_rewrite.hpp>
#define MEMSCHED_CLI_HAVE_REWRITE 1
#endif

namespace memsched_cli {
namespace {

memsched::serenity_options serenity_options_of(const parsed_args& args) {
  memsched::serenity_options o;
  if (auto b = args.get_int("budget")) {
    if (*b < 0) throw usage_error("--budget must be >= 0");
    o.budget = *b;
  }
  const std::string soft = args.get_or("soft-budget", "off");
  if (soft == "off") o.soft_budget = memsched::soft_budget_mode::off;
  else if (soft == "paper") o.soft_budget = memsched::soft_budget_mode::paper;
  else if (soft == "bounded") o.soft_budget = memsched::soft_budget_mode::bounded;
  else throw usage_error("--soft-budget must be off, paper or bounded, got '" + soft + "'");
  o.divide = !args.has("no-divide");
  if (auto t = args.get_double("time-limit")) {
    if (*t < 0) throw usage_error("--time-limit must be >= 0");
    o.time_limit = std::chrono::duration<double>(*t);
  }
  if (auto t = args.get_double("attempt-time-limit")) {
    if (*t <= 0) throw usage_error("--attempt-time-limit must be > 0");
    o.attempt_time_limit = std::chrono::duration<double>(*t);
  }
  if (auto s = args.get_int("max-states")) {
    if (*s <= 0) throw usage_error("--max-states must be > 0");
    o.max_states = static_cast<std::uint64_t>(*s);
  }
  if (auto s = args.get_int("max-bytes")) {
    if (*s <= 0) throw usage_error("--max-bytes must be > 0");
    o.max_bytes = static_cast<std::uint64_t>(*s);
  }
  if (auto d = args.get_int("decision-budget")) {
    if (*d < 0) throw usage_error("--decision-budget must be >= 0");
    o.decision_budget = static_cast<std::uint64_t>(*d);
  }
  if (auto t = args.get_int("threads")) {
    if (*t < 0) throw usage_error("--threads must be >= 0");
    o.threads = static_cast<unsigned>(*t);
  }
  return o;
}

memsched::order_result run_serenity(const memsched::dataflow_graph& g, const parsed_args& args) {
  const memsched::serenity_options o = serenity_options_of(args);
  if (args.has("rewrite")) {
#ifdef MEMSCHED_CLI_HAVE_REWRITE
    const auto rw = memsched::rewrite_identities(g);
    memsched::order_result r = memsched::serenity_order(rw.graph, o);
    // peak_bytes and lower_bound are those of the rewritten graph. The order is given over the
    // original nodes: each at the position of its last rewritten part, nodes the rewrite removed
    // (concats) as soon as they are ready; a priority topological sort keeps it valid.
    const std::size_t n = num_vertices(g);
    std::vector<long long> key(n, -1);
    for (std::size_t k = 0; k < r.order.size(); ++k) {
      const std::size_t orig = rw.original[r.order[k]];
      if (orig < n) key[orig] = static_cast<long long>(k);
    }
    const memsched::memory_graph mg = memsched::make_memory_graph(g);
    std::vector<std::size_t> indegree(n), order;
    using item = std::pair<long long, std::size_t>;
    std::priority_queue<item, std::vector<item>, std::greater<>> ready;
    for (std::size_t v = 0; v < n; ++v)
      if ((indegree[v] = mg.in_degree(v)) == 0) ready.emplace(key[v], v);
    while (!ready.empty()) {
      const std::size_t v = ready.top().second;
      ready.pop();
      order.push_back(v);
      for (auto w : mg.successors(v))
        if (--indegree[w] == 0) ready.emplace(key[w], w);
    }
    r.order = std::move(order);
    return r;
#else
    throw usage_error("--rewrite needs memsched/graph/identity_rewrite.hpp, which this build lacks");
#endif
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
     "      --max-bytes N             cap on search memory (default 4 GiB)\n"
     "      --threads N               threads over segments (0: all cores; default 1)\n"
     "      --decision-budget N       signatures the forward/backward decision searches may expand\n"
     "                                per segment before the layered DP takes over (default 524288;\n"
     "                                0: layered DP only)\n",
     {{"budget", "soft-budget", "time-limit", "attempt-time-limit", "max-states", "max-bytes", "threads",
       "decision-budget"},
      {"no-divide", "rewrite"}},
     run_serenity}};

}  // namespace
}  // namespace memsched_cli
