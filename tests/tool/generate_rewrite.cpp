// `memsched generate` and `memsched rewrite`: runs the built tool (MEMSCHED_TOOL_PATH) and checks
// its files and JSON against the library.

#include <memsched/graph/darts.hpp>
#include <memsched/graph/identity_rewrite.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/random_layered.hpp>
#include <memsched/graph/randwire.hpp>
#include <memsched/order/kahn.hpp>

#include "../graph/io_test_support.hpp"

#include "../support/run_tool.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

using namespace memsched;
using namespace memsched::testing;
using nlohmann::json;

TEST_CASE("memsched generate writes the library's graphs") {
  const temp_dir dir;
  struct item {
    std::string args;
    dataflow_graph expected;
  };
  const std::vector<item> items{
      {"randwire --seed 3 --stages 2", make_randwire({.stages = 2, .seed = 3})},
      {"randwire --compact --no-stem-head --channels 32", make_randwire({.channels = 32, .expand_ops = false, .stem_and_head = false})},
      {"darts --cells 8", make_darts_network({.cells = 8})},
      {"random-layered --nodes 250 --width 0.43 --seed 2", make_random_layered({.nodes = 250, .width = 0.43, .seed = 2})},
      {"random-layered --nodes 120 --sizes product --seed 2",
       make_random_layered({.nodes = 120, .seed = 2, .sizes = random_layered_sizes::product})},
  };
  for (const auto& it : items) {
    const auto out = dir / "g.json";
    const json doc = run_tool_json("generate " + it.args + " --out " + out.string() + " --json", dir);
    CHECK(doc.at("nodes") == num_vertices(it.expected));
    CHECK(doc.at("edges") == num_edges(it.expected));
    CHECK(to_json(read_json_graph(out)) == to_json(it.expected));
  }
  CHECK(run_tool("generate nonsense --out " + (dir / "x.json").string(), dir).exit_code == 2);
  const tool_run bad = run_tool("generate randwire --k 3 --out " + (dir / "x.json").string(), dir);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("memsched generate: --k must be even with 2 <= k < nodes, got 3\n") != std::string::npos);
  const tool_run bad_gpt = run_tool("generate gpt --layers 2 --mlp-ratio 0 --out " + (dir / "x.json").string(), dir);
  CHECK(bad_gpt.exit_code == 2);
  CHECK(bad_gpt.err.find("memsched generate: --mlp-ratio must be >= 1\n") != std::string::npos);
  const tool_run bad_sizes = run_tool("generate random-layered --sizes normal --out " + (dir / "x.json").string(), dir);
  CHECK(bad_sizes.exit_code == 2);
  CHECK(bad_sizes.err.find("--sizes: 'normal' is not uniform or product") != std::string::npos);
  CHECK(run_tool("generate darts", dir).exit_code == 2);  // --out is required
}

TEST_CASE("memsched rewrite reports the rewrites and the Kahn peaks before and after") {
  const temp_dir dir;
  const std::string path = std::string(MEMSCHED_TEST_DATA_DIR) + "/torch/unet.inference.json";
  const auto out = dir / "unet_rw.json";
  const json doc = run_tool_json("rewrite " + path + " --out " + out.string() + " --json", dir);
  const dataflow_graph g = read_json_graph(path);
  const auto lib = rewrite_identities(g);
  CHECK(doc.at("concat_conv_rewrites") == 4);
  CHECK(doc.at("concat_depthwise_rewrites") == 0);
  CHECK(doc.at("kahn_peak_before") == kahn_order(g).peak_bytes);
  CHECK(doc.at("kahn_peak_after") == kahn_order(lib.graph).peak_bytes);
  CHECK(doc.at("kahn_peak_after").get<std::int64_t>() < doc.at("kahn_peak_before").get<std::int64_t>());
  CHECK(to_json(read_json_graph(out)) == to_json(lib.graph));
  REQUIRE(doc.at("original").size() == num_vertices(lib.graph));
  for (std::size_t v = 0; v < num_vertices(lib.graph); ++v) CHECK(doc["original"][v] == g[lib.original[v]].id);
  // --no-channel-wise: nothing applies to U-Net.
  const json none = run_tool_json("rewrite " + path + " --no-channel-wise --out " + out.string() + " --json", dir);
  CHECK(none.at("concats_removed") == 0);
}
