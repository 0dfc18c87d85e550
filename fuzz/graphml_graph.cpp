// libFuzzer harness: parse_graphml_graph on arbitrary text (see harness.hpp for what an accepted input must survive).
#include "harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return memsched::fuzz::run_reader(data, size, [](std::string_view text) { return memsched::parse_graphml_graph(text, "fuzz"); });
}
