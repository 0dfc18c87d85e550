#pragma once
// Shape inference of an ONNX model node by node (used by graph/onnx_io.hpp): ONNX's own operator
// inference functions, driven as onnx::shape_inference::InferShapes drives them, except that after
// each node the shape arithmetic is evaluated (detail::onnx_evaluator) and its values are handed to
// the following nodes as constant inputs. ONNX 1.12's InferShapes alone leaves the outputs of
// Reshape, Slice, Expand, ConstantOfShape, ... unknown when their shape inputs are computed from
// Shape nodes, as in PyTorch's exports of ShuffleNet and ViT; one pass here knows them.

#include <memsched/graph/detail/onnx_values.hpp>

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memsched::detail {

/// The name by which messages call a node: its name, else its first output, else its op.
[[nodiscard]] inline std::string onnx_node_name(const ::onnx::NodeProto& n) {
  if (!n.name().empty()) return n.name();
  for (const auto& out : n.output())
    if (!out.empty()) return out;
  return n.op_type();
}

/// Runs shape inference over the main graph of a model, writing the inferred types into its
/// value_info as InferShapes does, and keeps the values it evaluated. Throws onnx_value_error with a
/// message naming the node (or initializer) on failure.
class onnx_inference {
 public:
  explicit onnx_inference(::onnx::ModelProto& model) : model_(model), graph_(*model.mutable_graph()) {
    for (const auto& i : model.opset_import()) opsets_[i.domain()] = static_cast<int>(i.version());
    for (const auto& f : model.functions()) functions_[f.domain() + ":" + f.name()] = &f;
  }

  void run() {
    ::onnx::shape_inference::TraverseGraphsToAddExistingSymbols(graph_, symbols_);
    for (auto& vi : *graph_.mutable_value_info()) declare(vi);
    for (auto& vi : *graph_.mutable_input()) declare(vi);
    for (auto& vi : *graph_.mutable_output()) declare(vi);
    for (const auto& t : graph_.initializer()) add_initializer(t);
    for (const auto& t : graph_.sparse_initializer()) sparse_[t.values().name()] = &t;
    ::onnx::shape_inference::GraphInferenceContext context(types_, opsets_, &symbols_, functions_, ::onnx::OpSchemaRegistry::Instance(),
                                                           nullptr, static_cast<int>(model_.ir_version()));
    for (auto& n : *graph_.mutable_node()) {
      experimental_ = experimental_ || ::onnx::checker::check_is_experimental_op(n.op_type());
      if (n.op_type() == "Constant" && n.output_size() == 1)
        for (const auto& a : n.attribute())
          if (a.name() == "value" && a.has_t()) data_[n.output(0)] = &a.t();
      infer_node(n, context);
      evaluate(n);
    }
  }

  /// The value the reader evaluated for `tensor`, or nullptr.
  [[nodiscard]] const onnx_value* value(const std::string& tensor) const {
    const auto it = values_.find(tensor);
    return it == values_.end() ? nullptr : &it->second;
  }

 private:
  /// Evaluated elements in all, at most (a bound on the memory the values take).
  static constexpr std::int64_t total_elements = std::int64_t{1} << 22;

  [[noreturn]] static void fail_node(const ::onnx::NodeProto& n, const std::string& what) {
    throw onnx_value_error("node '" + onnx_node_name(n) + "' (" + n.op_type() + "): " + what);
  }

  [[noreturn]] static void inference_failed(const ::onnx::NodeProto& n, const std::string& what) {
    throw onnx_value_error("ONNX shape inference failed: node '" + onnx_node_name(n) + "' (" + n.op_type() + "): " + what);
  }

  void declare(::onnx::ValueInfoProto& vi) {
    if (vi.has_type()) types_[vi.name()] = vi.mutable_type();
    else undefined_[vi.name()] = vi.mutable_type();
  }

  /// An initializer's type from its dims (IR >= 4: it need not be a graph input); a graph input of
  /// the same name keeps its declared type, which must agree.
  void add_initializer(const ::onnx::TensorProto& t) {
    initializers_[t.name()] = &t;
    data_[t.name()] = &t;
    ::onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (const auto d : t.dims()) shape->add_dim()->set_dim_value(d);
    if (const auto it = types_.find(t.name()); it != types_.end()) {
      try {
        ::onnx::shape_inference::checkShapesAndTypes(type, *it->second);
      } catch (const std::exception& e) {
        throw onnx_value_error("ONNX shape inference failed: initializer '" + t.name() + "' and the graph input of that name differ: " +
                               e.what());
      }
    } else if (model_.ir_version() >= 4) {
      types_[t.name()] = &owned_types_.emplace_back(std::move(type));
    }
  }

  /// ONNX's inference function of `n` (or of its function body), as InferShapes runs it; after an op
  /// without a schema (a custom domain) or an experimental op, inference errors are not errors, as
  /// in InferShapes: the outputs stay untyped, and the reader names them if it needs their size.
  void infer_node(::onnx::NodeProto& n, ::onnx::shape_inference::GraphInferenceContext& context) {
    const auto dit = opsets_.find(n.domain());
    if (dit == opsets_.end()) inference_failed(n, "the model imports no opset of domain '" + n.domain() + "'");
    const auto* registry = ::onnx::OpSchemaRegistry::Instance();
    const auto* schema = registry->GetSchema(n.op_type(), dit->second, n.domain());
    const ::onnx::FunctionProto* local = nullptr;
    if (!schema) {
      const auto f = functions_.find(n.domain() + ":" + n.op_type());
      if (f == functions_.end()) {
        unsupported_ = true;
        return;
      }
      local = f->second;
    }
    ::onnx::shape_inference::InferenceContextImpl ctx(n, types_, data_, sparse_, nullptr, &context);
    const ::onnx::ShapeInferenceOptions options{false, 1, false};
    try {
      if (schema && schema->has_type_and_shape_inference_function()) {
        schema->GetTypeAndShapeInferenceFunction()(ctx);
      } else if (schema && schema->HasFunction()) {
        ::onnx::shape_inference::InferShapeForFunctionNode(*schema->GetFunction(), registry, ctx, options, functions_, &symbols_);
      } else if (local) {
        ::onnx::shape_inference::InferShapeForFunctionNode(*local, registry, ctx, options, functions_, &symbols_);
      } else {
        return;
      }
    } catch (const ::onnx::InferenceError& e) {
      if (unsupported_ || experimental_) return;
      inference_failed(n, e.what());
    } catch (const std::exception& e) {
      inference_failed(n, e.what());
    }
    for (int i = 0; i < n.output_size(); ++i)
      if (!n.output(i).empty()) update(n, n.output(i), *ctx.getOutputType(i));
  }

  /// Merges an inferred type into what is known of `name` (a declared type must agree).
  void update(const ::onnx::NodeProto& n, const std::string& name, const ::onnx::TypeProto& inferred) {
    if (inferred.value_case() == ::onnx::TypeProto::VALUE_NOT_SET) return;
    ::onnx::TypeProto* existing = nullptr;
    if (const auto it = types_.find(name); it != types_.end()) {
      existing = it->second;
    } else {
      auto* vi = graph_.add_value_info();
      vi->set_name(name);
      existing = vi->mutable_type();
      if (const auto u = undefined_.find(name); u != undefined_.end()) *u->second = inferred;
    }
    try {
      ::onnx::shape_inference::mergeShapesAndTypes(inferred, existing);
    } catch (const std::exception& e) {
      inference_failed(n, e.what());
    }
    types_[name] = existing;
  }

  /// The dims of `tensor` when its shape is known and static.
  bool static_shape(const std::string& tensor, std::vector<std::int64_t>& dims) const {
    dims.clear();
    const auto it = types_.find(tensor);
    if (it == types_.end() || !it->second->has_tensor_type() || !it->second->tensor_type().has_shape()) return false;
    for (const auto& d : it->second->tensor_type().shape().dim()) {
      if (!d.has_dim_value() || d.dim_value() < 0) return false;
      dims.push_back(d.dim_value());
    }
    return true;
  }

  /// The value of `tensor`: evaluated before, or an initializer's data read now (nullptr: unknown).
  const onnx_value* input_value(const std::string& tensor) {
    if (tensor.empty()) return nullptr;
    if (const auto it = values_.find(tensor); it != values_.end()) return &it->second;
    const auto init = initializers_.find(tensor);
    if (init == initializers_.end()) return nullptr;
    std::optional<onnx_value> v;
    try {
      v = onnx_value_of(*init->second);
    } catch (const onnx_value_error& e) {
      throw onnx_value_error(std::string("initializer '") + tensor + "': " + e.what());
    }
    if (!v) return nullptr;
    return &values_.emplace(tensor, std::move(*v)).first->second;
  }

  /// Evaluates `n` when it is shape arithmetic on known values; its value becomes a constant input of
  /// the nodes that read it, and its shape the shape of its output.
  void evaluate(const ::onnx::NodeProto& n) {
    if (!n.domain().empty() || !onnx_evaluated_op(n.op_type()) || n.output_size() != 1 || n.output(0).empty() || used_ >= total_elements)
      return;
    std::vector<const onnx_value*> in;
    in.reserve(static_cast<std::size_t>(n.input_size()));
    for (const auto& name : n.input()) in.push_back(input_value(name));
    std::vector<std::int64_t> shape0;
    const bool known0 = n.input_size() > 0 && static_shape(n.input(0), shape0);
    std::optional<onnx_value> v;
    try {
      v = onnx_evaluator(n, opsets_.at(""), std::move(in), known0 ? &shape0 : nullptr).run();
    } catch (const onnx_value_error& e) {
      fail_node(n, e.what());
    }
    if (!v) return;
    used_ += static_cast<std::int64_t>(v->size());
    ::onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(v->type);
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (const auto d : v->dims) shape->add_dim()->set_dim_value(d);
    try {
      if (const auto it = types_.find(n.output(0)); it != types_.end()) ::onnx::shape_inference::checkShapesAndTypes(type, *it->second);
    } catch (const std::exception& e) {
      fail_node(n, std::string("its evaluated value contradicts ONNX shape inference: ") + e.what());
    }
    update(n, n.output(0), type);
    const std::string& out = n.output(0);
    const onnx_value& stored = values_.insert_or_assign(out, std::move(*v)).first->second;
    if (n.op_type() != "Constant") data_[out] = &tensors_.emplace_back(onnx_tensor_of(stored, out));
  }

  ::onnx::ModelProto& model_;
  ::onnx::GraphProto& graph_;
  std::unordered_map<std::string, int> opsets_;
  ::onnx::shape_inference::ModelLocalFunctionsMap functions_;
  ::onnx::shape_inference::SymbolTableImpl symbols_;
  std::unordered_map<std::string, ::onnx::TypeProto*> types_;      // what ONNX's inference reads
  std::unordered_map<std::string, ::onnx::TypeProto*> undefined_;  // declared without a type
  std::deque<::onnx::TypeProto> owned_types_;                      // the initializers' types
  std::unordered_map<std::string, const ::onnx::TensorProto*> initializers_;
  std::unordered_map<std::string, const ::onnx::TensorProto*> data_;  // constant inputs for ONNX's inference
  std::unordered_map<std::string, const ::onnx::SparseTensorProto*> sparse_;
  std::unordered_map<std::string, onnx_value> values_;
  std::deque<::onnx::TensorProto> tensors_;
  std::int64_t used_ = 0;
  bool unsupported_ = false, experimental_ = false;
};

}  // namespace memsched::detail
