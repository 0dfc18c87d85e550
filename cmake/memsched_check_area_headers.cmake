# cmake -DMEMSCHED_INCLUDE_DIR=<include> -P memsched_check_area_headers.cmake
# Checks that each per-area header (memsched/graph.hpp, sim.hpp, order.hpp, remat.hpp, solver.hpp)
# includes every public header of its area (memsched/<area>/*.hpp; detail/ and solver/backends/
# excluded), and that the umbrella memsched/memsched.hpp includes every area header. Run by ctest.
# Headers left out on purpose (a heavy dependency; include them directly): the GraphML and DOT
# readers, read_graph.hpp and write_graph.hpp (Boost.PropertyTree XML, Boost.Spirit), the ONNX reader (needs libonnx),
# and solver/backends/.
if(NOT MEMSCHED_INCLUDE_DIR)
  message(FATAL_ERROR "set MEMSCHED_INCLUDE_DIR")
endif()
set(missing "")
foreach(area IN ITEMS graph sim order remat solver)
  set(area_header ${MEMSCHED_INCLUDE_DIR}/memsched/${area}.hpp)
  if(NOT EXISTS ${area_header})
    list(APPEND missing "memsched/${area}.hpp does not exist")
    continue()
  endif()
  file(READ ${area_header} text)
  file(GLOB headers RELATIVE ${MEMSCHED_INCLUDE_DIR} ${MEMSCHED_INCLUDE_DIR}/memsched/${area}/*.hpp)
  list(REMOVE_ITEM headers memsched/graph/dot_io.hpp memsched/graph/graphml_io.hpp memsched/graph/read_graph.hpp
                          memsched/graph/write_graph.hpp memsched/graph/onnx_io.hpp)
  foreach(h IN LISTS headers)
    string(FIND "${text}" "#include <${h}>" at)
    if(at EQUAL -1)
      list(APPEND missing "memsched/${area}.hpp lacks #include <${h}>")
    endif()
  endforeach()
  file(READ ${MEMSCHED_INCLUDE_DIR}/memsched/memsched.hpp umbrella)
  string(FIND "${umbrella}" "#include <memsched/${area}.hpp>" at)
  if(at EQUAL -1)
    list(APPEND missing "memsched/memsched.hpp lacks #include <memsched/${area}.hpp>")
  endif()
endforeach()
if(missing)
  list(JOIN missing "\n  " text)
  message(FATAL_ERROR "per-area headers out of date:\n  ${text}")
endif()
message(STATUS "per-area headers include every public header of their area")
