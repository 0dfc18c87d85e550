// The rematerialization heuristics of memsched/remat as `memsched remat --algo NAME` algorithms.

#include "cli.hpp"

#include <memsched/remat/best_heuristic.hpp>
#include <memsched/remat/revolve.hpp>

#include <optional>

namespace memsched_cli {
namespace {

memsched::best_heuristic_options heuristic_options(const parsed_args& args) {
  memsched::best_heuristic_options o;
  o.greedy_budgets = static_cast<std::size_t>(
      integer_of(args, "greedy-budgets", static_cast<long long>(o.greedy_budgets), 1, std::numeric_limits<long long>::max()));
  return o;
}

std::optional<std::int64_t> segment_bytes(const parsed_args& args) {
  if (!args.get("segment-bytes")) return std::nullopt;
  return integer_of(args, "segment-bytes", 0, 0, std::numeric_limits<std::int64_t>::max());
}

const option_spec greedy_options{{"segment-bytes", "greedy-budgets"}, {}};
const char* greedy_usage =
    "    --segment-bytes B  fixed segment size b (default: search b for the cheapest plan in budget)\n"
    "    --greedy-budgets N values of b tried by the search (default 24)\n";

void register_all() {
  using memsched::remat_heuristic;
  struct info {
    remat_heuristic h;
    const char* text;
  };
  const info infos[] = {
      {remat_heuristic::checkpoint_all, "    Keep every forward value for the backward pass (no recomputation; overhead 0).\n"},
      {remat_heuristic::chen_sqrtn, "    Chen et al. 2016: checkpoint the ends of ~sqrt(n) segments (forward chains only).\n"},
      {remat_heuristic::chen_greedy, "    Chen et al. 2016 greedy segments of b bytes (forward chains only).\n"},
      {remat_heuristic::ap_sqrtn, "    sqrt(n) over the articulation points of the forward graph (Checkmate).\n"},
      {remat_heuristic::ap_greedy, "    Greedy over the articulation points of the forward graph (Checkmate).\n"},
      {remat_heuristic::linearized_sqrtn, "    sqrt(n) over all forward nodes in topological order (Checkmate).\n"},
      {remat_heuristic::linearized_greedy, "    Greedy over all forward nodes in topological order (Checkmate).\n"},
      {remat_heuristic::revolve,
       "    Griewank-Walther binomial checkpointing over the articulation points.\n"
       "    --snapshots S      fixed number of snapshots (default: the most that fit the budget)\n"},
  };
  for (const auto& i : infos) {
    const remat_heuristic h = i.h;
    const bool greedy = h == remat_heuristic::chen_greedy || h == remat_heuristic::ap_greedy || h == remat_heuristic::linearized_greedy;
    remat_algorithm a;
    a.name = std::string(to_string(h));
    a.usage = std::string(i.text) + (greedy ? greedy_usage : "");
    if (greedy) a.options = greedy_options;
    if (h == remat_heuristic::revolve) a.options = {{"snapshots"}, {}};
    a.run = [h](const memsched::dataflow_graph& g, std::int64_t budget, const parsed_args& args, json& extra) {
      const auto opts = heuristic_options(args);
      memsched::remat_result r;
      const auto b = segment_bytes(args);
      const memsched::greedy_options greedy{.segment_bytes = b, .greedy_budgets = opts.greedy_budgets};
      if (h == remat_heuristic::revolve) {
        std::optional<std::size_t> snapshots;
        if (args.get("snapshots"))
          snapshots = static_cast<std::size_t>(integer_of(args, "snapshots", 1, 1, std::numeric_limits<long long>::max()));
        r = memsched::revolve_plan(g, budget, memsched::revolve_options{.snapshots = snapshots});
      } else if (h == remat_heuristic::chen_greedy) {
        r = memsched::chen_greedy_plan(g, budget, greedy);
      } else if (h == remat_heuristic::ap_greedy) {
        r = memsched::ap_greedy_plan(g, budget, greedy);
      } else if (h == remat_heuristic::linearized_greedy) {
        r = memsched::linearized_greedy_plan(g, budget, greedy);
      } else {
        r = memsched::run_remat_heuristic(g, h, budget, opts);
      }
      if (r.stats.snapshots) extra["snapshots"] = *r.stats.snapshots;
      if (r.stats.segment_bytes) extra["segment_bytes"] = *r.stats.segment_bytes;
      if (!r.message.empty()) extra["message"] = r.message;
      return r;
    };
    register_remat_algorithm{std::move(a)};
  }
  remat_algorithm best;
  best.name = "best-heuristic";
  best.usage = "    The cheapest plan within the budget over all the heuristics above.\n";
  best.options = {{"greedy-budgets"}, {}};
  best.run = [](const memsched::dataflow_graph& g, std::int64_t budget, const parsed_args& args, json& extra) {
    memsched::remat_result r = memsched::best_heuristic_plan(g, budget, heuristic_options(args));
    if (!r.message.empty()) extra["message"] = r.message;
    return r;
  };
  register_remat_algorithm{std::move(best)};
}

const bool registered = (register_all(), true);

}  // namespace
}  // namespace memsched_cli
