// memsched revolve --steps L --snaps S [--json]

#include "cli.hpp"

#include <memsched/remat/revolve.hpp>

namespace memsched_cli {
namespace {

std::string revolve_usage() {
  return "usage: memsched revolve --steps L --snaps S [--json]\n\n"
         "Prints the Griewank-Walther binomial (revolve) schedule that reverses a chain of L steps with S\n"
         "snapshots: one action per line (advance, takeshot, restore, firsturn, youturn) and the number\n"
         "of forward steps t(L, S) = r*L - C(S+r, r-1). --json prints {\"steps\", \"snaps\",\n"
         "\"forward_steps\", \"actions\": [{\"op\", \"state\", \"steps\"?, \"snapshot\"?}]}.\n";
}

int run_revolve(const std::vector<std::string>& argv) {
  const option_spec spec{{"steps", "snaps"}, {"json"}};
  const parsed_args args(argv, spec);
  if (!args.positional().empty()) throw usage_error("revolve takes no positional arguments");
  const auto l = args.get_int("steps");
  const auto s = args.get_int("snaps");
  if (!l || !s) throw usage_error("--steps and --snaps are required");
  if (*l < 0) throw usage_error("--steps must be >= 0");
  if (*s < 1) throw usage_error("--snaps must be at least 1");
  if (*l > 10'000'000) throw usage_error("--steps is limited to 10000000");
  const auto sched = memsched::revolve_actions(static_cast<std::size_t>(*l), static_cast<std::size_t>(*s));
  if (args.has("json")) {
    json actions = json::array();
    for (const auto& a : sched.actions) {
      json j = {{"op", std::string(to_string(a.op))}, {"state", a.state}};
      if (a.op == memsched::revolve_op::advance) j["steps"] = a.steps;
      if (a.op == memsched::revolve_op::takeshot || a.op == memsched::revolve_op::restore) j["snapshot"] = a.snapshot;
      actions.push_back(std::move(j));
    }
    print_json({{"steps", *l}, {"snaps", *s}, {"forward_steps", sched.forward_steps}, {"actions", std::move(actions)}});
    return 0;
  }
  for (const auto& a : sched.actions) {
    std::cout << to_string(a.op);
    switch (a.op) {
      case memsched::revolve_op::advance: std::cout << " to " << a.state << " (" << a.steps << " steps)"; break;
      case memsched::revolve_op::takeshot:
      case memsched::revolve_op::restore: std::cout << " state " << a.state << " (snapshot " << a.snapshot << ")"; break;
      default: std::cout << " from " << a.state; break;
    }
    std::cout << '\n';
  }
  std::cout << "forward steps: " << sched.forward_steps << '\n';
  return 0;
}

const register_subcommand revolve_command{{"revolve", "Griewank-Walther binomial checkpointing schedule", revolve_usage, run_revolve}};

}  // namespace
}  // namespace memsched_cli
