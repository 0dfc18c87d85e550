// `memsched convert` and the other subcommands on ONNX models: the built tool (MEMSCHED_TOOL_PATH)
// converts each bundled model to every format, and what it writes reads back as the library's graph.

#include <memsched/graph/onnx_io.hpp>
#include <memsched/graph/read_graph.hpp>
#include <memsched/order/serenity.hpp>

#include "../graph/io_test_support.hpp"

#include "../support/run_tool.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;

namespace {
std::filesystem::path model(const char* name) { return std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / "onnx" / name; }
}  // namespace

TEST_CASE("convert writes every format and each reads back as the ONNX reader's graph") {
  temp_dir dir;
  for (const char* name : {"resnet18.onnx", "squeezenet1_1.onnx", "mobilenet_v2.onnx", "googlenet.onnx"}) {
    CAPTURE(name);
    const auto r = read_onnx_model(model(name));
    for (const char* ext : {".json", ".graphml", ".dot"}) {
      CAPTURE(ext);
      const auto out = dir / (std::string("g") + ext);
      const tool_run run = run_tool("convert " + model(name).string() + " --out " + out.string() + " --json", dir);
      REQUIRE(run.exit_code == 0);
      CHECK(run.err.empty());
      const json doc = json::parse(run.out);
      CHECK(doc["nodes"] == num_vertices(r.graph));
      CHECK(doc["edges"] == num_edges(r.graph));
      CHECK(doc["weights"] == r.weights);
      CHECK(doc["weight_bytes"] == r.weight_bytes);
      CHECK(doc["folded_nodes"] == r.folded_nodes);
      CHECK(canonical(read_graph(out)) == canonical(r.graph));
    }
    // And back from JSON to DOT: a conversion between the text formats.
    const tool_run again = run_tool("convert " + (dir / "g.json").string() + " --out " + (dir / "h.dot").string(), dir);
    REQUIRE(again.exit_code == 0);
    CHECK(canonical(read_graph(dir / "h.dot")) == canonical(r.graph));
  }
}

TEST_CASE("convert --alias-views and --no-fold give the reader's options; order and info read .onnx") {
  temp_dir dir;
  const auto path = model("resnet18.onnx");
  const json merged =
      run_tool_json("convert " + path.string() + " --alias-views --out " + (dir / "a.json").string() + " --json", dir);
  CHECK(merged["merged_views"] == 1);
  CHECK(canonical(read_graph(dir / "a.json")) == canonical(read_onnx_graph(path, {.alias_views = true})));
  const tool_run literal = run_tool("convert " + path.string() + " --no-fold --out " + (dir / "n.json").string(), dir);
  REQUIRE(literal.exit_code == 0);
  CHECK(canonical(read_graph(dir / "n.json")) == canonical(read_onnx_graph(path, {.fold_constants = false})));

  const json o = run_tool_json("order " + path.string() + " --algo serenity --json", dir);
  const dataflow_graph g = read_onnx_graph(path);
  const auto best = serenity_order(g);
  CHECK(o["status"] == "optimal");
  CHECK(o["peak_bytes"] == best.peak_bytes);
  const json i = run_tool_json("info " + path.string() + " --json", dir);
  CHECK(i["nodes"] == num_vertices(g));
  // What the reader left out is reported: weights are not vertices.
  const auto read = read_onnx_model(path);
  CHECK(read.weights > 0);
  CHECK(i["weights"] == read.weights);
  CHECK(i["weight_bytes"] == read.weight_bytes);
  CHECK(i["folded_nodes"] == read.folded_nodes);
  const tool_run text = run_tool("info " + path.string(), dir);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("not vertices, not planned") != std::string::npos);
}

TEST_CASE("convert binds symbolic dimensions with --dim and reports its mistakes") {
  temp_dir dir;
  // x[batch, 4] -> Relu, written with the ONNX C++ API.
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  auto* x = g->add_input();
  x->set_name("x");
  auto* t = x->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("batch");
  t->mutable_shape()->add_dim()->set_dim_value(4);
  g->add_output()->set_name("y");
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  const auto path = dir / "sym.onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();

  const json two =
      run_tool_json("convert " + path.string() + " --dim batch=2 --out " + (dir / "s.json").string() + " --json", dir);
  CHECK(two["total_bytes"] == 2 * (2 * 4 * 4));
  const tool_run unbound = run_tool("convert " + path.string() + " --out " + (dir / "s.json").string(), dir);
  CHECK(unbound.exit_code == 1);
  CHECK(contains(unbound.err, path.string() + ": tensor 'x' (graph input): dimension 0 is symbolic ('batch')"));
  const tool_run every = run_tool("info " + path.string(), dir);  // the other subcommands bind nothing
  CHECK(every.exit_code == 1);
  CHECK(contains(every.err, "--dim batch=N"));
  CHECK(run_tool("convert " + path.string() + " --dim batch --out " + (dir / "s.json").string(), dir).exit_code == 2);
  CHECK(run_tool("convert " + path.string() + " --dim batch=1,batch=2 --out " + (dir / "s.json").string(), dir).exit_code == 2);
  CHECK(run_tool("convert " + path.string() + " --dim batch=1 --out " + (dir / "s.txt").string(), dir).exit_code == 2);
  CHECK(run_tool("convert " + (dir / "s.json").string() + " --dim batch=1 --out " + (dir / "t.json").string(), dir).exit_code == 2);
  const tool_run garbage = run_tool("convert " + (dir / "s.json").string() + " --out " + (dir / "bad.onnx").string(), dir);
  CHECK(garbage.exit_code == 2);  // .onnx is read, never written
}

TEST_CASE("convert --no-inplace: ONNX in-place outputs are on by default, off with the flag; Serenity's optimum with and without") {
  temp_dir dir;
  const auto path = model("resnet18.onnx");
  const json on = run_tool_json("convert " + path.string() + " --out " + (dir / "on.json").string() + " --json", dir);
  const json off =
      run_tool_json("convert " + path.string() + " --no-inplace --out " + (dir / "off.json").string() + " --json", dir);
  CHECK(off["inplace_nodes"] == 0);
  const onnx_read_result read_on = read_onnx_model(path);
  const dataflow_graph& with = read_on.graph;
  const dataflow_graph without = read_onnx_graph(path, {.inplace = false});
  CHECK(read_on.inplace_nodes > 0);
  CHECK(on["inplace_nodes"] == read_on.inplace_nodes);
  // One independent count of the marked vertices, against the reader's.
  std::size_t marked = 0;
  for (std::size_t v = 0; v < num_vertices(with); ++v) marked += with[v].inplace;
  CHECK(marked == read_on.inplace_nodes);
  CHECK(canonical(read_graph(dir / "on.json")) == canonical(with));
  CHECK(canonical(read_graph(dir / "off.json")) == canonical(without));
  // Serenity proves its optimum both ways; in place is never worse, and here strictly better (the
  // stem's Relu writes over the Conv's 3.2 MB output).
  auto optimum = [&](const std::string& file) {
    const json o = run_tool_json("order " + (dir / file).string() + " --algo serenity --json", dir);
    CHECK(o["status"] == "optimal");
    return o["peak_bytes"].get<std::int64_t>();
  };
  const std::int64_t peak_on = optimum("on.json"), peak_off = optimum("off.json");
  CHECK(peak_off == 6'422'528);  // 2 x 1 x 64 x 112 x 112 floats: the stem Conv and its Relu
  CHECK(peak_on < peak_off);
  CHECK(peak_on == serenity_order(with).peak_bytes);
  // The flag is for ONNX models only.
  CHECK(run_tool("convert " + (dir / "on.json").string() + " --no-inplace --out " + (dir / "x.json").string(), dir).exit_code == 2);
}
