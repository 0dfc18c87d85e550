#pragma once
// The training graph (forward + backward) of a forward (inference) graph, by Checkmate's rule
// (`dfgraph_from_keras` with output and next-output dependencies), with memsched's extensions for
// bilinear operators and graph inputs. The ../shared/graphs/torch/*.training.json files were built
// by exactly this rule from the matching *.inference.json files.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/memory_graph.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace memsched {

/// How make_training_graph builds the backward part (plain aggregate; the defaults are the rule
/// of the shared training graphs).
struct training_graph_options {
  std::string input_op = "input";     ///< Op of graph inputs: they get no gradient node.
  std::string loss_op = "loss";       ///< Op of the loss node.
  std::string loss_name = "loss";     ///< Name of the loss node.
  std::int64_t loss_bytes = 4;        ///< Size of the loss (a float32 scalar).
  double loss_cost_per_byte = 0.25;   ///< Loss cost = this * total bytes of the outputs (elements of float32).
  double grad_cost_factor = 2.0;      ///< cost(g(v)) = factor * cost(v).
  std::string grad_name_prefix = "grad:";
  std::string grad_op_prefix = "grad_";
  bool next_output_dependencies = true;  ///< For each forward edge u -> c: c -> g(u) (Checkmate).
  bool bilinear_operands = true;         ///< Other activation operands w of a bilinear c: w -> g(u).
  bool input_dependencies = true;        ///< Input x read by c with a parameterised op: x -> g(c).
  std::vector<std::string> bilinear_ops = {"mul", "div", "bmm", "baddbmm", "mm", "addmm", "matmul"};
  std::vector<std::string> input_dependency_ops = {"conv2d", "conv_transpose2d", "linear", "addmm", "embedding",
                                                   "batchnorm", "layernorm", "wsum"};
};

/// Builds the forward + backward graph of `forward`:
/// - forward nodes get ids 0..F-1 in topological order (the graph's `order` if it has one, else
///   the smallest-index-first Kahn order, which keeps ids that are already topological);
/// - the loss gets id F (op loss, 4 bytes, cost = total output bytes / 4, backward);
/// - every non-input node v gets g(v) (bytes(v), 2 x cost(v), op grad_<op>, grad_of = v,
///   backward), in reverse forward order, so id order is topological;
/// - edges: the forward edges; o -> loss for each output o; loss -> g(o); for each forward edge
///   u -> c with u not an input: g(c) -> g(u) and c -> g(u); v -> g(v); for a bilinear c (mul,
///   div, bmm, baddbmm, mm, addmm, matmul) each other non-input operand w of c: w -> g(u); for an
///   input x read by c with op conv2d, conv_transpose2d, linear, addmm, embedding, batchnorm,
///   layernorm or wsum: x -> g(c);
/// - outputs = [loss], kind "training".
/// O((n + m) log n + sum over bilinear nodes of in-degree^2). Throws option_error for a
/// grad_cost_factor or loss_cost_per_byte that is not a finite number >= 0 or a negative loss_bytes;
/// graph_error for a graph that is empty, that already has training roles, whose outputs are not
/// set and that has no sinks, or whose training graph is not representable (a gradient cost beyond
/// the range of double, bytes or costs whose sums overflow); cycle_error on a cycle.
[[nodiscard]] inline dataflow_graph make_training_graph(const dataflow_graph& forward, const training_graph_options& options = {}) {
  auto bad_option = [](const char* option, const char* requirement) { throw option_error("make_training_graph", option, requirement); };
  if (!(std::isfinite(options.grad_cost_factor) && options.grad_cost_factor >= 0)) bad_option("grad_cost_factor", "must be a finite number >= 0");
  if (!(std::isfinite(options.loss_cost_per_byte) && options.loss_cost_per_byte >= 0))
    bad_option("loss_cost_per_byte", "must be a finite number >= 0");
  if (options.loss_bytes < 0) bad_option("loss_bytes", "must be >= 0");
  const memory_graph mg = make_memory_graph(forward, "make_training_graph");
  const std::size_t n = mg.size();
  if (n == 0) throw graph_error("make_training_graph: the forward graph is empty");
  // A second backward pass over a loss and gradients means nothing: the result would treat them
  // as forward values and differentiate them again.
  if (mg.has_training_roles())
    throw graph_error("make_training_graph: the graph already has training roles (a loss or backward vertices): give its forward graph");
  const auto& info = forward[boost::graph_bundle];
  std::vector<std::size_t> order;
  if (info.order.size() == n) {
    order = info.order;
  } else {
    order.assign(mg.topological_order().begin(), mg.topological_order().end());
  }
  std::vector<std::size_t> pos(n);
  for (std::size_t i = 0; i < n; ++i) pos[order[i]] = i;
  auto is_input = [&](std::size_t v) { return forward[v].op == options.input_op; };
  auto contains = [](const std::vector<std::string>& list, const std::string& op) {
    return std::find(list.begin(), list.end(), op) != list.end();
  };

  // Vertex layout of the result: forward 0..n-1 (by position), loss n, then g(v) in reverse order.
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> grad(n, none);  // by forward position
  std::size_t next = n + 1;
  for (std::size_t i = n; i-- > 0;)
    if (!is_input(order[i])) grad[i] = next++;
  dataflow_graph g(next);
  auto& out_info = g[boost::graph_bundle];
  out_info.name = info.name;
  out_info.kind = "training";
  double output_bytes = 0;
  for (auto o : mg.outputs()) output_bytes += static_cast<double>(mg.bytes(o));
  for (std::size_t i = 0; i < n; ++i) {
    node nd = forward[order[i]];
    nd.id = static_cast<std::int64_t>(i);
    nd.role = node_role::forward;
    nd.grad_of.reset();
    g[i] = nd;
    if (grad[i] != none) {
      node& gd = g[grad[i]];
      gd.id = static_cast<std::int64_t>(grad[i]);
      gd.name = options.grad_name_prefix + (nd.name.empty() ? std::to_string(i) : nd.name);
      gd.op = options.grad_op_prefix + nd.op;
      gd.bytes = nd.bytes;
      gd.cost = options.grad_cost_factor * nd.cost;
      if (!std::isfinite(gd.cost)) {
        char product[96];
        std::snprintf(product, sizeof product, "%.6g x %.6g", options.grad_cost_factor, nd.cost);
        throw graph_error("make_training_graph: the gradient of " + mg.label(order[i]) + " would cost " + product +
                          ", beyond the range of double: scale the costs or grad_cost_factor down");
      }
      gd.role = node_role::backward;
      gd.grad_of = static_cast<std::int64_t>(i);
    }
  }
  node& loss = g[n];
  loss.id = static_cast<std::int64_t>(n);
  loss.name = options.loss_name;
  loss.op = options.loss_op;
  loss.bytes = options.loss_bytes;
  loss.cost = options.loss_cost_per_byte * output_bytes;
  loss.role = node_role::loss;

  std::vector<std::pair<std::size_t, std::size_t>> edges;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = order[i];
    const std::size_t pc = i;
    for (auto u : mg.predecessors(c)) {
      const std::size_t pu = pos[u];
      edges.emplace_back(pu, pc);
      if (grad[pu] == none) {
        if (options.input_dependencies && grad[pc] != none && contains(options.input_dependency_ops, forward[c].op))
          edges.emplace_back(pu, grad[pc]);
        continue;
      }
      if (options.next_output_dependencies) {
        if (grad[pc] != none) edges.emplace_back(grad[pc], grad[pu]);
        edges.emplace_back(pc, grad[pu]);
      }
      if (options.bilinear_operands && contains(options.bilinear_ops, forward[c].op))
        for (auto w : mg.predecessors(c))
          if (w != u && !is_input(w)) edges.emplace_back(pos[w], grad[pu]);
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    if (grad[i] != none) edges.emplace_back(i, grad[i]);
  for (auto o : mg.outputs()) {
    edges.emplace_back(pos[o], n);
    if (grad[pos[o]] != none) edges.emplace_back(n, grad[pos[o]]);
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  for (auto [a, b] : edges) add_edge(a, b, g);
  out_info.outputs = std::vector<std::size_t>{n};
  // Everything a memory_graph refuses (bytes or costs whose sums overflow) is refused here, so
  // that no training graph is written that the readers would reject.
  (void)make_memory_graph(g, "make_training_graph: the training graph");
  return g;
}

}  // namespace memsched
