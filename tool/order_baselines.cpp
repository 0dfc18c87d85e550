// The depth-first and greedy baseline orders for `memsched order --algo dfs|greedy`.

#include "cli.hpp"

#include <memsched/order/dfs.hpp>
#include <memsched/order/greedy.hpp>

namespace memsched_cli {
namespace {

const register_order_algorithm dfs{{"dfs", "    Depth-first reverse post-order (sources and successors in index order).\n", {},
                                    [](const memsched::dataflow_graph& g, const parsed_args&) { return memsched::dfs_order(g); }}};

const register_order_algorithm greedy{
    {"greedy",
     "    Greedy: run the ready node that leaves the least memory resident (ties: smaller\n"
     "    transient peak, then index). O((n + m) log n).\n",
     {},
     [](const memsched::dataflow_graph& g, const parsed_args&) { return memsched::greedy_order(g); }}};

}  // namespace
}  // namespace memsched_cli
