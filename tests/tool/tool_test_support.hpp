#pragma once
// Helpers of the tool tests that feed the tool hand-written and bundled inputs: the test data, a
// three-node chain and a file's text (substring checks: contains, io_test_support.hpp).

#include "../graph/io_test_support.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace memsched::testing {

inline const std::filesystem::path data_dir(MEMSCHED_TEST_DATA_DIR);
inline const std::string training = (data_dir / "torch" / "resnet18.training.json").string();

/// A forward chain 1 -> 2 -> 3 of 10, 20 and 5 bytes, output 3.
inline const char* const chain = R"({"name": "chain", "nodes": [
  {"id": 1, "bytes": 10}, {"id": 2, "bytes": 20}, {"id": 3, "bytes": 5}],
  "edges": [[1, 2], [2, 3]], "outputs": [3]})";

inline std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace memsched::testing
