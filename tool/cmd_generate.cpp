// memsched generate randwire|darts|random-layered|gpt [options] --out FILE.json|.graphml|.dot

#include "cli.hpp"

#include <memsched/graph/darts.hpp>
#include <memsched/graph/gpt.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/random_layered.hpp>
#include <memsched/graph/randwire.hpp>
#include <memsched/sim/layout_io.hpp>
#include <memsched/sim/random_layout.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace memsched_cli {
namespace {

std::string generate_usage() {
  return "usage: memsched generate KIND [options] --out FILE [--json]\n\n"
         "Writes a generated graph to FILE in the format of its extension (.json, .graphml, .dot) and\n"
         "prints a summary (nodes, edges, file; --json: one line {\"kind\", \"nodes\", \"edges\", \"out\"}). At most 10,000,000 nodes (random-layered --nodes,\n"
         "randwire --nodes x --stages x 4, darts --cells x 16) and 20,000,000 edges (random-layered: an\n"
         "upper bound from --nodes, --width, --width-variation and --edge-density, checked before anything\n"
         "is built); sizes whose total could overflow 64 bits\n"
         "(more than a graph file can hold) are refused before anything is generated.\n\n"
         "kinds and options (defaults in brackets):\n"
         "  randwire        RandWire network (Xie et al. 2019) of WS random stages\n"
         "    --stages N [3] --nodes N [32] --k K [4] --p P [0.75] --seed S [0] --channels C [78]\n"
         "    --resolution R [224] --classes N [1000] --compact (one node per RandWire node)\n"
         "    --no-stem-head (start at a C x R/4 x R/4 input, end at the last stage)\n"
         "  darts           DARTS-V2 CIFAR network (Liu et al. 2019)\n"
         "    --cells N [20] --channels C [36] --resolution R [32] --stem-multiplier M [3] --classes N [10]\n"
         "  random-layered  random layered DAG (Gagrani et al. 2022 App. A, Moccasin's RL graphs)\n"
         "    --nodes N [100] --width W [0.27] --width-variation V [0.75] --edge-density D [0.2]\n"
         "    --skip-density S [0.14] --seed S [0] --min-bytes B [10] --max-bytes B [8000] --byte-step B [10]\n"
         "    --min-cost C [1] --max-cost C [1000] --sizes uniform|product [uniform] (product: u1 x u2 of\n"
         "    the range, skewed to small sizes like the Moccasin artifact's)\n"
         "  gpt             GPT decoder stack at aten-trace granularity (15 nodes per layer; fp32, FLOPs;\n"
         "                  the defaults are GPT-2 small; `memsched train` makes its training graph)\n"
         "    --layers N [12] --hidden D [768] --heads H [12] --sequence S [256] --batch B [1]\n"
         "    --vocab V [50257] --mlp-ratio R [4]\n"
         "  layout          not a graph: buffers with random lifetimes and sizes for `memsched layout`\n"
         "                  (sim/random_layout.hpp), written as CSV (--out FILE.csv)\n"
         "    --buffers N [10000] --horizon T [buffers / 2] --long-lived F [0.05] --mean-short L [8]\n"
         "    --min-size B [64] --max-size B [1048576] --alignment A [1] --seed S [0]\n";
}

template <class T>
void set_int(const parsed_args& a, const char* name, T& field) {
  if (auto v = a.get_int(name)) {
    if (*v < 0) throw usage_error(std::string("--") + name + " must be >= 0");
    field = static_cast<T>(*v);
  }
}
void set_double(const parsed_args& a, const char* name, double& field) {
  if (auto v = a.get_double(name)) {
    if (!std::isfinite(*v)) throw usage_error(std::string("--") + name + " must be a finite number");
    field = *v;
  }
}

/// The most nodes a generated graph may have: far beyond any network the generators model, and
/// still a graph the tool's readers and algorithms handle (a few GB of JSON).
constexpr std::size_t max_generated_nodes = 10'000'000;

/// The most edges a generated graph may have: each edge costs memory in the generator, the graph
/// and every reader (a graph at this limit takes a few GB to build and to read back).
constexpr std::uint64_t max_generated_edges = 20'000'000;

/// Throws usage_error when `bound`, an upper bound on the edges the options give (what `what`
/// says), exceeds max_generated_edges: checked before anything is built.
void check_edge_count(std::uint64_t bound, const std::string& what) {
  if (bound > max_generated_edges)
    throw usage_error(what + " could give up to " + std::to_string(bound) + " edges, more than 20,000,000 (the edge limit of memsched generate)");
}

/// Throws usage_error when `count` (what `what` says) exceeds max_generated_nodes.
void check_node_count(long double count, const std::string& what) {
  if (count > static_cast<long double>(max_generated_nodes))
    throw usage_error(what + " would give more than 10,000,000 nodes (the limit of memsched generate)");
}

/// Throws usage_error when `total_bytes`, an upper bound of the graph's total bytes, reaches 2^63
/// (the readers reject a graph whose bytes sum beyond 64 bits: the tool must not write one).
void check_total_bytes(long double total_bytes, const std::string& what) {
  if (!(total_bytes < 9223372036854775808.0L))
    throw usage_error(what + ": the graph's bytes could sum beyond 2^63 - 1, more than a graph file can hold");
}

/// The reader's checks of node data (tool/load_graph.cpp reads with them): a generated graph the
/// tool writes must read back. O(n).
void check_readable(const memsched::dataflow_graph& g, const std::string& kind) {
  std::int64_t total = 0;
  for (std::size_t v = 0; v < num_vertices(g); ++v) {
    const memsched::node& x = g[v];
    if (x.bytes < 0 || x.workspace < 0 || !std::isfinite(x.cost) || x.cost < 0 || __builtin_add_overflow(total, x.bytes, &total) ||
        __builtin_add_overflow(total, x.workspace, &total))
      throw usage_error("generate " + kind + ": these options give node " + std::to_string(x.id) +
                        " sizes or costs a graph file cannot hold (bytes beyond 64 bits in total)");
  }
}

/// generate layout: a CSV of random buffers (make_random_layout).
int generate_layout(const parsed_args& args, const std::string& out) {
  if (!out.ends_with(".csv")) throw usage_error("--out of generate layout must name a .csv file, got '" + out + "'");
  memsched::random_layout_options o;
  set_int(args, "buffers", o.buffers);
  set_int(args, "horizon", o.horizon);
  set_double(args, "long-lived", o.long_lived);
  set_int(args, "mean-short", o.mean_short);
  set_int(args, "min-size", o.min_size);
  set_int(args, "max-size", o.max_size);
  set_int(args, "alignment", o.alignment);
  set_int(args, "seed", o.seed);
  check_node_count(static_cast<long double>(o.buffers), "--buffers");
  memsched::layout_problem p;
  p.buffers = memsched::make_random_layout(o);
  p.ids.reserve(p.buffers.size());
  for (std::size_t i = 0; i < p.buffers.size(); ++i) p.ids.push_back(std::string(1, 'b').append(std::to_string(i)));
  memsched::write_layout_csv(std::filesystem::path(out), p);
  const json doc{{"kind", "layout"}, {"buffers", p.buffers.size()}, {"out", out}};
  print_result(doc, args, [&](std::ostream& os) {
    summary_line(os, "generated", "layout of " + grouped(static_cast<std::int64_t>(p.buffers.size())) + " buffers");
    summary_line(os, "written to", out);
  });
  return 0;
}

int run_generate(const std::vector<std::string>& argv) {
  const option_spec spec{{"out", "stages", "nodes", "k", "p", "seed", "channels", "resolution", "classes", "cells", "stem-multiplier", "width",
                          "width-variation", "edge-density", "skip-density", "min-bytes", "max-bytes", "byte-step", "min-cost", "max-cost",
                          "layers", "hidden", "heads", "sequence", "batch", "vocab", "mlp-ratio", "buffers", "horizon", "long-lived",
                          "mean-short", "min-size", "max-size", "alignment", "sizes"},
                         {"json", "compact", "no-stem-head"}};
  const parsed_args args(argv, spec);
  const std::string& kind = args.one_positional("graph kind");
  const auto out = args.get("out");
  if (!out) throw usage_error("--out FILE is required");
  if (kind == "layout") return generate_layout(args, *out);
  check_graph_path(*out);
  memsched::dataflow_graph g;
  try {
    if (kind == "randwire") {
      memsched::randwire_options o;
      set_int(args, "stages", o.stages);
      set_int(args, "nodes", o.nodes);
      set_int(args, "k", o.k);
      set_double(args, "p", o.p);
      set_int(args, "seed", o.seed);
      set_int(args, "channels", o.channels);
      set_int(args, "resolution", o.resolution);
      set_int(args, "classes", o.classes);
      o.expand_ops = !args.has("compact");
      o.stem_and_head = !args.has("no-stem-head");
      check_node_count(static_cast<long double>(o.nodes) * o.stages * 4, "--nodes x --stages (4 ops each)");
      // Channels double per stage: the last stage's maps bound every node's bytes (4-byte floats).
      const long double side = static_cast<long double>(o.resolution);
      check_total_bytes(static_cast<long double>(o.nodes + 2) * o.stages * 4 * std::ldexp(static_cast<long double>(o.channels) + 3, static_cast<int>(std::min<std::size_t>(o.stages, 4096))) * side * side * 4 +
                            static_cast<long double>(o.classes) * 4 * 4,
                        "--channels, --resolution, --stages and --nodes");
      g = memsched::make_randwire(o);
    } else if (kind == "darts") {
      memsched::darts_options o;
      set_int(args, "cells", o.cells);
      set_int(args, "channels", o.channels);
      set_int(args, "resolution", o.resolution);
      set_int(args, "stem-multiplier", o.stem_multiplier);
      set_int(args, "classes", o.classes);
      check_node_count(static_cast<long double>(o.cells) * 16, "--cells");
      // Channels double twice (at the reductions); a cell's nodes and concat bound every map.
      const long double side = static_cast<long double>(o.resolution);
      check_total_bytes(static_cast<long double>(o.cells + 2) * 64 * (static_cast<long double>(o.channels) * std::max<std::int64_t>(o.stem_multiplier, 4) * 4) * side * side * 4 +
                            static_cast<long double>(o.classes) * 4 * 4,
                        "--channels, --resolution, --stem-multiplier and --cells");
      g = memsched::make_darts_network(o);
    } else if (kind == "random-layered") {
      memsched::random_layered_options o;
      set_int(args, "nodes", o.nodes);
      set_double(args, "width", o.width);
      set_double(args, "width-variation", o.width_variation);
      set_double(args, "edge-density", o.edge_density);
      set_double(args, "skip-density", o.skip_density);
      set_int(args, "seed", o.seed);
      set_int(args, "min-bytes", o.min_bytes);
      set_int(args, "max-bytes", o.max_bytes);
      set_int(args, "byte-step", o.byte_step);
      set_int(args, "min-cost", o.min_cost);
      set_int(args, "max-cost", o.max_cost);
      if (const auto sizes = args.get("sizes")) {
        if (*sizes == "uniform") o.sizes = memsched::random_layered_sizes::uniform;
        else if (*sizes == "product") o.sizes = memsched::random_layered_sizes::product;
        else throw usage_error("--sizes: '" + *sizes + "' is not uniform or product");
      }
      check_node_count(static_cast<long double>(o.nodes), "--nodes");
      check_total_bytes(static_cast<long double>(o.nodes) * std::max(o.max_bytes, o.min_bytes) +
                            static_cast<long double>(o.byte_step),  // min_bytes + byte_step is computed too
                        "--max-bytes x --nodes");
      check_edge_count(memsched::random_layered_edge_bound(o), "--nodes, --width, --width-variation and --edge-density");
      g = memsched::make_random_layered(o);
    } else if (kind == "gpt") {
      memsched::gpt_options o;
      set_int(args, "layers", o.layers);
      set_int(args, "hidden", o.hidden);
      set_int(args, "heads", o.heads);
      set_int(args, "sequence", o.sequence);
      set_int(args, "batch", o.batch);
      set_int(args, "vocab", o.vocab);
      set_int(args, "mlp-ratio", o.mlp_ratio);
      o.name = "gpt_" + std::to_string(o.layers);
      check_node_count(static_cast<long double>(o.layers) * 15 + 8, "--layers (15 nodes each)");
      // Every node is at most the largest tensor (QKV, MLP, scores or head), 4-byte floats.
      const long double tokens = static_cast<long double>(o.batch) * o.sequence;
      const long double largest = std::max({tokens * o.hidden * 3, tokens * o.hidden * o.mlp_ratio, tokens * o.vocab,
                                            tokens * o.sequence * o.heads, static_cast<long double>(o.sequence) * o.sequence});
      check_total_bytes((static_cast<long double>(o.layers) * 15 + 8) * largest * 4, "--layers, --hidden, --sequence, --batch, --heads and --vocab");
      g = memsched::make_gpt(o);
    } else {
      throw usage_error("unknown graph kind '" + kind + "' (randwire, darts, random-layered, gpt)");
    }
  } catch (const memsched::option_error&) {
    throw;  // main names the flag
  } catch (const std::invalid_argument& e) {
    throw usage_error(e.what());  // a generator's cross-field check (usage_error is not an invalid_argument)
  }
  check_readable(g, kind);
  save_graph(*out, g);
  const json doc{{"kind", kind}, {"name", g[boost::graph_bundle].name}, {"nodes", num_vertices(g)}, {"edges", num_edges(g)}, {"out", *out}};
  print_result(doc, args, [&](std::ostream& os) {
    summary_line(os, "generated", kind + " " + g[boost::graph_bundle].name);
    summary_line(os, "nodes", grouped(static_cast<std::int64_t>(num_vertices(g))));
    summary_line(os, "edges", grouped(static_cast<std::int64_t>(num_edges(g))));
    summary_line(os, "written to", *out);
  });
  return 0;
}

const register_subcommand generate_command{{"generate", "write a generated graph (randwire, darts, random-layered, gpt)", generate_usage, run_generate}};

}  // namespace
}  // namespace memsched_cli
