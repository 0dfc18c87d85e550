// memsched train GRAPH [--out FILE.json|.graphml|.dot]

#include "cli.hpp"

#include <memsched/remat/training_graph.hpp>

namespace memsched_cli {
namespace {

std::string train_usage() {
  return "usage: memsched train GRAPH [--out FILE] [--grad-cost-factor X] [--no-bilinear-operands]\n"
         "                      [--no-input-dependencies] [--no-next-output-dependencies] [--json]\n\n"
         "Builds the training graph (forward + loss + gradients) of the forward graph GRAPH by Checkmate's\n"
         "rule (see docs/remat.md) and writes it to --out FILE (.json, .graphml or .dot, by the extension), or\n"
         "as memsched JSON to standard output. With --out it prints a summary (nodes, edges, file), or with\n"
         "--json one line {\"nodes\", \"forward\", \"backward\", \"edges\", \"out\"}.\n"
         "--grad-cost-factor (default 2): a finite number >= 0.\n"
         "Refuses a graph that already has a loss or backward nodes, and a training graph memsched could not\n"
         "read back (a gradient cost beyond the range of double, sums of bytes or costs that overflow).\n";
}

int run_train(const std::vector<std::string>& argv) {
  const option_spec spec{{"out", "grad-cost-factor"}, {"no-bilinear-operands", "no-input-dependencies", "no-next-output-dependencies", "json"}};
  const parsed_args args(argv, spec);
  const std::string& path = args.one_positional("graph file");
  memsched::training_graph_options options;
  // Finite: a factor of 1e308 that makes some gradient's cost overflow is the library's error.
  options.grad_cost_factor = number_of(args, "grad-cost-factor", options.grad_cost_factor, 0, std::numeric_limits<double>::max());
  options.bilinear_operands = !args.has("no-bilinear-operands");
  options.input_dependencies = !args.has("no-input-dependencies");
  options.next_output_dependencies = !args.has("no-next-output-dependencies");
  if (auto out = args.get("out")) check_graph_path(*out);
  const auto graph = load_graph(path);
  const auto training = memsched::make_training_graph(graph, options);
  if (auto out = args.get("out")) {
    save_graph(*out, training);
    std::size_t forward = 0;
    for (auto v : boost::make_iterator_range(boost::vertices(training))) forward += training[v].role == memsched::node_role::forward;
    const std::size_t nodes = boost::num_vertices(training);
    const json doc{{"nodes", nodes}, {"forward", forward}, {"backward", nodes - forward}, {"edges", boost::num_edges(training)}, {"out", *out}};
    print_result(doc, args, [&](std::ostream& os) {
      summary_line(os, "training graph", grouped(static_cast<std::int64_t>(nodes)) + " nodes (" + grouped(static_cast<std::int64_t>(forward)) +
                                             " forward, " + grouped(static_cast<std::int64_t>(nodes - forward)) + " loss and gradients)");
      summary_line(os, "edges", grouped(static_cast<std::int64_t>(boost::num_edges(training))));
      summary_line(os, "written to", *out);
    });
  } else {
    if (args.has("json")) throw usage_error("--json needs --out (without it the graph itself goes to standard output)");
    std::cout << memsched::to_json(training).dump(1) << '\n';
  }
  return 0;
}

const register_subcommand train_command{{"train", "build the training graph (forward + backward) of a forward graph", train_usage, run_train}};

}  // namespace
}  // namespace memsched_cli
