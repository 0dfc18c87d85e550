#pragma once
// The DARTS CIFAR network (Liu, Simonyan, Yang: "DARTS: Differentiable Architecture Search",
// ICLR 2019) built from the DARTS-V2 genotype, as a memsched dataflow graph with realistic tensor
// sizes (float32, batch 1) and costs (FLOPs = 2 x multiply-adds).

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/generator_support.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace memsched {

/// Options of make_darts_network. Defaults: the paper's CIFAR-10 evaluation network (20 cells,
/// C = 36, 32x32 input), without the auxiliary head.
struct darts_options {
  std::size_t cells = 20;            ///< Cells; reduction cells at cells/3 and 2*cells/3.
  std::int64_t channels = 36;        ///< C of the first cells; doubled at each reduction cell.
  std::int64_t resolution = 32;      ///< Input image side.
  std::int64_t stem_multiplier = 3;  ///< The stem conv outputs stem_multiplier * C channels.
  std::int64_t classes = 10;         ///< Classifier outputs.
};

namespace detail {

struct darts_op {
  std::string_view kind;  // sep_conv_3x3, dil_conv_3x3, skip_connect, max_pool_3x3
  std::size_t input;      // state index: 0, 1 = the preprocessed cell inputs, 2.. = intermediates
};
// DARTS-V2 (genotypes.py): pairs of ops per intermediate node, concat of states 2..5.
inline constexpr std::array<darts_op, 8> darts_v2_normal{{{"sep_conv_3x3", 0},
                                                          {"sep_conv_3x3", 1},
                                                          {"sep_conv_3x3", 0},
                                                          {"sep_conv_3x3", 1},
                                                          {"sep_conv_3x3", 1},
                                                          {"skip_connect", 0},
                                                          {"skip_connect", 0},
                                                          {"dil_conv_3x3", 2}}};
inline constexpr std::array<darts_op, 8> darts_v2_reduce{{{"max_pool_3x3", 0},
                                                          {"max_pool_3x3", 1},
                                                          {"skip_connect", 2},
                                                          {"max_pool_3x3", 1},
                                                          {"max_pool_3x3", 0},
                                                          {"skip_connect", 2},
                                                          {"skip_connect", 2},
                                                          {"max_pool_3x3", 1}}};

class darts_builder {
 public:
  struct tensor {
    std::size_t node;
    std::int64_t c, h, w;
    [[nodiscard]] std::int64_t elements() const { return c * h * w; }
  };

  graph_builder b;

  tensor add(const std::string& name, std::string op, std::int64_t c, std::int64_t h, std::int64_t w, double cost,
             const std::vector<std::size_t>& inputs) {
    return {b.add(name, std::move(op), float_bytes * c * h * w, cost, inputs), c, h, w};
  }
  tensor relu(const std::string& name, const tensor& x) { return add(name, "relu", x.c, x.h, x.w, double(x.elements()), {x.node}); }
  tensor bn(const std::string& name, const tensor& x) { return add(name, "batchnorm", x.c, x.h, x.w, 2.0 * double(x.elements()), {x.node}); }
  /// Dense conv (groups = 1) or depthwise (depthwise = true, cout = cin).
  tensor conv(const std::string& name, const tensor& x, std::int64_t cout, std::int64_t kernel, std::int64_t stride, bool depthwise = false) {
    const std::int64_t h = (x.h + stride - 1) / stride, w = (x.w + stride - 1) / stride;
    const double cin = depthwise ? 1.0 : double(x.c);
    const double cost = 2.0 * cin * double(kernel * kernel) * double(cout * h * w);
    return add(name, depthwise ? "depthwise_conv2d" : "conv2d", cout, h, w, cost, {x.node});
  }
  tensor relu_conv_bn(const std::string& p, const tensor& x, std::int64_t cout) {
    return bn(p + ".bn", conv(p + ".conv", relu(p + ".relu", x), cout, 1, 1));
  }
  /// FactorizedReduce: relu, two 1x1 stride-2 convs to cout/2 each (the second on the input shifted
  /// by one pixel: a view, no node), concat, bn.
  tensor factorized_reduce(const std::string& p, const tensor& x, std::int64_t cout) {
    const tensor r = relu(p + ".relu", x);
    const tensor a = conv(p + ".conv_1", r, cout / 2, 1, 2), c = conv(p + ".conv_2", r, cout - cout / 2, 1, 2);
    const tensor cat = add(p + ".concat", "concat", cout, a.h, a.w, double(a.elements() + c.elements()), {a.node, c.node});
    return bn(p + ".bn", cat);
  }
  tensor sep_conv(const std::string& p, const tensor& x, std::int64_t stride) {
    tensor t = relu(p + ".relu1", x);
    t = conv(p + ".dw1", t, x.c, 3, stride, true);
    t = bn(p + ".bn1", conv(p + ".pw1", t, x.c, 1, 1));
    t = relu(p + ".relu2", t);
    t = conv(p + ".dw2", t, x.c, 3, 1, true);
    return bn(p + ".bn2", conv(p + ".pw2", t, x.c, 1, 1));
  }
  tensor dil_conv(const std::string& p, const tensor& x, std::int64_t stride) {
    tensor t = relu(p + ".relu", x);
    t = conv(p + ".dw", t, x.c, 3, stride, true);  // dilation 2: same size and FLOPs as a 3x3
    return bn(p + ".bn", conv(p + ".pw", t, x.c, 1, 1));
  }
  tensor max_pool(const std::string& p, const tensor& x, std::int64_t stride) {
    const std::int64_t h = (x.h + stride - 1) / stride, w = (x.w + stride - 1) / stride;
    return add(p + ".maxpool", "maxpool2d", x.c, h, w, 9.0 * double(x.c * h * w), {x.node});
  }

  tensor cell(const std::string& p, const tensor& s0, const tensor& s1, std::int64_t c, bool reduction, bool reduction_prev) {
    std::vector<tensor> states;
    states.push_back(reduction_prev ? factorized_reduce(p + ".pre0", s0, c) : relu_conv_bn(p + ".pre0", s0, c));
    states.push_back(relu_conv_bn(p + ".pre1", s1, c));
    const auto& genotype = reduction ? darts_v2_reduce : darts_v2_normal;
    for (std::size_t i = 0; i < 4; ++i) {
      std::array<tensor, 2> h{};
      for (std::size_t j = 0; j < 2; ++j) {
        const std::size_t k = 2 * i + j;
        const darts_op& op = genotype[k];
        const tensor& in = states[op.input];
        const std::int64_t stride = reduction && op.input < 2 ? 2 : 1;
        const std::string name = p + ".ops." + std::to_string(k);
        if (op.kind == "sep_conv_3x3") h[j] = sep_conv(name, in, stride);
        else if (op.kind == "dil_conv_3x3") h[j] = dil_conv(name, in, stride);
        else if (op.kind == "max_pool_3x3") h[j] = max_pool(name, in, stride);
        else h[j] = stride == 1 ? in : factorized_reduce(name, in, c);  // skip_connect
      }
      states.push_back(add(p + ".node" + std::to_string(i + 2), "add", h[0].c, h[0].h, h[0].w, double(h[0].elements()),
                           {h[0].node, h[1].node}));
    }
    const tensor& t = states[2];
    return add(p + ".concat", "concat", 4 * c, t.h, t.w, double(4 * t.elements()),
               {states[2].node, states[3].node, states[4].node, states[5].node});
  }
};

}  // namespace detail

/// Builds the DARTS CIFAR evaluation network with the DARTS-V2 genotype (inference, no auxiliary
/// head): input 3 x R x R -> stem conv 3x3 (stem_multiplier * C) -> bn -> `cells` cells -> global
/// average pool -> linear. Cell i reads the outputs of cells i-1 and i-2 (the stem for the first
/// two) through its preprocess nodes (relu -> 1x1 conv -> bn, or a FactorizedReduce after a
/// reduction cell); it has 4 intermediate nodes (`add` of two ops applied to earlier states) and
/// outputs their `concat` (4C channels). Reduction cells (at cells/3 and 2*cells/3, C doubled)
/// apply their ops on the cell inputs with stride 2. Ops: sep_conv_3x3 = relu, depthwise 3x3,
/// pointwise 1x1, bn, twice; dil_conv_3x3 = relu, depthwise 3x3 (dilation 2), pointwise, bn;
/// max_pool_3x3 = maxpool2d; skip_connect = the same tensor (no node) or a FactorizedReduce when
/// strided. Node ops: input, conv2d, depthwise_conv2d, batchnorm, relu, maxpool2d, add, concat,
/// adaptive_avgpool2d, linear. 20 cells: 1031 nodes. Node ids are 0..n-1 in a topological order
/// (the graph's `order`). Deterministic. O(cells).
/// Throws option_error (a std::invalid_argument) naming the field for cells == 0, channels < 2, resolution < 4,
/// stem_multiplier < 1 or classes < 1.
[[nodiscard]] inline dataflow_graph make_darts_network(const darts_options& o = {}) {
  auto fail = [](const char* option, const std::string& requirement) { throw option_error("make_darts_network", option, requirement); };
  if (o.cells == 0) fail("cells", "must be >= 1");
  if (o.channels < 2) fail("channels", "must be >= 2");
  if (o.resolution < 4) fail("resolution", "must be >= 4");
  if (o.stem_multiplier < 1) fail("stem_multiplier", "must be >= 1");
  if (o.classes < 1) fail("classes", "must be >= 1");
  detail::darts_builder d;
  using tensor = detail::darts_builder::tensor;
  const tensor x = d.add("x", "input", 3, o.resolution, o.resolution, 0.0, {});
  const tensor stem = d.bn("stem.bn", d.conv("stem.conv", x, o.stem_multiplier * o.channels, 3, 1));
  tensor s0 = stem, s1 = stem;
  std::int64_t c = o.channels;
  bool reduction_prev = false;
  for (std::size_t i = 0; i < o.cells; ++i) {
    const bool reduction = o.cells >= 3 && (i == o.cells / 3 || i == 2 * o.cells / 3);
    if (reduction) c *= 2;
    const tensor out = d.cell("cells." + std::to_string(i), s0, s1, c, reduction, reduction_prev);
    s0 = s1;
    s1 = out;
    reduction_prev = reduction;
  }
  const tensor pool = d.add("global_pooling", "adaptive_avgpool2d", s1.c, 1, 1, double(s1.elements()), {s1.node});
  const tensor fc = d.add("classifier", "linear", o.classes, 1, 1, 2.0 * double(s1.c) * double(o.classes), {pool.node});
  return d.b.build("darts_v2_cifar_" + std::to_string(o.cells) + "cells", "inference", {fc.node});
}

}  // namespace memsched
