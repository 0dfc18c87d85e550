// memsched rewrite GRAPH --out FILE.json|.graphml|.dot [--json]

#include "cli.hpp"

#include <memsched/graph/identity_rewrite.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/order/kahn.hpp>

namespace memsched_cli {
namespace {

std::string rewrite_usage() {
  return "usage: memsched rewrite GRAPH --out FILE [--no-elementwise] [--no-channel-wise] [--no-kernel-wise]\n"
         "                        [--pools] [--max-passes N] [--json]\n\n"
         "Serenity's identity graph rewriting: concat -> conv2d becomes accumulating partial convolutions,\n"
         "concat -> depthwise conv becomes per-input depthwise convs and a concat (see docs/ops.md).\n"
         "Writes the rewritten graph to FILE in the format of its extension (.json, .graphml, .dot) and\n"
         "prints a summary (nodes and Kahn peak before -> after, rewrites); --json: one line {\"concat_conv_rewrites\", \"concat_depthwise_rewrites\", \"concats_removed\", \"passes\",\n"
         "\"nodes_before\", \"nodes_after\", \"kahn_peak_before\", \"kahn_peak_after\",\n"
         "\"original\": [id of the input node each output node comes from]}.\n"
         "  --no-elementwise   do not look through relu/batchnorm/... between the concat and the conv\n"
         "  --pools            treat maxpool2d/avgpool2d like depthwise convs (kernel-wise)\n";
}

int run_rewrite(const std::vector<std::string>& argv) {
  const parsed_args args(argv, {{"out", "max-passes"}, {"json", "no-elementwise", "no-channel-wise", "no-kernel-wise", "pools"}});
  const std::string& path = args.one_positional("graph file");
  const auto out = args.get("out");
  if (!out) throw usage_error("--out FILE is required");
  check_graph_path(*out);
  memsched::identity_rewrite_options o;
  o.through_elementwise = !args.has("no-elementwise");
  o.channel_wise = !args.has("no-channel-wise");
  o.kernel_wise = !args.has("no-kernel-wise");
  o.pooling_is_kernel_wise = args.has("pools");
  o.max_passes = static_cast<std::size_t>(integer_of(args, "max-passes", static_cast<long long>(o.max_passes), 1, std::numeric_limits<long long>::max()));
  const auto graph = load_graph(path);
  const auto r = memsched::rewrite_identities(graph, o);
  save_graph(*out, r.graph);
  const json doc = {{"concat_conv_rewrites", r.concat_conv_rewrites},
                    {"concat_depthwise_rewrites", r.concat_depthwise_rewrites},
                    {"concats_removed", r.concats_removed},
                    {"passes", r.passes},
                    {"nodes_before", num_vertices(graph)},
                    {"nodes_after", num_vertices(r.graph)},
                    {"kahn_peak_before", memsched::kahn_order(graph).peak_bytes},
                    {"kahn_peak_after", memsched::kahn_order(r.graph).peak_bytes},
                    {"out", *out},
                    {"original", memsched::order_to_json(node_ids(graph), r.original)}};
  print_result(doc, args, [&](std::ostream& os) {
    summary_line(os, "nodes", grouped(doc["nodes_before"].get<std::int64_t>()) + " -> " + grouped(doc["nodes_after"].get<std::int64_t>()));
    summary_line(os, "rewrites", grouped(static_cast<std::int64_t>(r.concat_conv_rewrites + r.concat_depthwise_rewrites)) + " (" +
                                     grouped(static_cast<std::int64_t>(r.concats_removed)) + " concats removed, " + std::to_string(r.passes) + " passes)");
    summary_line(os, "kahn peak", bytes_text(doc["kahn_peak_before"].get<std::int64_t>()) + " -> " + bytes_text(doc["kahn_peak_after"].get<std::int64_t>()));
    summary_line(os, "written to", *out);
  });
  return 0;
}

const register_subcommand rewrite_command{{"rewrite", "apply Serenity's identity graph rewriting (concat + conv)", rewrite_usage, run_rewrite}};

}  // namespace
}  // namespace memsched_cli
