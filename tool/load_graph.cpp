#include "cli.hpp"

#include <memsched/graph/read_graph.hpp>

namespace memsched_cli {

memsched::dataflow_graph load_graph(const std::string& path) { return memsched::read_graph(path); }

}  // namespace memsched_cli
