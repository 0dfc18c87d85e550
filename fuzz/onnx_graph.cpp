// libFuzzer harness: parse_onnx_model on arbitrary bytes (see harness.hpp for what an accepted model
// must survive: the memory graph, the simulator, Kahn's order and a write + read back in every
// format). Built only when ONNX and protobuf are found (fuzz/run.sh, fuzz/CMakeLists.txt). The
// reading options vary with the input (its size picks alias_views, fold_constants and inplace), and
// a model with a symbolic dimension "batch" gets it bound, as the seeds use it.
#include "harness.hpp"

#include <memsched/graph/onnx_io.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  memsched::onnx_read_options options{.alias_views = (size & 1) != 0, .fold_constants = (size & 2) == 0, .inplace = (size & 4) == 0};
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.find("batch") != std::string_view::npos) options.dims["batch"] = 2;
  return memsched::fuzz::run_reader(data, size, [&](std::string_view text) {
    memsched::onnx_read_result r = memsched::parse_onnx_model(text, options, "fuzz");
    memsched::fuzz::require(options.inplace || r.inplace_nodes == 0, "no in-place vertex when onnx_read_options::inplace is off");
    return std::move(r.graph);
  });
}
