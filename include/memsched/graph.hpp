#pragma once
// memsched/graph.hpp, the graph model: concepts, node maps and roles, the ready-made graph types,
// file I/O, generators and rewrites. Includes every public header of memsched/graph/ (the ctest
// area_headers checks that none is missing).

#include <memsched/graph/concepts.hpp>
#include <memsched/graph/darts.hpp>
#include <memsched/graph/dataflow_graph.hpp>
#include <memsched/graph/dot_io.hpp>
#include <memsched/graph/graphml_io.hpp>
#include <memsched/graph/identity_rewrite.hpp>
#include <memsched/graph/json_io.hpp>
#include <memsched/graph/memory_graph.hpp>
#include <memsched/graph/node_maps.hpp>
#include <memsched/graph/node_role.hpp>
#include <memsched/graph/random_layered.hpp>
#include <memsched/graph/randwire.hpp>
#include <memsched/graph/read_graph.hpp>
