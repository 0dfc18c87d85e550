// memsched convert MODEL --out FILE [--dim NAME=V,...] [--alias-views] [--no-fold] [--json]: converts
// a graph between the file formats (.onnx, .json, .graphml, .dot in; .json, .graphml, .dot out).

#include "cli.hpp"

#include <memsched/graph/read_graph.hpp>
#if defined(MEMSCHED_HAVE_ONNX)
#include <memsched/graph/onnx_io.hpp>
#endif

#include <algorithm>
#include <array>
#include <filesystem>
#include <string>
#include <string_view>

namespace memsched_cli {
namespace {

std::string convert_usage() {
  return "usage: memsched convert MODEL --out FILE [--dim NAME=V[,NAME=V...]] [--alias-views] [--no-fold] [--no-inplace] [--json]\n\n"
         "Reads MODEL (.json, .graphml, .dot, or an ONNX model .onnx when the tool was built with ONNX) and\n"
         "writes it to FILE in the format of FILE's extension (.json, .graphml, .dot or .gv). Prints a\n"
         "summary (nodes, edges, bytes, file); --json: one line {\"file\", \"out\", \"nodes\", \"edges\", \"total_bytes\"} and, for ONNX, \"weights\", \"weight_bytes\",\n"
         "\"constant_nodes\", \"folded_nodes\", \"merged_views\" (what is not a vertex: docs/graph-format.md), \"inplace_nodes\".\n\n"
         "ONNX options (an error for other inputs):\n"
         "  --dim NAME=V,...   bind symbolic dimensions (batch=1); every one in the model must be bound\n"
         "  --alias-views      Reshape/Flatten/Squeeze/Unsqueeze/Identity share their input's memory\n"
         "  --no-fold          every node but Constant is a vertex, even one computing from weights only\n"
         "  --no-inplace       no in-place outputs (by default element-wise and shape-only ops may write\n"
         "                     over an input of their size that dies there: docs/simulator.md)\n"
         "  --json             one-line JSON\n";
}

bool is_onnx(const std::string& path) { return std::filesystem::path(path).extension() == ".onnx"; }

// The options that apply to ONNX models only (an error for other inputs or without ONNX).
constexpr std::array<std::string_view, 4> onnx_only_options{"dim", "alias-views", "no-fold", "no-inplace"};

// "--dim, --alias-views, --no-fold and --no-inplace": how the errors name them.
std::string onnx_only_list() {
  std::string text;
  for (std::size_t k = 0; k < onnx_only_options.size(); ++k)
    text += (k == 0 ? "--" : k + 1 == onnx_only_options.size() ? " and --" : ", --") + std::string(onnx_only_options[k]);
  return text;
}

int run_convert(const std::vector<std::string>& argv) {
  const parsed_args args(argv, option_spec{{"out", "dim"}, {"alias-views", "no-fold", "no-inplace", "json"}});
  const std::string& path = args.one_positional("graph file");
  const auto out = args.get("out");
  if (!out) throw usage_error("--out FILE is required");
  const std::string ext = std::filesystem::path(*out).extension().string();
  if (ext != ".json" && ext != ".graphml" && ext != ".dot" && ext != ".gv")
    throw usage_error("--out " + *out + ": unknown graph file extension (expected .json, .graphml or .dot)");
  const bool onnx_options =
      std::any_of(onnx_only_options.begin(), onnx_only_options.end(), [&](std::string_view name) { return args.has(std::string(name)); });
  if (onnx_options && !is_onnx(path)) throw usage_error(onnx_only_list() + " apply to .onnx models only");

  json doc = {{"file", path}, {"out", *out}};
  memsched::dataflow_graph g;
  if (is_onnx(path)) {
#if defined(MEMSCHED_HAVE_ONNX)
    memsched::onnx_read_options options{.alias_views = args.has("alias-views"), .fold_constants = !args.has("no-fold"),
                                          .inplace = !args.has("no-inplace")};
    if (const auto dims = args.get("dim")) {
      std::string_view rest = *dims;
      while (true) {
        const auto comma = rest.find(',');
        try {
          const auto [name, value] = memsched::parse_onnx_dim(rest.substr(0, comma));
          if (!options.dims.emplace(name, value).second) throw usage_error("--dim binds '" + name + "' twice");
        } catch (const memsched::graph_error& e) {
          throw usage_error(std::string("--dim: ") + e.what());
        }
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
    }
    auto r = memsched::read_onnx_model(path, options);
    doc["weights"] = r.weights;
    doc["weight_bytes"] = r.weight_bytes;
    doc["constant_nodes"] = r.constant_nodes;
    doc["folded_nodes"] = r.folded_nodes;
    doc["merged_views"] = r.merged_views;
    doc["inplace_nodes"] = r.inplace_nodes;
    g = std::move(r.graph);
#else
    if (onnx_options) throw usage_error("this memsched was built without ONNX (libonnx-dev): " + onnx_only_list() + " are unavailable");
    g = memsched::read_graph(path);  // its error names the file and says .onnx needs ONNX
#endif
  } else {
    g = memsched::read_graph(path);
  }
  memsched::write_graph(*out, g);
  std::int64_t total = 0;
  for (std::size_t v = 0; v < num_vertices(g); ++v) total += g[v].bytes;
  doc["nodes"] = num_vertices(g);
  doc["edges"] = num_edges(g);
  doc["total_bytes"] = total;
  print_result(doc, args, [&](std::ostream& os) {
    summary_line(os, "read", path);
    summary_line(os, "nodes", grouped(static_cast<std::int64_t>(num_vertices(g))));
    summary_line(os, "edges", grouped(static_cast<std::int64_t>(num_edges(g))));
    summary_line(os, "total bytes", bytes_text(total));
    if (doc.contains("weights"))
      summary_line(os, "weights", grouped(doc["weights"].get<std::int64_t>()) + " tensors, " + bytes_text(doc["weight_bytes"].get<std::int64_t>()) +
                                      " (not vertices); " + grouped(doc["folded_nodes"].get<std::int64_t>()) + " nodes folded, " +
                                      grouped(doc["inplace_nodes"].get<std::int64_t>()) + " in place");
    summary_line(os, "written to", *out);
  });
  return 0;
}

const register_subcommand convert_command{
    {"convert", "convert a graph or ONNX model between formats (.onnx/.json/.graphml/.dot -> .json/.graphml/.dot)", convert_usage,
     run_convert}};

}  // namespace
}  // namespace memsched_cli
