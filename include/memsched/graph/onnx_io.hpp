#pragma once
// Reading ONNX models (the ONNX C++ library: Debian's libonnx-dev) as dataflow graphs. Link the
// CMake target memsched::onnx (it exists only when ONNX was found at configure time). The reading
// convention is in docs/graph-format.md ("ONNX models"); in short: a vertex per non-weight graph
// input and per computing node, bytes from ONNX shape inference, cost in FLOPs for the
// convolutions and matrix products, weights not planned.

#include <memsched/core/errors.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/detail/graph_record.hpp>
#include <memsched/graph/detail/input_limits.hpp>
#include <memsched/graph/detail/onnx_inference.hpp>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/proto_utils.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace memsched {

/// How read_onnx_graph turns a model into a graph.
struct onnx_read_options {
  /// Values of symbolic dimensions ({"batch", 1}): every dim_param of the model must be bound here,
  /// and every name here must occur in the model.
  std::map<std::string, std::int64_t> dims;
  /// Reshape, Flatten, Squeeze, Unsqueeze and Identity outputs share their input's memory: such a
  /// node is merged into the producer of its data input (no vertex; its readers read the producer).
  bool alias_views = false;
  /// A node whose every input is a weight (an Identity of an initializer, as PyTorch's exporter
  /// writes for shared parameters) computes a weight: no vertex, its outputs are weights too.
  /// Off: every node but Constant is a vertex, and reading a folded value is not an edge.
  bool fold_constants = true;
  /// Element-wise and shape-only nodes get in-place outputs (node::inplace: the output may take
  /// over the buffer of an equal-size input that dies there, as ONNX Runtime, TensorFlow Lite and
  /// PyTorch's inplace=True do; docs/simulator.md). The ops: detail::onnx_inplace_op. Off: no vertex
  /// is in place (every output its own buffer, the model of the papers).
  bool inplace = true;
};

/// A model read by read_onnx_model: the graph and what was left out of it.
struct [[nodiscard]] onnx_read_result {
  dataflow_graph graph;
  std::size_t weights = 0;          ///< Weight tensors: initializers, Constant outputs, folded outputs.
  std::int64_t weight_bytes = 0;    ///< Their bytes, when their shapes are known (external data is not read).
  std::size_t folded_nodes = 0;     ///< Nodes that compute weights (fold_constants).
  std::size_t merged_views = 0;     ///< Nodes merged into their producer (alias_views).
  std::size_t constant_nodes = 0;   ///< Constant nodes.
  std::size_t inplace_nodes = 0;    ///< Vertices with in-place outputs (onnx_read_options::inplace).
};

namespace detail {

/// Bytes of one element of an ONNX TensorProto data type; 0 for types without a fixed size.
[[nodiscard]] inline std::int64_t onnx_element_size(int type) {
  using T = ::onnx::TensorProto;
  switch (type) {
    case T::FLOAT: case T::INT32: case T::UINT32: return 4;
    case T::UINT8: case T::INT8: case T::BOOL: return 1;
    case T::UINT16: case T::INT16: case T::FLOAT16: case T::BFLOAT16: return 2;
    case T::INT64: case T::UINT64: case T::DOUBLE: case T::COMPLEX64: return 8;
    case T::COMPLEX128: return 16;
    default: return 0;
  }
}

/// True when `n` is an op of the default ONNX domain. Only "": onnx_reader respells "ai.onnx" as ""
/// in every graph, subgraphs included, before it looks at a node (spell_default_domain_empty).
[[nodiscard]] inline bool default_domain(const ::onnx::NodeProto& n) { return n.domain().empty(); }

/// True for the shape-only ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity): the output has the
/// input's bytes in another shape (onnx_read_options::alias_views merges them; in place otherwise).
[[nodiscard]] inline bool onnx_view_op(std::string_view op) {
  return op == "Flatten" || op == "Identity" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze";
}

/// True for the ops whose output a runtime may write over an input of the same size that dies there
/// (onnx_read_options::inplace): unary element-wise ops (activations, Clip, Exp, Neg, Sqrt, ...),
/// binary and variadic element-wise ops (Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean: the output
/// takes the first input of its size, so a broadcast input is never taken), Dropout (identity in
/// inference), BatchNormalization (per-channel affine in inference: runtimes that do not fold it into
/// the convolution can run it in place; its training form has 3 outputs, so no input has its size)
/// and the shape-only ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity: same bytes, another
/// shape). Only the default domain. Not: Cast (another element type), Softmax and the normalizations
/// over an axis other than BatchNormalization (ONNX Runtime runs them out of place).
[[nodiscard]] inline bool onnx_inplace_op(std::string_view op) {
  static constexpr std::string_view ops[] = {
      // unary element-wise
      "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Celu", "Clip", "Cos", "Cosh", "Elu", "Erf", "Exp", "Floor",
      "HardSigmoid", "HardSwish", "LeakyRelu", "Log", "Neg", "Not", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin",
      "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu",
      // binary and variadic element-wise (with broadcasting)
      "Add", "And", "BitShift", "Div", "Max", "Mean", "Min", "Mod", "Mul", "Or", "Pow", "PRelu", "Sub", "Sum", "Xor",
      // identity-like in inference
      "BatchNormalization", "Dropout"};
  if (onnx_view_op(op)) return true;
  for (const std::string_view o : ops)
    if (o == op) return true;
  return false;
}

/// The state of one read: the model after shape inference and what is known of its tensors.
class onnx_reader {
 public:
  onnx_reader(::onnx::ModelProto& model, const onnx_read_options& options, std::string source)
      : model_(model), options_(options), source_(std::move(source)) {}

  onnx_read_result run() {
    auto& graph = *model_.mutable_graph();
    spell_default_domain_empty(graph);
    bind_dims(graph);
    check_structure(graph);  // before inference, whose messages on such models say less
    for (const auto& init : graph.initializer()) {
      weights_.insert(init.name());
      initializers_.emplace(init.name(), &init);
    }
    fill_kernel_shapes(graph);
    check_window_attributes(graph);
    type_batchnorm_statistics(graph);
    infer();
    auto add_types = [&](const auto& list) {
      for (const auto& vi : list)
        if (vi.has_type() && vi.type().value_case() != ::onnx::TypeProto::VALUE_NOT_SET) types_.emplace(vi.name(), &vi.type());
    };
    add_types(graph.input());
    add_types(graph.output());
    add_types(graph.value_info());

    onnx_read_result result;
    for (const auto& init : graph.sparse_initializer()) weights_.insert(init.values().name());
    record_.name = graph.name();
    record_.kind = "inference";

    for (const auto& in : graph.input()) {
      if (weights_.count(in.name())) continue;
      const std::int64_t id = add_vertex(in.name(), "input", tensor_bytes(in.name(), "graph input").bytes, 0.0);
      producer_[in.name()] = id;
    }
    for (const auto& n : graph.node()) {
      const std::string who = "node '" + node_name(n) + "' (" + n.op_type() + ")";
      if (n.op_type() == "Constant" && default_domain(n)) {
        ++result.constant_nodes;
        for (const auto& out : n.output()) add_weight(out);
        continue;
      }
      // The tensors this node reads: its inputs and, for If/Loop/Scan, the outer values its subgraphs read.
      std::vector<std::string> reads;
      bool any_input = false, all_weights = true;
      for (const auto& in : n.input()) {
        if (in.empty()) continue;  // an omitted optional input
        any_input = true;
        if (!weights_.count(in)) all_weights = false;
        reads.push_back(in);
      }
      std::vector<std::string> outer;
      for (const auto& attr : n.attribute()) {
        if (attr.has_g()) subgraph_reads(attr.g(), outer);
        for (const auto& sub : attr.graphs()) subgraph_reads(sub, outer);
      }
      for (const auto& name : outer)
        if (producer_.count(name)) {
          all_weights = false;
          reads.push_back(name);
        }
      if (options_.fold_constants && any_input && (all_weights || static_shape_query(n))) {
        ++result.folded_nodes;
        for (const auto& out : n.output())
          if (!out.empty()) add_weight(out);
        continue;
      }
      if (options_.alias_views && default_domain(n) && onnx_view_op(n.op_type()) && !n.input().empty() && !n.input(0).empty()) {
        const std::string& data = n.input(0);
        ++result.merged_views;
        for (const auto& out : n.output()) {
          if (out.empty()) continue;
          if (weights_.count(data)) add_weight(out);
          else producer_[out] = producer_.at(data);
        }
        continue;
      }
      std::int64_t bytes = 0;
      double elements = 0;
      std::optional<std::int64_t> first_elements;  // of output 0, for the FLOPs
      for (int k = 0; k < n.output_size(); ++k) {
        const std::string& out = n.output(k);
        if (out.empty()) continue;
        const tensor_size t = tensor_bytes(out, "output of " + who);
        if (__builtin_add_overflow(bytes, t.bytes, &bytes)) fail(who + ": the bytes of its outputs overflow 64 bits");
        elements += static_cast<double>(t.elements);
        if (k == 0) first_elements = t.elements;
      }
      const auto flops = flops_of(n, who, first_elements);
      const std::int64_t id = add_vertex(node_name(n), n.op_type(), bytes, flops ? *flops : elements);
      if (options_.inplace && default_domain(n) && onnx_inplace_op(n.op_type())) {
        record_.nodes.back().inplace = true;
        ++result.inplace_nodes;
      }
      for (const auto& out : n.output())
        if (!out.empty()) producer_[out] = id;
      for (const auto& in : reads)
        if (const auto it = producer_.find(in); it != producer_.end()) record_.edges.emplace_back(it->second, id);
    }

    std::vector<std::int64_t> outputs;
    for (const auto& out : graph.output()) {
      if (const auto it = producer_.find(out.name()); it != producer_.end()) {
        outputs.push_back(it->second);
      } else if (!weights_.count(out.name())) {
        fail("graph output '" + out.name() + "' is produced by no node and is no graph input or initializer");
      }
    }
    record_.outputs = std::move(outputs);
    // The node order of an ONNX file is topological (checked above): keep it as the input order.
    std::vector<std::int64_t> order(record_.nodes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(i);
    record_.order = std::move(order);
    if (record_.nodes.empty()) fail("the model computes nothing (no graph input and no node that is not a weight)");

    result.weights = weights_.size();
    for (const auto& w : weights_) result.weight_bytes += known_bytes(w).value_or(0);
    result.graph = build_dataflow_graph(std::move(record_), source_);
    return result;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { fail_file(source_, what); }

  /// Shape or Size of a tensor whose shape is static: its output depends on no tensor's contents,
  /// so it is a weight (runtimes fold it), and reading its input is no edge.
  bool static_shape_query(const ::onnx::NodeProto& n) const {
    if (!default_domain(n) || (n.op_type() != "Shape" && n.op_type() != "Size") || n.input_size() != 1) return false;
    std::vector<std::int64_t> dims;
    return find_shape(n.input(0), "input", dims).empty();
  }

  static std::string node_name(const ::onnx::NodeProto& n) { return onnx_node_name(n); }

  /// The default domain may be spelled "ai.onnx"; ONNX's shape inference only knows it as "" (also
  /// in the subgraphs it recurses into), so every node and the opset imports are respelled (an
  /// "ai.onnx" import is dropped when "" is also imported).
  void spell_default_domain_empty(::onnx::GraphProto& graph) {
    spell_nodes_default_domain_empty(graph);
    auto& imports = *model_.mutable_opset_import();
    bool plain = false;
    for (const auto& i : imports) plain = plain || i.domain().empty();
    for (int k = imports.size() - 1; k >= 0; --k) {
      if (imports.Get(k).domain() != "ai.onnx") continue;
      if (plain) {
        imports.DeleteSubrange(k, 1);
      } else {
        imports.Mutable(k)->clear_domain();
        plain = true;
      }
    }
  }

  /// Respells "ai.onnx" as "" on the nodes of `g` and of its subgraphs (GRAPH and GRAPHS
  /// attributes), recursively (the depth is capped by protobuf's parse limit: 100 nested messages).
  static void spell_nodes_default_domain_empty(::onnx::GraphProto& g) {
    for (auto& n : *g.mutable_node()) {
      if (n.domain() == "ai.onnx") n.clear_domain();
      for (auto& attr : *n.mutable_attribute()) {
        if (attr.has_g()) spell_nodes_default_domain_empty(*attr.mutable_g());
        for (auto& sub : *attr.mutable_graphs()) spell_nodes_default_domain_empty(sub);
      }
    }
  }

  std::int64_t add_vertex(const std::string& name, const std::string& op, std::int64_t bytes, double cost) {
    // ONNX strings are unchecked bytes (proto2): build_dataflow_graph rejects names and ops that are
    // not UTF-8 (found by fuzz/onnx_graph.cpp: tests/data/fuzz/onnx/invalid_utf8_name.onnx).
    node v;
    v.id = static_cast<std::int64_t>(record_.nodes.size());
    v.name = name;
    v.op = op;
    v.bytes = bytes;
    v.cost = cost;
    record_.nodes.push_back(std::move(v));
    return record_.nodes.back().id;
  }

  void add_weight(const std::string& name) {
    if (!name.empty()) weights_.insert(name);
  }

  /// Every node input is a graph input, an initializer or the output of an earlier node.
  void check_structure(const ::onnx::GraphProto& graph) const {
    std::set<std::string> known;
    for (const auto& in : graph.input()) known.insert(in.name());
    for (const auto& init : graph.initializer()) known.insert(init.name());
    for (const auto& init : graph.sparse_initializer()) known.insert(init.values().name());
    std::unordered_map<std::string, std::string> later;  // tensor -> the node that produces it
    for (const auto& n : graph.node())
      for (const auto& out : n.output()) {
        if (out.empty()) continue;
        if (known.count(out))
          fail("node '" + node_name(n) + "' (" + n.op_type() + ") produces tensor '" + out + "', which is a graph input or initializer");
        if (const auto [it, added] = later.emplace(out, node_name(n)); !added)
          fail("tensor '" + out + "' is produced twice, by node '" + it->second + "' and by node '" + node_name(n) + "'");
      }
    for (const auto& n : graph.node()) {
      for (const auto& in : n.input()) {
        if (in.empty() || known.count(in)) continue;
        const std::string who = "node '" + node_name(n) + "' (" + n.op_type() + ")";
        if (const auto it = later.find(in); it != later.end())
          fail(who + " reads tensor '" + in + "' before node '" + it->second + "' produces it: ONNX nodes must be in topological order");
        fail(who + " reads tensor '" + in + "', which no node produces and which is no graph input or initializer (a dangling input)");
      }
      for (const auto& out : n.output()) known.insert(out);
    }
  }

  /// Names read by the nodes of `g` (and of its nested subgraphs), to be looked up in the outer scope.
  static void subgraph_reads(const ::onnx::GraphProto& g, std::vector<std::string>& names) {
    for (const auto& n : g.node()) {
      for (const auto& in : n.input())
        if (!in.empty()) names.push_back(in);
      for (const auto& attr : n.attribute()) {
        if (attr.has_g()) subgraph_reads(attr.g(), names);
        for (const auto& sub : attr.graphs()) subgraph_reads(sub, names);
      }
    }
  }

  /// Replaces bound symbolic dimensions by their values in the inputs, outputs and value_info, so
  /// that shape inference propagates numbers. Names bound but absent from the model are an error.
  void bind_dims(::onnx::GraphProto& graph) {
    for (const auto& [name, value] : options_.dims)
      if (value < 0) fail("dimension '" + name + "' bound to " + std::to_string(value) + ": a dimension is >= 0");
    std::set<std::string> used;
    auto bind = [&](::onnx::ValueInfoProto& vi) {
      if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
      for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
        if (d.has_dim_param()) {
          const auto it = options_.dims.find(d.dim_param());
          if (it == options_.dims.end()) continue;
          used.insert(it->first);
          d.set_dim_value(it->second);
        }
    };
    for (auto& vi : *graph.mutable_input()) bind(vi);
    for (auto& vi : *graph.mutable_output()) bind(vi);
    for (auto& vi : *graph.mutable_value_info()) bind(vi);
    for (const auto& [name, value] : options_.dims)
      if (!used.count(name)) fail("dimension '" + name + "' is bound but the model has no symbolic dimension of that name");
  }

  /// A convolution without `kernel_shape` takes it from its weight's dims[2:] (the ONNX spec).
  /// ONNX 1.12's shape inference does the same without checking it against the input's rank and
  /// then reads past the end of its dilations (SIGSEGV; found by fuzz/onnx_graph.cpp:
  /// tests/data/fuzz/onnx/conv_kernel_rank.onnx). Written as the attribute, it is checked (a
  /// clear error). Weights computed by nodes are not known here: such a model stays exposed.
  void fill_kernel_shapes(::onnx::GraphProto& graph) const {
    std::unordered_map<std::string, const ::onnx::ValueInfoProto*> declared;
    for (const auto& in : graph.input()) declared.emplace(in.name(), &in);
    for (auto& n : *graph.mutable_node()) {
      if (!default_domain(n)) continue;
      const std::string& op = n.op_type();
      const int w = op == "QLinearConv" ? 3 : (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose") ? 1 : -1;
      if (w < 0 || n.input_size() <= w) continue;
      bool has = false;
      for (const auto& a : n.attribute()) has = has || a.name() == "kernel_shape";
      if (has) continue;
      std::vector<std::int64_t> dims;
      if (const auto it = initializers_.find(n.input(w)); it != initializers_.end()) {
        dims.assign(it->second->dims().begin(), it->second->dims().end());
      } else if (const auto d = declared.find(n.input(w)); d != declared.end() && d->second->type().has_tensor_type() &&
                                                            d->second->type().tensor_type().has_shape()) {
        // A symbolic dimension (-1 here) is left to inference, which reads it as unknown and stops.
        for (const auto& dim : d->second->type().tensor_type().shape().dim()) dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      } else {
        continue;
      }
      if (std::find(dims.begin() + std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(dims.size())), dims.end(), -1) != dims.end()) continue;
      auto* a = n.add_attribute();
      a->set_name("kernel_shape");
      a->set_type(::onnx::AttributeProto::INTS);
      for (std::size_t k = 2; k < dims.size(); ++k) a->add_ints(dims[k]);
    }
  }

  /// ONNX 1.12's convolution and pooling shape inference divides by `strides` and scales by
  /// `dilations` and `kernel_shape` without checking them: a zero stride is a SIGFPE (found by
  /// fuzz/onnx_graph.cpp). Every such attribute of a default-domain node, in subgraphs too, must
  /// hold positive values; otherwise a clear error names the node and the attribute.
  void check_window_attributes(const ::onnx::GraphProto& graph) const {
    for (const auto& n : graph.node()) {
      for (const auto& a : n.attribute()) {
        if (a.has_g()) check_window_attributes(a.g());
        for (const auto& sub : a.graphs()) check_window_attributes(sub);
        if (!default_domain(n) || (a.name() != "strides" && a.name() != "dilations" && a.name() != "kernel_shape")) continue;
        for (const auto v : a.ints())
          if (v <= 0)
            fail("node '" + node_name(n) + "' (" + n.op_type() + "): attribute '" + a.name() + "' holds " + std::to_string(v) +
                 ", must be positive");
      }
    }
  }

  /// BatchNormalization in training form (PyTorch's export in training mode, opset 9-13) has up to
  /// four more outputs: the running and saved mean and variance, one value per channel. ONNX
  /// 1.12's inference types only the first output (and then fails on a node that reads another);
  /// so before inference the others get the type and shape of `scale` ([C], the same element type
  /// as the input by the operator's type constraint), when scale is a weight or a graph input with
  /// a known shape. Otherwise they stay untyped and the usual error names them.
  void type_batchnorm_statistics(::onnx::GraphProto& graph) const {
    std::unordered_map<std::string, const ::onnx::TypeProto*> graph_inputs;
    std::unordered_set<std::string> typed;
    for (const auto& vi : graph.input()) graph_inputs.emplace(vi.name(), &vi.type());
    for (const auto& vi : graph.value_info()) typed.insert(vi.name());
    std::vector<std::pair<std::string, ::onnx::TypeProto>> added;
    for (const auto& n : graph.node()) {
      if (n.op_type() != "BatchNormalization" || !n.domain().empty() || n.input_size() < 2 || n.output_size() < 2) continue;
      ::onnx::TypeProto type;
      auto* t = type.mutable_tensor_type();
      if (const auto w = initializers_.find(n.input(1)); w != initializers_.end()) {
        t->set_elem_type(w->second->data_type());
        for (auto d : w->second->dims()) t->mutable_shape()->add_dim()->set_dim_value(d);
      } else if (const auto in = graph_inputs.find(n.input(1)); in != graph_inputs.end() && in->second->has_tensor_type() &&
                                                                 in->second->tensor_type().has_shape()) {
        *t = in->second->tensor_type();
      } else {
        continue;
      }
      for (int k = 1; k < n.output_size(); ++k)
        if (!n.output(k).empty() && typed.insert(n.output(k)).second) added.emplace_back(n.output(k), type);
    }
    for (auto& [name, type] : added) {
      auto* vi = graph.add_value_info();
      vi->set_name(name);
      *vi->mutable_type() = std::move(type);
    }
  }

  /// Shape inference node by node (detail::onnx_inference: ONNX's inference functions, with the
  /// shape arithmetic evaluated on the way), throwing on a node whose shapes cannot be inferred.
  /// The model's own symbolic dimensions are noted first: a symbol that inference makes up for an
  /// unknown dimension is reported as unknown, not as one to bind.
  void infer() {
    for (const auto* list : {&model_.graph().input(), &model_.graph().output(), &model_.graph().value_info()})
      for (const auto& vi : *list)
        if (vi.type().has_tensor_type())
          for (const auto& d : vi.type().tensor_type().shape().dim())
            if (d.has_dim_param()) declared_symbols_.insert(d.dim_param());
    try {
      detail::onnx_inference(model_).run();
    } catch (const onnx_value_error& e) {
      fail(e.what());
    }
  }

  /// The dimensions of `tensor`, all known: an initializer's dims or the inferred shape, into
  /// `dims`; otherwise why not, naming the tensor ("" when known). Does not throw, so that
  /// known_bytes asks without exceptions.
  std::string find_shape(const std::string& tensor, const std::string& what, std::vector<std::int64_t>& dims) const {
    dims.clear();
    if (const auto it = initializers_.find(tensor); it != initializers_.end()) {
      dims.assign(it->second->dims().begin(), it->second->dims().end());
      return {};
    }
    const auto it = types_.find(tensor);
    const auto named = [&] { return "tensor '" + tensor + "' (" + what + ")"; };
    if (it == types_.end()) return named() + ": no type or shape after ONNX shape inference";
    if (!it->second->has_tensor_type()) return named() + ": not a tensor (sequences, maps and optionals are not supported)";
    const auto& t = it->second->tensor_type();
    if (!t.has_shape()) return named() + ": no shape after ONNX shape inference (its rank is unknown)";
    for (int k = 0; k < t.shape().dim_size(); ++k) {
      const auto& d = t.shape().dim(k);
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) return named() + ": dimension " + std::to_string(k) + " is negative";
        dims.push_back(d.dim_value());
      } else if (d.has_dim_param() && declared_symbols_.count(d.dim_param())) {
        const auto b = options_.dims.find(d.dim_param());
        if (b == options_.dims.end())
          return named() + ": dimension " + std::to_string(k) + " is symbolic ('" + d.dim_param() +
                 "'): bind it (onnx_read_options::dims; tool: memsched convert --dim " + d.dim_param() + "=N)";
        dims.push_back(b->second);
      } else {
        return named() + ": dimension " + std::to_string(k) + " is unknown after ONNX shape inference";
      }
    }
    return {};
  }

  std::vector<std::int64_t> shape(const std::string& tensor, const std::string& what) const {
    std::vector<std::int64_t> dims;
    if (std::string why = find_shape(tensor, what, dims); !why.empty()) fail(why);
    return dims;
  }

  /// The element type of `tensor`, or nullopt when it has none (not a tensor, no type).
  std::optional<int> find_element_type(const std::string& tensor) const {
    if (const auto it = initializers_.find(tensor); it != initializers_.end()) return it->second->data_type();
    const auto it = types_.find(tensor);
    if (it == types_.end() || !it->second->has_tensor_type()) return std::nullopt;
    return it->second->tensor_type().elem_type();
  }

  struct tensor_size {
    std::int64_t elements = 0;
    std::int64_t bytes = 0;
  };

  /// The product of `dims`, or nullopt when it overflows 64 bits.
  static std::optional<std::int64_t> element_count(const std::vector<std::int64_t>& dims) {
    std::int64_t n = 1;
    for (const std::int64_t d : dims)
      if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
    return n;
  }

  static std::string count_overflow(const std::string& tensor, const std::string& what) {
    return "tensor '" + tensor + "' (" + what + "): its element count overflows 64 bits";
  }

  /// Elements and bytes of `tensor` from one shape lookup; "" or why not (naming the tensor).
  std::string find_size(const std::string& tensor, const std::string& what, tensor_size& size) const {
    std::vector<std::int64_t> dims;
    if (std::string why = find_shape(tensor, what, dims); !why.empty()) return why;
    const auto named = [&] { return "tensor '" + tensor + "' (" + what + ")"; };
    const auto count = element_count(dims);
    if (!count) return count_overflow(tensor, what);
    const std::int64_t n = *count;
    const auto type = find_element_type(tensor);
    if (!type) return named() + ": no type after ONNX shape inference";
    const std::int64_t element = onnx_element_size(*type);
    if (element == 0) return named() + ": element type " + std::to_string(*type) + " has no fixed size (strings are not supported)";
    size.elements = n;
    if (__builtin_mul_overflow(n, element, &size.bytes)) return named() + ": its bytes overflow 64 bits";
    return {};
  }

  std::int64_t numel(const std::string& tensor, const std::string& what) const {
    const auto count = element_count(shape(tensor, what));
    if (!count) fail(count_overflow(tensor, what));
    return *count;
  }

  tensor_size tensor_bytes(const std::string& tensor, const std::string& what) const {
    tensor_size size;
    if (std::string why = find_size(tensor, what, size); !why.empty()) fail(why);
    return size;
  }

  /// A weight's bytes when its shape is known (weights need no shape: they are not planned).
  std::optional<std::int64_t> known_bytes(const std::string& tensor) const {
    tensor_size size;
    if (!find_size(tensor, "weight", size).empty()) return std::nullopt;
    return size.bytes;
  }

  /// FLOPs (2 per multiply-add) of the convolutions and matrix products; nullopt for other ops.
  /// out0_elements: the element count of output 0 (already known to the caller), or nullopt.
  std::optional<double> flops_of(const ::onnx::NodeProto& n, const std::string& who, std::optional<std::int64_t> out0_elements) const {
    if (!default_domain(n)) return std::nullopt;
    const std::string& op = n.op_type();
    auto input = [&](int i) -> const std::string& {
      if (n.input_size() <= i || n.input(i).empty()) fail(who + ": input " + std::to_string(i) + " is missing");
      return n.input(i);
    };
    auto out_elements = [&] {
      return static_cast<double>(out0_elements ? *out0_elements : numel(n.output(0), "output of " + who));
    };
    auto tail_product = [&](const std::string& w) {  // product of all dims but the first
      const auto dims = shape(w, "weight of " + who);
      double p = 1;
      for (std::size_t k = 1; k < dims.size(); ++k) p *= static_cast<double>(dims[k]);
      return p;
    };
    auto inner = [&](const std::string& a) {  // the contracted dimension of a matrix product's A
      const auto dims = shape(a, "input of " + who);
      if (dims.empty()) fail(who + ": input '" + a + "' is a scalar");
      return static_cast<double>(dims.back());
    };
    if (op == "Conv" || op == "ConvInteger") return 2 * out_elements() * tail_product(input(1));
    if (op == "QLinearConv") return 2 * out_elements() * tail_product(input(3));
    if (op == "ConvTranspose")
      return 2 * static_cast<double>(numel(input(0), "input of " + who)) * tail_product(input(1));
    if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") return 2 * out_elements() * inner(input(0));
    if (op == "Gemm") {
      const auto dims = shape(input(0), "input of " + who);
      if (dims.size() != 2) fail(who + ": input A is not a matrix");
      bool trans_a = false;
      for (const auto& attr : n.attribute())
        if (attr.name() == "transA") trans_a = attr.i() != 0;
      return 2 * out_elements() * static_cast<double>(trans_a ? dims[0] : dims[1]);
    }
    return std::nullopt;
  }

  ::onnx::ModelProto& model_;
  const onnx_read_options& options_;
  std::string source_;
  graph_record record_;
  std::set<std::string> weights_;
  std::unordered_map<std::string, const ::onnx::TensorProto*> initializers_;
  std::unordered_map<std::string, const ::onnx::TypeProto*> types_;
  std::set<std::string> declared_symbols_;  // the model's dim_params (not those inference makes up)
  std::unordered_map<std::string, std::int64_t> producer_;  // tensor -> id of the vertex holding it
};

}  // namespace detail

/// Parses the bytes of an ONNX model (a serialized ModelProto); `source` names it in messages.
/// External data is never read (the planner needs shapes, not weights). O(model size + shape
/// inference). Throws file_error starting with `source` for bytes that are not an ONNX model (or
/// are truncated), a failed shape inference (naming the node), a tensor whose shape stays unknown or
/// symbolic (naming it and the dimension), a node reading a tensor nobody produces (naming both),
/// nodes out of topological order, and everything build_dataflow_graph rejects.
[[nodiscard]] inline onnx_read_result parse_onnx_model(std::string_view bytes, const onnx_read_options& options = {},
                                                       const std::string& source = "<onnx>") {
  ::onnx::ModelProto model;
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX))
    detail::fail_file(source, "larger than 2 GiB: protobuf cannot parse it (store the weights as external data)");
  // Hostile bytes: protobuf's default recursion limit (100 nested messages) stops deeply nested
  // subgraphs before the reader or shape inference recurse. A length prefix may still make
  // protobuf allocate more than the input holds (up to its own per-string cap).
  if (!::onnx::ParseProtoFromBytes(&model, bytes.data(), bytes.size()))
    detail::fail_file(source, "not an ONNX model (the protobuf does not parse: another format or a truncated file)");
  if (!model.has_graph() || model.ir_version() <= 0 || model.opset_import_size() == 0)
    detail::fail_file(source, "not an ONNX model (no graph, IR version or opset import)");
  return detail::onnx_reader(model, options, source).run();
}

/// Reads an ONNX file: parse_onnx_model on its bytes, `path` naming it in messages. Throws
/// file_error naming the path for a directory or a file that cannot be read, and everything
/// parse_onnx_model throws.
[[nodiscard]] inline onnx_read_result read_onnx_model(const std::filesystem::path& path, const onnx_read_options& options = {}) {
  return parse_onnx_model(detail::read_text_file(path), options, path.string());
}

/// The graph of an ONNX file (read_onnx_model(path, options).graph). Same complexity and throws.
[[nodiscard]] inline dataflow_graph read_onnx_graph(const std::filesystem::path& path, const onnx_read_options& options = {}) {
  return read_onnx_model(path, options).graph;
}

/// Parses "NAME=VALUE" (the tool's --dim) into a binding for onnx_read_options::dims. O(size).
/// Throws graph_error naming `text` when it has no '=', an empty name or a value that is not an
/// integer >= 0.
[[nodiscard]] inline std::pair<std::string, std::int64_t> parse_onnx_dim(std::string_view text) {
  const auto eq = text.find('=');
  const std::string whole(text);
  if (eq == std::string_view::npos || eq == 0) throw graph_error("parse_onnx_dim: '" + whole + "' is not NAME=VALUE");
  const std::string_view value = text.substr(eq + 1);
  bool out_of_range = false;
  // detail::parse_int64 allows blanks around the number; a --dim value has none.
  const auto v = value.find_first_of(" \t\n\r") == std::string_view::npos ? detail::parse_int64(value, out_of_range) : std::nullopt;
  if (!v || *v < 0) throw graph_error("parse_onnx_dim: '" + whole + "': the value must be an integer >= 0");
  return {std::string(text.substr(0, eq)), *v};
}

}  // namespace memsched
