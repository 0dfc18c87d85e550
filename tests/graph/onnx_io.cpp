// The ONNX reader: every rule of the reading convention (docs/graph-format.md, "ONNX models") on
// models built here with the ONNX C++ API, every error, and the four bundled PyTorch exports.
#include <memsched/graph/onnx_io.hpp>
#include <memsched/graph/read_graph.hpp>
#include <memsched/sim/simulate_order.hpp>

#include "io_test_support.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

using namespace memsched;
using namespace memsched::testing;

namespace {

using dim = std::variant<std::int64_t, std::string>;  // a number or a symbolic name
constexpr int f32 = onnx::TensorProto::FLOAT;

/// A ModelProto built step by step (opset 13, IR 7, as PyTorch exports).
struct model_builder {
  onnx::ModelProto m;
  model_builder() {
    m.set_ir_version(7);
    m.add_opset_import()->set_version(13);
    m.mutable_graph()->set_name("hand");
  }
  static void set_type(onnx::ValueInfoProto& vi, const std::string& name, int type, const std::vector<dim>& dims) {
    vi.set_name(name);
    auto* t = vi.mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* shape = t->mutable_shape();
    for (const auto& d : dims) {
      auto* x = shape->add_dim();
      if (std::holds_alternative<std::int64_t>(d)) x->set_dim_value(std::get<std::int64_t>(d));
      else x->set_dim_param(std::get<std::string>(d));
    }
  }
  model_builder& input(const std::string& name, const std::vector<dim>& dims, int type = f32) {
    set_type(*m.mutable_graph()->add_input(), name, type, dims);
    return *this;
  }
  model_builder& output(const std::string& name) {
    m.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  /// An initializer without data, stored as external data that does not exist (the reader must not read it).
  model_builder& weight(const std::string& name, const std::vector<std::int64_t>& dims, int type = f32) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (auto d : dims) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* loc = t->add_external_data();
    loc->set_key("location");
    loc->set_value("no-such-file.bin");
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, std::initializer_list<std::string> in, std::initializer_list<std::string> out,
                        const std::string& name = "") {
    auto* n = m.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    return *n;
  }
  /// A Constant node holding an int64 vector (a Reshape's shape, a Clip's bound, ...).
  model_builder& constant(const std::string& out, const std::vector<std::int64_t>& values) {
    auto& n = node("Constant", {}, {out});
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
    return *this;
  }
  [[nodiscard]] std::string bytes() const { return m.SerializeAsString(); }
  [[nodiscard]] onnx_read_result read(const onnx_read_options& o = {}) const { return parse_onnx_model(bytes(), o, "m.onnx"); }
};

void set_int(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void set_ints(onnx::NodeProto& n, const std::string& name, std::initializer_list<std::int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

/// The vertex with this name (names are unique in these models).
std::size_t by_name(const dataflow_graph& g, const std::string& name) {
  for (std::size_t v = 0; v < num_vertices(g); ++v)
    if (g[v].name == name) return v;
  FAIL("no vertex named " << name);
  return 0;
}
bool has_edge(const dataflow_graph& g, std::size_t u, std::size_t v) { return boost::edge(u, v, g).second; }

std::int64_t total_bytes(const dataflow_graph& g) {
  std::int64_t s = 0;
  for (std::size_t v = 0; v < num_vertices(g); ++v) s += g[v].bytes;
  return s;
}

/// x[1,3,8,8] -> Conv(W[4,3,3,3], B[4], pads 1) -> Relu -> Add(r, r) -> output.
model_builder conv_relu_add() {
  model_builder b;
  b.input("x", {1, 3, 8, 8}).weight("W", {4, 3, 3, 3}).weight("B", {4}).output("a");
  auto& conv = b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
  set_ints(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Add", {"r", "r"}, {"a"}, "add");
  return b;
}

}  // namespace

TEST_CASE("vertices, bytes, edges, outputs, ops and costs of a hand-built model") {
  const auto r = conv_relu_add().read();
  const dataflow_graph& g = r.graph;
  REQUIRE(num_vertices(g) == 4);  // x, conv, relu, add: the initializers are no vertices
  CHECK(num_edges(g) == 3);       // Add reads r twice: one edge
  const auto x = by_name(g, "x"), conv = by_name(g, "conv"), relu = by_name(g, "relu"), add = by_name(g, "add");
  CHECK(g[x].op == "input");
  CHECK(g[conv].op == "Conv");
  CHECK(g[relu].op == "Relu");
  CHECK(g[add].op == "Add");
  CHECK(g[x].bytes == 1 * 3 * 8 * 8 * 4);
  CHECK(g[conv].bytes == 1 * 4 * 8 * 8 * 4);  // shape from inference (pads 1 keep 8x8)
  CHECK(g[relu].bytes == 1024);
  CHECK(g[add].bytes == 1024);
  CHECK(g[x].cost == 0);                          // an input is not computed
  CHECK(g[conv].cost == 2.0 * (4 * 8 * 8) * (3 * 3 * 3));  // 2 x output elements x (C/group x kH x kW)
  CHECK(g[relu].cost == 256);                     // output elements
  CHECK(g[add].cost == 256);
  CHECK(has_edge(g, x, conv));
  CHECK(has_edge(g, conv, relu));
  CHECK(has_edge(g, relu, add));
  REQUIRE(g[boost::graph_bundle].outputs);
  CHECK(*g[boost::graph_bundle].outputs == std::vector<std::size_t>{add});
  CHECK(g[boost::graph_bundle].name == "hand");
  CHECK(g[boost::graph_bundle].kind == "inference");
  CHECK(g[boost::graph_bundle].order == std::vector<std::size_t>{0, 1, 2, 3});  // the file's node order
  CHECK(r.weights == 2);
  CHECK(r.weight_bytes == (4 * 3 * 3 * 3 + 4) * 4);
  CHECK(r.constant_nodes == 0);
  CHECK(r.folded_nodes == 0);
}

TEST_CASE("Constant outputs are weights; nodes reading only weights are folded unless fold_constants is off") {
  model_builder b;
  b.input("x", {2, 3}).weight("W", {3, 4}).output("y");
  b.constant("k", {1});
  b.node("Identity", {"W"}, {"W2"}, "shared_weight");  // what PyTorch writes for a shared parameter
  b.node("MatMul", {"x", "W2"}, {"m"}, "matmul");
  set_int(b.node("Cast", {"k"}, {"kf"}, "cast"), "to", f32);  // a computation on a Constant only: folded too
  b.node("Mul", {"m", "kf"}, {"y"}, "mul");

  const auto folded = b.read();
  const dataflow_graph& g = folded.graph;
  REQUIRE(num_vertices(g) == 3);  // x, matmul, mul
  CHECK(num_edges(g) == 2);
  CHECK(has_edge(g, by_name(g, "x"), by_name(g, "matmul")));
  CHECK(has_edge(g, by_name(g, "matmul"), by_name(g, "mul")));
  CHECK(g[by_name(g, "matmul")].cost == 2.0 * (2 * 4) * 3);  // 2 x output elements x K
  CHECK(folded.constant_nodes == 1);
  CHECK(folded.folded_nodes == 2);
  CHECK(folded.weights == 4);  // W, k, W2, kf
  CHECK(folded.weight_bytes == 3 * 4 * 4 + 8 + 3 * 4 * 4 + 4);

  const auto literal = b.read({.fold_constants = false});
  const dataflow_graph& h = literal.graph;
  REQUIRE(num_vertices(h) == 5);  // every node but Constant
  const auto id = by_name(h, "shared_weight"), cast = by_name(h, "cast");
  CHECK(h[id].bytes == 3 * 4 * 4);
  CHECK(h[cast].bytes == 4);
  CHECK(h[id].op == "Identity");
  CHECK(has_edge(h, id, by_name(h, "matmul")));
  CHECK(has_edge(h, cast, by_name(h, "mul")));
  CHECK(in_degree(id, h) == 0);  // reading an initializer or a Constant is no edge
  CHECK(in_degree(cast, h) == 0);
  CHECK(num_edges(h) == 4);
}

TEST_CASE("alias_views merges Reshape, Flatten, Squeeze, Unsqueeze and Identity into their producer") {
  model_builder b;
  b.input("x", {1, 2, 3, 4}).output("f").output("t");
  b.constant("shape", {1, 24});
  b.constant("axes", {0});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Reshape", {"r", "shape"}, {"s"}, "reshape");
  b.node("Squeeze", {"s", "axes"}, {"q"}, "squeeze");
  b.node("Unsqueeze", {"q", "axes"}, {"u"}, "unsqueeze");
  b.node("Identity", {"u"}, {"i"}, "identity");
  b.node("Sigmoid", {"i"}, {"t"}, "sigmoid");
  b.node("Flatten", {"x"}, {"f"}, "flatten");  // a view of a graph input, and a graph output

  const auto plain = b.read();
  CHECK(num_vertices(plain.graph) == 8);  // x and the 7 nodes but the two Constants
  CHECK(num_edges(plain.graph) == 7);
  CHECK(plain.graph[by_name(plain.graph, "reshape")].bytes == 96);
  CHECK(plain.merged_views == 0);

  const auto merged = b.read({.alias_views = true});
  const dataflow_graph& g = merged.graph;
  REQUIRE(num_vertices(g) == 3);  // x, relu, sigmoid
  CHECK(merged.merged_views == 5);
  const auto x = by_name(g, "x"), relu = by_name(g, "relu"), sig = by_name(g, "sigmoid");
  CHECK(has_edge(g, x, relu));
  CHECK(has_edge(g, relu, sig));  // through the chain of views
  CHECK(num_edges(g) == 2);
  REQUIRE(g[boost::graph_bundle].outputs);
  CHECK(*g[boost::graph_bundle].outputs == std::vector<std::size_t>{x, sig});  // "f" is a view of x
  CHECK(total_bytes(g) == 3 * 96);
}

TEST_CASE("FLOPs of Gemm (transA), MatMul (batched), ConvTranspose and grouped Conv") {
  model_builder b;
  b.input("a", {5, 2}).input("p", {2, 3, 4}).input("q", {4, 5}).input("z", {1, 2, 4, 4}).input("y", {1, 4, 6, 6});
  b.weight("B", {5, 3}).weight("Wt", {2, 3, 3, 3}).weight("Wg", {4, 2, 3, 3});
  b.output("g").output("mm").output("ct").output("gc");
  set_int(b.node("Gemm", {"a", "B"}, {"g"}, "gemm"), "transA", 1);
  b.node("MatMul", {"p", "q"}, {"mm"}, "matmul");
  b.node("ConvTranspose", {"z", "Wt"}, {"ct"}, "convt");
  set_int(b.node("Conv", {"y", "Wg"}, {"gc"}, "gconv"), "group", 2);
  const dataflow_graph g = b.read().graph;
  CHECK(g[by_name(g, "gemm")].bytes == 2 * 3 * 4);
  CHECK(g[by_name(g, "gemm")].cost == 2.0 * 2 * 3 * 5);             // M=2, N=3, K=5 (A transposed)
  CHECK(g[by_name(g, "matmul")].cost == 2.0 * (2 * 3 * 5) * 4);      // batched: 30 outputs, K=4
  CHECK(g[by_name(g, "convt")].bytes == 1 * 3 * 6 * 6 * 4);
  CHECK(g[by_name(g, "convt")].cost == 2.0 * (1 * 2 * 4 * 4) * (3 * 3 * 3));  // each input element x (M/group x k x k)
  CHECK(g[by_name(g, "gconv")].bytes == 1 * 4 * 4 * 4 * 4);
  CHECK(g[by_name(g, "gconv")].cost == 2.0 * (4 * 4 * 4) * (2 * 3 * 3));     // C/group = 2
}

TEST_CASE("bytes sum over a node's outputs and follow the element type") {
  model_builder b;
  b.input("h", {2, 8}, onnx::TensorProto::FLOAT16).input("i", {3}, onnx::TensorProto::INT64).output("s0").output("n");
  b.node("Split", {"h"}, {"s0", "s1"}, "split");  // two outputs of 2x4 halves; s1 is read by nobody
  b.node("Neg", {"i"}, {"n"}, "neg");
  const dataflow_graph g = b.read().graph;
  CHECK(g[by_name(g, "h")].bytes == 2 * 8 * 2);
  CHECK(g[by_name(g, "split")].bytes == 2 * (2 * 4 * 2));
  CHECK(g[by_name(g, "split")].cost == 16);  // output elements, over both outputs
  CHECK(g[by_name(g, "i")].bytes == 3 * 8);
  CHECK(g[by_name(g, "neg")].bytes == 24);
}

TEST_CASE("BatchNormalization in training form: its per-channel statistics outputs count, typed from scale") {
  // PyTorch's export in training mode (opset 13) writes BatchNormalization with five outputs; ONNX
  // 1.12 types only the first. The other four are [C] of the input's element type.
  model_builder b;
  constexpr int f16 = onnx::TensorProto::FLOAT16;
  b.input("x", {1, 4, 4, 4}, f16).weight("s", {4}, f16).weight("bb", {4}, f16).weight("m", {4}, f16).weight("v", {4}, f16).output("r");
  b.node("BatchNormalization", {"x", "s", "bb", "m", "v"}, {"y", "mean", "var", "saved_mean", "saved_var"}, "bn");
  b.node("Relu", {"y"}, {"r"}, "relu");
  const dataflow_graph g = b.read().graph;
  CHECK(g[by_name(g, "bn")].bytes == 64 * 2 + 4 * (4 * 2));
  CHECK(g[by_name(g, "relu")].bytes == 64 * 2);
  // A statistics output that something reads keeps its type: the same bytes.
  model_builder c;
  c.input("x", {1, 4, 4, 4}).weight("s", {4}).weight("bb", {4}).weight("m", {4}).weight("v", {4}).output("r").output("n");
  c.node("BatchNormalization", {"x", "s", "bb", "m", "v"}, {"y", "mean", "var"}, "bn");
  c.node("Relu", {"y"}, {"r"}, "relu");
  c.node("Neg", {"mean"}, {"n"}, "neg");
  const dataflow_graph h = c.read().graph;
  CHECK(h[by_name(h, "bn")].bytes == 64 * 4 + 2 * (4 * 4));
  CHECK(h[by_name(h, "neg")].bytes == 4 * 4);
  CHECK(boost::edge(by_name(h, "bn"), by_name(h, "neg"), h).second);
  // scale a graph input: the statistics take its shape once its symbolic dimension is bound;
  // unbound, the error names scale.
  model_builder d;
  d.input("x", {1, 4, 4, 4}).input("s", {"C"}).weight("bb", {4}).weight("m", {4}).weight("v", {4}).output("r");
  d.node("BatchNormalization", {"x", "s", "bb", "m", "v"}, {"y", "mean"}, "bn");
  d.node("Relu", {"y"}, {"r"}, "relu");
  CHECK_NOTHROW((void)d.read({.dims = {{"C", 4}}}));
  const std::string unbound = error_of([&] { return d.read(); });
  CHECK(unbound.find("tensor 's'") != std::string::npos);
}

TEST_CASE("symbolic dimensions must be bound") {
  model_builder b;
  b.input("x", {std::string("batch"), 3}).output("y");
  b.node("Relu", {"x"}, {"y"}, "relu");
  const std::string e = error_of([&] { return b.read(); });
  CHECK(starts_with(e, "m.onnx: "));
  CHECK(contains(e, "'x'"));
  CHECK(contains(e, "'batch'"));
  CHECK(contains(e, "--dim batch=N"));
  const dataflow_graph g = b.read({.dims = {{"batch", 5}}}).graph;
  CHECK(g[by_name(g, "x")].bytes == 5 * 3 * 4);
  CHECK(g[by_name(g, "relu")].bytes == 5 * 3 * 4);  // inference propagates the bound value
  const std::string typo = error_of([&] { return b.read({.dims = {{"batch", 5}, {"seq", 2}}}); });
  CHECK(starts_with(typo, "m.onnx: dimension 'seq' is bound but the model has no symbolic dimension"));
  CHECK(contains(error_of([&] { return b.read({.dims = {{"batch", -1}}}); }), "a dimension is >= 0"));
  CHECK(parse_onnx_dim("batch=4") == std::pair<std::string, std::int64_t>{"batch", 4});
  CHECK_THROWS_AS((void)parse_onnx_dim("batch"), graph_error);
  CHECK_THROWS_AS((void)parse_onnx_dim("=3"), graph_error);
  CHECK_THROWS_AS((void)parse_onnx_dim("batch=-1"), graph_error);
  CHECK_THROWS_AS((void)parse_onnx_dim("batch=2x"), graph_error);
}

TEST_CASE("If branches reading outer values are edges") {
  model_builder b;
  b.input("c", {1}, onnx::TensorProto::BOOL).input("x", {4}).output("y");
  b.node("Relu", {"x"}, {"r"}, "relu");
  auto& n = b.node("If", {"c"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* sub = a->mutable_g();
    sub->set_name(branch);
    auto* inner = sub->add_node();
    inner->set_op_type(std::string(branch) == "then_branch" ? "Neg" : "Abs");
    inner->add_input("r");  // the outer scope's r
    inner->add_output(std::string(branch) + "_out");
    model_builder::set_type(*sub->add_output(), std::string(branch) + "_out", f32, {4});
  }
  const dataflow_graph g = b.read().graph;
  REQUIRE(num_vertices(g) == 4);
  CHECK(has_edge(g, by_name(g, "relu"), by_name(g, "if")));
  CHECK(has_edge(g, by_name(g, "c"), by_name(g, "if")));
  CHECK(g[by_name(g, "if")].bytes == 16);
}

TEST_CASE("errors name the file and the tensor or node") {
  temp_dir dir;
  auto write = [&](const std::string& name, const std::string& bytes) {
    const auto p = dir / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  };
  SUBCASE("not an ONNX file") {
    const auto p = write("g.onnx", R"({"nodes": [{"id": 0, "bytes": 4}], "edges": []})");
    CHECK(error_of([&] { return read_onnx_graph(p); }) ==
          p.string() + ": not an ONNX model (the protobuf does not parse: another format or a truncated file)");
    const auto empty = write("empty.onnx", "");
    CHECK(error_of([&] { return read_onnx_graph(empty); }) == empty.string() + ": not an ONNX model (no graph, IR version or opset import)");
    CHECK(starts_with(error_of([&] { return read_onnx_graph(dir / "missing.onnx"); }), (dir / "missing.onnx").string() + ": cannot open"));
  }
  SUBCASE("a truncated file") {
    const std::string whole = conv_relu_add().bytes();
    for (std::size_t keep : {whole.size() / 2, whole.size() - 3, std::size_t{7}}) {
      CAPTURE(keep);
      const auto p = write("cut.onnx", whole.substr(0, keep));
      CHECK(starts_with(error_of([&] { return read_onnx_graph(p); }), p.string() + ": "));
    }
  }
  SUBCASE("a dangling input") {
    model_builder b;
    b.input("x", {2}).output("y");
    b.node("Add", {"x", "ghost"}, {"y"}, "adder");
    CHECK(error_of([&] { return b.read(); }) ==
          "m.onnx: node 'adder' (Add) reads tensor 'ghost', which no node produces and which is no graph input or "
          "initializer (a dangling input)");
  }
  SUBCASE("nodes out of topological order") {
    model_builder b;
    b.input("x", {2}).output("z");
    b.node("Relu", {"y"}, {"z"}, "second");
    b.node("Relu", {"x"}, {"y"}, "first");
    const std::string e = error_of([&] { return b.read(); });
    CAPTURE(e);
    CHECK(starts_with(e, "m.onnx: node 'second' (Relu) reads tensor 'y' before node 'first' produces it"));
  }
  SUBCASE("shape inference fails on a node") {
    model_builder b;
    b.input("x", {2, 3}).input("w", {4, 5}).output("y");
    b.node("MatMul", {"x", "w"}, {"y"}, "bad_matmul");
    const std::string e = error_of([&] { return b.read(); });
    CHECK(starts_with(e, "m.onnx: ONNX shape inference failed: node 'bad_matmul' (MatMul): "));
  }
  SUBCASE("an op without inferable shapes") {
    model_builder b;
    b.input("x", {2}).output("y");
    b.node("MyOp", {"x"}, {"y"}, "custom").set_domain("com.example");
    b.m.add_opset_import()->set_domain("com.example");
    b.m.mutable_opset_import(1)->set_version(1);
    const std::string e = error_of([&] { return b.read(); });
    CAPTURE(e);
    CHECK(starts_with(e, "m.onnx: tensor 'y' (output of node 'custom' (MyOp)): no type or shape after ONNX shape inference"));
  }
  SUBCASE("an unknown dimension") {
    model_builder b;
    b.input("x", {2}).output("y");
    b.m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();  // neither value nor name
    b.node("Relu", {"x"}, {"y"}, "relu");
    CHECK(error_of([&] { return b.read(); }) == "m.onnx: tensor 'x' (graph input): dimension 1 is unknown after ONNX shape inference");
  }
  SUBCASE("a string tensor") {
    model_builder b;
    b.input("s", {2}, onnx::TensorProto::STRING).output("s2");
    b.node("Identity", {"s"}, {"s2"}, "id");
    CHECK(contains(error_of([&] { return b.read(); }), "tensor 's' (graph input): element type 8 has no fixed size"));
  }
  SUBCASE("a tensor produced twice, or over a graph input") {
    model_builder b;
    b.input("x", {2}).output("y");
    b.node("Relu", {"x"}, {"y"}, "one");
    b.node("Neg", {"x"}, {"y"}, "two");
    CHECK(error_of([&] { return b.read(); }) == "m.onnx: tensor 'y' is produced twice, by node 'one' and by node 'two'");
    model_builder c;
    c.input("x", {2}).output("x");
    c.node("Relu", {"x"}, {"x"}, "inplace");
    CHECK(error_of([&] { return c.read(); }) == "m.onnx: node 'inplace' (Relu) produces tensor 'x', which is a graph input or initializer");
  }
  SUBCASE("weights only") {
    model_builder b;
    b.weight("W", {2}).output("y");
    b.node("Relu", {"W"}, {"y"}, "folded");
    CHECK(error_of([&] { return b.read(); }) ==
          "m.onnx: the model computes nothing (no graph input and no node that is not a weight)");
    CHECK(num_vertices(b.read({.fold_constants = false}).graph) == 1);
  }
  SUBCASE("an output nobody produces") {
    model_builder b;
    b.input("x", {2}).output("y").output("nowhere");
    b.node("Relu", {"x"}, {"y"}, "relu");
    CHECK(error_of([&] { return b.read(); }) ==
          "m.onnx: graph output 'nowhere' is produced by no node and is no graph input or initializer");
  }
}

TEST_CASE("the bundled PyTorch exports read without their external weight files") {
  // Expected numbers checked independently with python3-onnx 1.12 (onnx.shape_inference, the same
  // convention written in Python): vertices, edges, total bytes.
  struct expected {
    const char* file;
    std::size_t vertices, edges;
    std::int64_t bytes;
    std::size_t weights, folded;
  };
  const dataflow_graph first = read_onnx_graph(std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "onnx" / "resnet18.onnx");
  for (const expected& e : {expected{"googlenet.onnx", 140, 166, 37'035'808, 116, 40},
                            expected{"mobilenet_v2.onnx", 101, 110, 52'617'504, 176, 39},
                            expected{"resnet18.onnx", 50, 57, 23'590'816, 42, 16},
                            expected{"squeezenet1_1.onnx", 66, 73, 28'447'616, 52, 18}}) {
    CAPTURE(e.file);
    const auto path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "onnx" / e.file;
    const auto r = read_onnx_model(path);
    CHECK(num_vertices(r.graph) == e.vertices);
    CHECK(num_edges(r.graph) == e.edges);
    CHECK(total_bytes(r.graph) == e.bytes);
    CHECK(r.weights == e.weights);
    CHECK(r.folded_nodes == e.folded);
    REQUIRE(r.graph[boost::graph_bundle].outputs);
    CHECK(r.graph[boost::graph_bundle].outputs->size() == 1);
    CHECK(r.graph[by_name(r.graph, "input")].bytes == 1 * 3 * 224 * 224 * 4);
    // alias_views: the only view left after folding is the Flatten before the classifier.
    const auto merged = read_onnx_model(path, {.alias_views = true});
    CHECK(merged.merged_views == 1);
    CHECK(num_vertices(merged.graph) == e.vertices - 1);
    // read_graph dispatches .onnx when linked with memsched::onnx.
    CHECK(canonical(read_graph(path)) == canonical(r.graph));
  }
  // ResNet-18's well-known 1.82 GMACs: the convolutions and the classifier, 2 FLOPs per MAC.
  double conv_flops = 0;
  for (std::size_t v = 0; v < num_vertices(first); ++v)
    if (first[v].op == "Conv" || first[v].op == "Gemm") conv_flops += first[v].cost;
  CHECK(conv_flops == doctest::Approx(2 * 1.814e9).epsilon(0.01));
}

TEST_CASE("inplace (default on): element-wise and shape-only nodes may write over a dying input; off: none") {
  // conv_relu_add: x (768 B) -> conv (1024) -> relu (1024) -> add(r, r) (1024), output add.
  const auto on = conv_relu_add().read();
  const auto off = conv_relu_add().read({.inplace = false});
  const dataflow_graph &g = on.graph, &h = off.graph;
  const auto x = by_name(g, "x"), conv = by_name(g, "conv"), relu = by_name(g, "relu"), add = by_name(g, "add");
  CHECK(!g[x].inplace);
  CHECK(!g[conv].inplace);
  CHECK(g[relu].inplace);
  CHECK(g[add].inplace);
  for (std::size_t v = 0; v < num_vertices(h); ++v) CHECK(!h[v].inplace);
  CHECK(canonical(h) != canonical(g));
  // Everything else is the same graph.
  dataflow_graph cleared = g;
  for (std::size_t v = 0; v < num_vertices(cleared); ++v) cleared[v].inplace = false;
  CHECK(canonical(cleared) == canonical(h));
  // By hand, order x conv relu add. Without: 768 | 768 + 1024 = 1792 -> 1024 | 2048 -> 1024 |
  // 2048 -> 1024: peak 2048. With: relu takes c's buffer (c dies at relu), add takes r's (read
  // twice, one edge, dies at add): 768 | 1792 | 1024 | 1024: peak 1792 (the convolution).
  const std::vector<std::size_t> order{x, conv, relu, add};
  CHECK(simulate_order(make_memory_graph(h), std::span<const std::size_t>(order)).peak_bytes == 2048);
  const order_simulation with = simulate_order(make_memory_graph(g), std::span<const std::size_t>(order));
  CHECK(with.peak_bytes == 1792);
  CHECK(with.transient[2] == 1024);
  CHECK(with.transient[3] == 1024);

  // Shape-only ops, Sigmoid and BatchNormalization (inference form) are in place; MaxPool, Concat,
  // Softmax and Cast are not; alias_views merges the views instead (no vertex to mark).
  model_builder b;
  b.input("x", {1, 4, 4, 4}).weight("s", {4}).weight("bb", {4}).weight("m", {4}).weight("v", {4}).constant("shape", {1, 64}).output("o");
  b.node("BatchNormalization", {"x", "s", "bb", "m", "v"}, {"bn"}, "bn");
  b.node("Sigmoid", {"bn"}, {"sg"}, "sigmoid");
  auto& pool = b.node("MaxPool", {"sg"}, {"p"}, "pool");
  set_ints(pool, "kernel_shape", {1, 1});
  b.node("Reshape", {"p", "shape"}, {"rs"}, "reshape");
  auto& softmax = b.node("Softmax", {"rs"}, {"sm"}, "softmax");
  set_int(softmax, "axis", 1);
  auto& cast = b.node("Cast", {"sm"}, {"c"}, "cast");
  set_int(cast, "to", f32);
  auto& concat = b.node("Concat", {"c", "c"}, {"cc"}, "concat");
  set_int(concat, "axis", 1);
  b.constant("axes", {0});
  b.node("Unsqueeze", {"cc", "axes"}, {"o"}, "unsqueeze");
  const auto r = b.read();
  for (const char* name : {"bn", "sigmoid", "reshape", "unsqueeze"}) CHECK_MESSAGE(r.graph[by_name(r.graph, name)].inplace, name);
  for (const char* name : {"x", "pool", "softmax", "cast", "concat"}) CHECK_MESSAGE(!r.graph[by_name(r.graph, name)].inplace, name);
  const auto merged = b.read({.alias_views = true});
  CHECK(merged.merged_views == 2);
  CHECK(merged.graph[by_name(merged.graph, "sigmoid")].inplace);
}

TEST_CASE("the default domain is spelled \"\" or \"ai.onnx\": both read the same everywhere") {
  // Constant (a weight), Conv without kernel_shape (taken from W; FLOPs), Relu (in place) and
  // Reshape (a view merged by alias_views), all written with domain "ai.onnx".
  auto build = [](const std::string& domain) {
    model_builder b;
    b.input("x", {1, 3, 8, 8}).weight("W", {4, 3, 3, 3}).output("y");
    b.constant("shape", {1, 256});
    auto& conv = b.node("Conv", {"x", "W"}, {"c"}, "conv");
    set_ints(conv, "pads", {1, 1, 1, 1});
    b.node("Relu", {"c"}, {"r"}, "relu");
    b.node("Reshape", {"r", "shape"}, {"y"}, "reshape");
    for (auto& n : *b.m.mutable_graph()->mutable_node()) n.set_domain(domain);
    if (!domain.empty()) {  // the opset import under the same spelling (shape inference looks it up)
      auto* opset = b.m.add_opset_import();
      opset->set_domain(domain);
      opset->set_version(13);
    }
    return b;
  };
  for (const bool views : {false, true}) {
    CAPTURE(views);
    const auto plain = build("").read({.alias_views = views});
    const auto named = build("ai.onnx").read({.alias_views = views});
    CHECK(canonical(named.graph) == canonical(plain.graph));
    CHECK(named.constant_nodes == 1);
    CHECK(named.merged_views == (views ? 1u : 0u));
    CHECK(named.inplace_nodes == (views ? 1u : 2u));  // relu (and reshape when it is a vertex)
    const dataflow_graph& g = named.graph;
    CHECK(num_vertices(g) == (views ? 3u : 4u));
    CHECK(g[by_name(g, "conv")].cost == 2.0 * (4 * 8 * 8) * (3 * 3 * 3));
    CHECK(g[by_name(g, "relu")].inplace);
  }
}

TEST_CASE("the default domain spelled \"ai.onnx\" inside If branches (nested too) reads as \"\"") {
  // If -> then_branch: If -> Neg / Abs; else_branch: Abs. No branch output has a type: the If's
  // output size comes from shape inference of the branch nodes, which knows only "" (the reader
  // respells every subgraph's nodes).
  auto build = [](const std::string& domain) {
    model_builder b;
    b.input("c", {1}, onnx::TensorProto::BOOL).input("x", {4}).output("y");
    b.node("Relu", {"x"}, {"r"}, "relu").set_domain(domain);
    // An If node in `g` whose branches apply then_op / else_op to r, or (then_op empty) nest another If.
    std::function<void(onnx::GraphProto&, const std::string&, const std::string&, const std::string&)> add_if =
        [&](onnx::GraphProto& g, const std::string& out, const std::string& then_op, const std::string& else_op) {
          auto* n = g.add_node();
          n->set_op_type("If");
          n->set_name(out);
          n->set_domain(domain);
          n->add_input("c");
          n->add_output(out);
          for (const std::string branch : {"then_branch", "else_branch"}) {
            auto* a = n->add_attribute();
            a->set_name(branch);
            a->set_type(onnx::AttributeProto::GRAPH);
            auto* sub = a->mutable_g();
            sub->set_name(out + "_" + branch);
            const std::string sub_out = out + "_" + branch + "_out";
            const std::string& op = branch == "then_branch" ? then_op : else_op;
            if (op.empty()) {
              add_if(*sub, sub_out, "Neg", "Abs");
            } else {
              auto* inner = sub->add_node();
              inner->set_op_type(op);
              inner->set_domain(domain);
              inner->add_input("r");  // the outer scope's r
              inner->add_output(sub_out);
            }
            sub->add_output()->set_name(sub_out);
          }
        };
    add_if(*b.m.mutable_graph(), "y", "", "Abs");
    if (!domain.empty()) {
      auto* opset = b.m.add_opset_import();
      opset->set_domain(domain);
      opset->set_version(13);
    }
    return b;
  };
  const dataflow_graph plain = build("").read().graph;
  const dataflow_graph named = build("ai.onnx").read().graph;
  CHECK(canonical(named) == canonical(plain));
  REQUIRE(num_vertices(named) == 4);
  CHECK(has_edge(named, by_name(named, "relu"), by_name(named, "y")));
  CHECK(named[by_name(named, "y")].bytes == 16);
  CHECK(named[by_name(named, "relu")].inplace);
}

TEST_CASE("the bundled PyTorch exports: in-place vertices by default, the same graph otherwise") {
  for (const char* file : {"googlenet.onnx", "mobilenet_v2.onnx", "resnet18.onnx", "squeezenet1_1.onnx"}) {
    CAPTURE(file);
    const auto path = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "onnx" / file;
    dataflow_graph on = read_onnx_graph(path);
    const dataflow_graph off = read_onnx_graph(path, {.inplace = false});
    std::size_t marked = 0;
    for (std::size_t v = 0; v < num_vertices(on); ++v) {
      marked += on[v].inplace;
      CHECK(on[v].inplace == (on[v].op != "input" && detail::onnx_inplace_op(on[v].op)));
      CHECK(!off[v].inplace);
      on[v].inplace = false;
    }
    CHECK(marked > 0);
    CHECK(read_onnx_model(path).inplace_nodes == marked);
    CHECK(read_onnx_model(path, {.inplace = false}).inplace_nodes == 0);
    CHECK(canonical(on) == canonical(off));
  }
  // ResNet-18: the first Conv -> Relu pair (a 1 x 64 x 112 x 112 float tensor, 3.2 MB) shares a buffer.
  const dataflow_graph g = read_onnx_graph(std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "onnx" / "resnet18.onnx");
  std::size_t relus = 0;
  for (std::size_t v = 0; v < num_vertices(g); ++v) relus += g[v].op == "Relu" && g[v].inplace;
  CHECK(relus == 17);
}

TEST_CASE("protobuf nesting is capped: deeply nested subgraphs are not an ONNX model") {
  // If -> then_branch -> If -> ...: 3 message levels per subgraph. protobuf's default recursion
  // limit (100 nested messages, kept by ::onnx::ParseProtoFromBytes) makes the parse fail, before
  // the reader or shape inference recurse. A regression test of that rejection.
  auto nested = [](int levels) {
    model_builder b;
    b.input("x", {1}).output("y");
    onnx::GraphProto* g = b.m.mutable_graph();
    for (int k = 0; k < levels; ++k) {
      auto* n = g->add_node();
      n->set_op_type("If");
      n->add_input("x");
      n->add_output(k == 0 ? "y" : "y" + std::to_string(k));
      auto* a = n->add_attribute();
      a->set_name("then_branch");
      a->set_type(onnx::AttributeProto::GRAPH);
      g = a->mutable_g();
    }
    return b.bytes();
  };
  const std::string deep = nested(40);
  CHECK(error_of([&] { return parse_onnx_model(deep, {}, "deep.onnx"); }) ==
        "deep.onnx: not an ONNX model (the protobuf does not parse: another format or a truncated file)");
  // 30 levels (about 91 nested messages) parse; the If nodes then fail shape inference (no
  // else_branch): an error naming the file, not a parse failure.
  const std::string shallow = error_of([&] { return parse_onnx_model(nested(30), {}, "ok.onnx"); });
  CHECK(starts_with(shallow, "ok.onnx: "));
  CHECK(shallow.find("not an ONNX model") == std::string::npos);
}

TEST_CASE("parse_onnx_dim: NAME=VALUE with an integer >= 0, no blanks") {
  CHECK(parse_onnx_dim("batch=1") == std::pair<std::string, std::int64_t>{"batch", 1});
  CHECK(parse_onnx_dim("n=0") == std::pair<std::string, std::int64_t>{"n", 0});
  for (const char* bad : {"batch", "=1", "batch=", "batch=-1", "batch= 1", "batch=1 ", "batch=1.5", "batch=0x10", "batch=+1",
                          "batch=99999999999999999999"})
    CHECK_THROWS_AS((void)parse_onnx_dim(bad), graph_error);
}

TEST_CASE("names and ops that are not UTF-8 are errors (found by fuzz/onnx_graph.cpp)") {
  // ONNX strings are unchecked bytes; such a graph could not be written as JSON (to_json threw
  // graph_error out of the fuzzer's round trip).
  const auto read = [](const model_builder& b) { return error_of([&] { return b.read(); }); };
  model_builder name = conv_relu_add();
  name.m.mutable_graph()->mutable_node(1)->set_name("relu\xff");
  CHECK(read(name) == "m.onnx: node 2: name is not valid UTF-8");
  model_builder op;  // a custom op, its output's shape declared
  op.input("x", {2}).output("y");
  op.node("MyOp\xff", {"x"}, {"y"}, "custom").set_domain("com.example");
  op.m.add_opset_import()->set_domain("com.example");
  op.m.mutable_opset_import(1)->set_version(1);
  model_builder::set_type(*op.m.mutable_graph()->add_value_info(), "y", f32, {2});
  CHECK(read(op) == "m.onnx: node 1: op is not valid UTF-8");
  model_builder graph = conv_relu_add();
  graph.m.mutable_graph()->set_name("\xc3(");
  CHECK(read(graph) == "m.onnx: the graph name is not valid UTF-8");
  model_builder input = conv_relu_add();
  // The input's name is also the tensor the conv reads: rename both.
  input.m.mutable_graph()->mutable_input(0)->set_name("x\xed\xa0\x80");
  input.m.mutable_graph()->mutable_node(0)->set_input(0, "x\xed\xa0\x80");
  CHECK(read(input) == "m.onnx: node 0: name is not valid UTF-8");
  // The fuzzer's input.
  const auto crash = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "fuzz" / "onnx" / "invalid_utf8_name.onnx";
  CHECK(starts_with(error_of([&] { return read_onnx_graph(crash); }), crash.string() + ": "));
}

TEST_CASE("a Conv whose weight has another rank than its input is an error, not a crash (found by fuzz/onnx_graph.cpp)") {
  // ONNX 1.12's shape inference took the kernel from W's dims without checking it against X's
  // rank and read past its dilations (SIGSEGV); the reader writes kernel_shape from W first.
  model_builder b;
  b.input("x", {1, 3, 8}).weight("W", {4, 3, 3, 3}).output("c");
  b.node("Conv", {"x", "W"}, {"c"}, "conv");
  CHECK(starts_with(error_of([&] { return b.read(); }), "m.onnx: ONNX shape inference failed"));
  // The same convolution on a 4-D input reads as before (kernel 3 x 3 from W).
  model_builder ok;
  ok.input("x", {1, 3, 8, 8}).weight("W", {4, 3, 3, 3}).output("c");
  ok.node("Conv", {"x", "W"}, {"c"}, "conv");
  const auto r = ok.read();
  CHECK(r.graph[by_name(r.graph, "conv")].bytes == 1 * 4 * 6 * 6 * 4);
  const auto crash = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "fuzz" / "onnx" / "conv_kernel_rank.onnx";
  CHECK(starts_with(error_of([&] { return read_onnx_graph(crash); }), crash.string() + ": "));
}

TEST_CASE("a zero stride, dilation or kernel size is an error naming the node, not a crash (found by fuzz/onnx_graph.cpp)") {
  // ONNX 1.12's convolution and pooling shape inference divides by the stride (SIGFPE on 0).
  for (const std::string attribute : {"strides", "dilations", "kernel_shape"}) {
    CAPTURE(attribute);
    model_builder b;
    b.input("x", {1, 3, 8, 8}).weight("W", {4, 3, 3, 3}).output("c");
    onnx::NodeProto& n = b.node("Conv", {"x", "W"}, {"c"}, "conv");
    set_ints(n, attribute, {1, 0});
    CHECK(error_of([&] { return b.read(); }) == "m.onnx: node 'conv' (Conv): attribute '" + attribute + "' holds 0, must be positive");
  }
  model_builder pool;
  pool.input("x", {1, 3, 8, 8}).output("p");
  set_ints(pool.node("MaxPool", {"x"}, {"p"}, "pool"), "kernel_shape", {2, -2});
  CHECK(error_of([&] { return pool.read(); }) == "m.onnx: node 'pool' (MaxPool): attribute 'kernel_shape' holds -2, must be positive");
  // Positive values read as before.
  model_builder ok;
  ok.input("x", {1, 3, 8, 8}).weight("W", {4, 3, 3, 3}).output("c");
  set_ints(ok.node("Conv", {"x", "W"}, {"c"}, "conv"), "strides", {2, 2});
  const auto r = ok.read();
  CHECK(r.graph[by_name(r.graph, "conv")].bytes == 1 * 4 * 3 * 3 * 4);  // (8 - 3) / 2 + 1 = 3
  const auto crash = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "fuzz" / "onnx" / "conv_zero_stride.onnx";
  CHECK(starts_with(error_of([&] { return read_onnx_graph(crash); }), crash.string() + ": "));
}

namespace {

/// A Constant holding an int64 scalar (a Gather index, a Range bound).
void scalar(model_builder& b, const std::string& out, std::int64_t v) {
  auto& n = b.node("Constant", {}, {out});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_int64_data(v);
}

/// A Constant holding a float vector.
void floats(model_builder& b, const std::string& out, const std::vector<float>& values) {
  auto& n = b.node("Constant", {}, {out});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(f32);
  a->mutable_t()->add_dims(static_cast<std::int64_t>(values.size()));
  for (float v : values) a->mutable_t()->add_float_data(v);
}

/// Probes the int64 vector `value` of `count` entries: for each entry i, a vertex "probe_i" =
/// Expand(one[1], value[i:i+1]) whose bytes are 4 x value[i], so that each entry is checked.
void probe(model_builder& b, const std::string& value, std::int64_t count) {
  b.input("one", {1});
  for (std::int64_t i = 0; i < count; ++i) {
    const std::string k = std::to_string(i);
    b.constant("s" + k, {i}).constant("e" + k, {i + 1});
    b.node("Slice", {value, "s" + k, "e" + k}, {"entry" + k});
    b.node("Expand", {"one", "entry" + k}, {"probe" + k}, "probe_" + k);
    b.output("probe" + k);
  }
}

/// The entries of the probed vector, read back from the vertices' bytes.
std::vector<std::int64_t> probed(const dataflow_graph& g, std::int64_t count) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < count; ++i) v.push_back(g[by_name(g, "probe_" + std::to_string(i))].bytes / 4);
  return v;
}

/// x[1,4,6,6] and its shape s = Shape(x) = [1, 4, 6, 6], the start of each shape computation below.
model_builder shape_of_x() {
  model_builder b;
  b.input("x", {1, 4, 6, 6});
  b.node("Shape", {"x"}, {"s"}, "shape");
  return b;
}

}  // namespace

TEST_CASE("shape arithmetic is evaluated: ShuffleNet's channel shuffle reads, Shape is folded") {
  // PyTorch's export of x.view(b, 2, c // 2, h, w).transpose(1, 2).reshape(b, c, h, w): ONNX's own
  // inference leaves the Reshape target unknown (Div is not propagated).
  model_builder b = shape_of_x();
  b.output("y");
  for (int k = 0; k < 4; ++k) {
    const std::string i = std::to_string(k);
    scalar(b, "i" + i, k);
    b.node("Gather", {"s", "i" + i}, {"d" + i});
  }
  scalar(b, "two", 2);
  b.node("Div", {"d1", "two"}, {"half"});
  b.constant("axes", {0});
  for (const char* t : {"d0", "two", "half", "d2", "d3"}) b.node("Unsqueeze", {t, "axes"}, {std::string("u_") + t});
  set_int(b.node("Concat", {"u_d0", "u_two", "u_half", "u_d2", "u_d3"}, {"target"}), "axis", 0);
  b.node("Reshape", {"x", "target"}, {"r"}, "split");
  set_ints(b.node("Transpose", {"r"}, {"t"}, "shuffle"), "perm", {0, 2, 1, 3, 4});
  b.node("Reshape", {"t", "s"}, {"y"}, "merge");
  const auto r = b.read();
  const dataflow_graph& g = r.graph;
  REQUIRE(num_vertices(g) == 4);  // x, split, shuffle, merge: the arithmetic is folded
  for (const char* v : {"split", "shuffle", "merge"}) CHECK(g[by_name(g, v)].bytes == 1 * 4 * 6 * 6 * 4);
  CHECK(num_edges(g) == 3);  // x -> split -> shuffle -> merge: reading x's shape is no edge
  CHECK(r.folded_nodes == 1 + 4 + 1 + 5 + 1);
  // fold_constants off: the arithmetic becomes vertices; the shapes are the same.
  const auto literal = b.read({.fold_constants = false});
  const dataflow_graph& h = literal.graph;
  CHECK(num_vertices(h) == 4 + 12);
  CHECK(h[by_name(h, "shape")].bytes == 4 * 8);
  CHECK(h[by_name(h, "split")].bytes == 1 * 4 * 6 * 6 * 4);
  CHECK(has_edge(h, by_name(h, "x"), by_name(h, "shape")));
}

TEST_CASE("each evaluated op: values checked entry by entry") {
  // Each subcase computes an int64 vector and probes it (see probe()).
  model_builder b = shape_of_x();
  std::vector<std::int64_t> expected;
  SUBCASE("Shape with start and end (opset 15), Size") {
    b.m.mutable_opset_import(0)->set_version(15);
    auto& n = b.node("Shape", {"x"}, {"tail"});
    set_int(n, "start", -2);
    b.node("Size", {"x"}, {"size"});
    b.constant("axes", {0});
    b.node("Unsqueeze", {"size", "axes"}, {"size1"});
    set_int(b.node("Concat", {"tail", "size1"}, {"v"}), "axis", 0);
    expected = {6, 6, 144};
  }
  SUBCASE("Gather with a negative index and an index vector") {
    b.constant("idx", {-1, 1, 0});
    b.node("Gather", {"s", "idx"}, {"v"});
    expected = {6, 4, 1};
  }
  SUBCASE("Slice with a negative step and clamped bounds") {
    b.constant("st", {100}).constant("en", {-100}).constant("ax", {0}).constant("sp", {-2});
    b.node("Slice", {"s", "st", "en", "ax", "sp"}, {"v"});
    expected = {6, 4};
  }
  SUBCASE("Squeeze, Unsqueeze (opset 13 axes input) and Reshape with 0 and -1") {
    b.constant("shape", {2, 2});
    b.node("Reshape", {"s", "shape"}, {"m"});       // [[1, 4], [6, 6]]
    b.constant("copy", {0, -1});
    b.node("Reshape", {"m", "copy"}, {"m2"});       // [2, 2]: 0 copies, -1 infers
    b.constant("ax", {0});
    b.node("Unsqueeze", {"m2", "ax"}, {"m3"});      // [1, 2, 2]
    b.node("Squeeze", {"m3", "ax"}, {"m4"});        // [2, 2]
    b.constant("flat", {-1});
    b.node("Reshape", {"m4", "flat"}, {"v"});
    expected = {1, 4, 6, 6};
  }
  SUBCASE("arithmetic: Add, Sub, Mul, Div (truncating), Mod (divisor's sign), Neg, Abs, Min, Max") {
    b.constant("k", {3, -5, 7, 2});
    b.node("Add", {"s", "k"}, {"a"});    // [4, -1, 13, 8]
    b.node("Mul", {"a", "k"}, {"m"});    // [12, 5, 91, 16]
    b.node("Sub", {"m", "s"}, {"d"});    // [11, 1, 85, 10]
    b.node("Div", {"d", "k"}, {"q"});    // [3, 0, 12, 5]
    b.node("Mod", {"k", "s"}, {"r"});    // [0, 3, 1, 2]
    b.node("Neg", {"k"}, {"n"});         // [-3, 5, -7, -2]
    b.node("Abs", {"n"}, {"ab"});        // [3, 5, 7, 2]
    b.node("Max", {"q", "r"}, {"mx"});   // [3, 3, 12, 5]
    b.node("Min", {"mx", "ab"}, {"mn"}); // [3, 3, 7, 2]
    b.node("Add", {"mn", "r"}, {"v"});   // [3, 6, 8, 4]
    expected = {3, 6, 8, 4};
  }
  SUBCASE("Cast through float, Floor, Ceil, Sqrt") {
    set_int(b.node("Cast", {"s"}, {"f"}), "to", f32);
    floats(b, "h", {0.5F, 0.5F, 0.5F, 0.5F});
    b.node("Mul", {"f", "h"}, {"fh"});       // [0.5, 2, 3, 3]
    b.node("Ceil", {"fh"}, {"c"});           // [1, 2, 3, 3]
    b.node("Sqrt", {"f"}, {"sq"});           // [1, 2, 2.449, 2.449]
    b.node("Floor", {"sq"}, {"fl"});         // [1, 2, 2, 2]
    b.node("Add", {"c", "fl"}, {"sum"});     // [2, 4, 5, 5]
    set_int(b.node("Cast", {"sum"}, {"v"}), "to", onnx::TensorProto::INT64);
    expected = {2, 4, 5, 5};
  }
  SUBCASE("ViT's class token: ConstantOfShape, Equal, Where, Expand; Range; Transpose") {
    b.constant("three", {3});
    auto& c = b.node("ConstantOfShape", {"three"}, {"ones"});  // [1, 1, 1] (int64 value)
    auto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_int64_data(1);
    b.constant("want", {-1, 5, -1});
    b.constant("minus", {-1, -1, -1});
    b.node("Equal", {"want", "minus"}, {"eq"});
    b.node("Where", {"eq", "ones", "want"}, {"w"});  // [1, 5, 1]
    b.node("Expand", {"w", "three"}, {"wx"});        // [1, 5, 1] (already 3 long)
    scalar(b, "r0", 2);
    scalar(b, "r1", 11);
    scalar(b, "r2", 4);
    b.node("Range", {"r0", "r1", "r2"}, {"rg"});     // [2, 6, 10]
    b.constant("shape", {3, 1});
    b.node("Reshape", {"rg", "shape"}, {"col"});
    set_ints(b.node("Transpose", {"col"}, {"row"}), "perm", {1, 0});
    b.constant("flat", {-1});
    b.node("Reshape", {"row", "flat"}, {"rg2"});
    set_int(b.node("Concat", {"wx", "rg2"}, {"v"}), "axis", 0);
    expected = {1, 5, 1, 2, 6, 10};
  }
  const auto count = static_cast<std::int64_t>(expected.size());
  probe(b, "v", count);
  const auto r = b.read();
  CHECK(probed(r.graph, count) == expected);
}

TEST_CASE("malformed shape arithmetic is an error naming the node") {
  model_builder b = shape_of_x();
  b.output("y");
  std::string expected;
  SUBCASE("an index out of range") {
    scalar(b, "i", 4);
    b.node("Gather", {"s", "i"}, {"y"}, "g");
    expected = "m.onnx: node 'g' (Gather): index 4 is out of range for axis 0 of size 4";
  }
  SUBCASE("a division by zero") {
    b.constant("z", {0});
    b.node("Div", {"s", "z"}, {"y"}, "div");
    expected = "m.onnx: node 'div' (Div): Div by zero";
  }
  SUBCASE("an overflow") {
    b.constant("big", {INT64_MAX});
    b.node("Mul", {"s", "big"}, {"y"}, "mul");
    expected = "m.onnx: node 'mul' (Mul): Mul of 4 and 9223372036854775807 overflows 64 bits";
  }
  SUBCASE("a Reshape of a value to a shape of another size") {
    b.constant("three", {3});
    b.node("Reshape", {"s", "three"}, {"y"}, "reshape");
    expected = "m.onnx: node 'reshape' (Reshape): its input's 4 elements do not match the shape's 3";
  }
  SUBCASE("a Constant whose data does not fill its dims") {
    auto& n = b.node("Constant", {}, {"y"}, "bad_constant");
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(3);
    a->mutable_t()->add_int64_data(1);
    expected = "m.onnx: node 'bad_constant' (Constant): tensor '' holds 1 values for 3 elements (dims)";
  }
  CHECK(error_of([&] { return b.read(); }) == expected);
}

TEST_CASE("an evaluated op whose required input has the empty name is left to shape inference") {
  // The empty name marks an absent optional input; for these ops the input is required, so the
  // value is not evaluated (it once dereferenced the missing input). Reading then succeeds or fails
  // with a file error, as shape inference decides.
  for (const char* op : {"Reshape", "Add", "Gather", "Expand", "Concat", "Where", "Range"}) {
    CAPTURE(op);
    model_builder b = shape_of_x();
    b.output("y");
    b.node(op, {"s", ""}, {"y"}, "n");
    try {
      (void)b.read();
    } catch (const file_error& e) {
      CHECK(std::string(e.what()).rfind("m.onnx: ", 0) == 0);
    }
  }
}

TEST_CASE("a dimension shape inference cannot know is reported as unknown, not as a symbol to bind") {
  // The Tile repeats are a graph input's value: unknown. ONNX's inference names such a dimension
  // 'unk__0', which the reader once offered to bind with --dim unk__0=N.
  model_builder b;
  b.input("x", {2, 3}).input("repeats", {2}, onnx::TensorProto::INT64).output("y");
  b.node("Tile", {"x", "repeats"}, {"y"}, "tile");
  CHECK(error_of([&] { return b.read(); }) == "m.onnx: tensor 'y' (output of node 'tile' (Tile)): dimension 0 is unknown after ONNX shape inference");
}
