// make_gpt against the traces of ../shared/graphs/torch (too big to copy into tests/data). Without
// ../shared/graphs at configure time this test is registered as SKIPPED (tests/CMakeLists.txt).

#include "../support/same_graph.hpp"

#include <memsched/graph/gpt.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/remat/training_graph.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>

using namespace memsched;
using memsched::testing::check_same_graph;

TEST_CASE("make_gpt: the shared gpt2_medium and gpt_96 traces") {
  const std::filesystem::path dir = std::filesystem::path(MEMSCHED_TEST_DATA_DIR) / ".." / ".." / ".." / "shared" / "graphs" / "torch";
  const std::map<std::string, gpt_options> configs{
      {"gpt2_medium", {.layers = 24, .hidden = 1024, .heads = 16}},
      {"gpt_96", {.layers = 96, .hidden = 512, .heads = 8, .vocab = 32000}},
  };
  for (const auto& [stem, options] : configs) {
    CAPTURE(stem);
    const auto fwd = dir / (stem + ".inference.json");
    const auto train = dir / (stem + ".training.json");
    REQUIRE(std::filesystem::exists(fwd));
    REQUIRE(std::filesystem::exists(train));
    const dataflow_graph built = make_gpt(options);
    check_same_graph(built, read_json_graph(fwd));
    check_same_graph(make_training_graph(built), read_json_graph(train));
  }
}
