#pragma once
// memsched/graph.hpp, the graph model: concepts, node maps and roles, the ready-made graph types,
// JSON I/O, generators and rewrites. Includes every public header of memsched/graph/ (the ctest
// area_headers checks that none is missing) except the GraphML and DOT readers and read_graph.hpp /
// write_graph.hpp, which dispatch to them: Boost.PropertyTree's XML parser and Boost.Spirit cost ~3 s in every
// translation unit that includes them, so only the code that reads such files should.

#include <memsched/graph/concepts.hpp>
#include <memsched/graph/darts.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/gpt.hpp>
#include <memsched/graph/identity_rewrite.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/graph/node_maps.hpp>
#include <memsched/graph/node_role.hpp>
#include <memsched/graph/random_layered.hpp>
#include <memsched/graph/randwire.hpp>
