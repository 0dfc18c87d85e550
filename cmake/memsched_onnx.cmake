# Optional ONNX reader (include/memsched/graph/onnx_io.hpp). The INTERFACE target memsched_onnx
# (alias memsched::onnx) links memsched::memsched, ONNX and protobuf and defines MEMSCHED_HAVE_ONNX;
# it exists only when MEMSCHED_WITH_ONNX is ON and both are found (Debian: libonnx-dev and
# libprotobuf-dev; scripts/setup.sh installs them). The tool links it when it exists, so that every
# subcommand reads .onnx files; tests that need it are registered as skipped (exit 77) otherwise.
# Not installed or exported: a consumer that wants the reader links ONNX itself.
include_guard(GLOBAL)
option(MEMSCHED_WITH_ONNX "Build the ONNX reader target memsched::onnx when libonnx-dev is found" ON)
set(MEMSCHED_HAVE_ONNX OFF)
if(MEMSCHED_WITH_ONNX)
  # ONNX's config file links protobuf::libprotobuf without looking for it: find protobuf first.
  find_package(Protobuf QUIET)
  if(Protobuf_FOUND AND TARGET protobuf::libprotobuf)
    find_package(ONNX CONFIG QUIET)
  endif()
  if(ONNX_FOUND AND TARGET onnx AND TARGET onnx_proto)
    add_library(memsched_onnx INTERFACE)
    add_library(memsched::onnx ALIAS memsched_onnx)
    target_link_libraries(memsched_onnx INTERFACE memsched::memsched onnx onnx_proto protobuf::libprotobuf)
    target_compile_definitions(memsched_onnx INTERFACE MEMSCHED_HAVE_ONNX)
    set(MEMSCHED_HAVE_ONNX ON)
    message(STATUS "memsched ONNX reader: yes (ONNX ${ONNX_VERSION}, protobuf ${Protobuf_VERSION})")
  elseif(NOT Protobuf_FOUND)
    message(STATUS "memsched ONNX reader: no (protobuf not found: libprotobuf-dev)")
  else()
    message(STATUS "memsched ONNX reader: no (ONNX not found: libonnx-dev)")
  endif()
else()
  message(STATUS "memsched ONNX reader: off")
endif()
