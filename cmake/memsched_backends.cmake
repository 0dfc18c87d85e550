# Optional solver backends. Each backend is an INTERFACE target (memsched_<name>, alias
# memsched::<name>) that links memsched::memsched and the solver library; it exists only when
# MEMSCHED_WITH_<NAME> is ON and the library is found:
#   memsched::cbc     CBC + Clp (Debian: coinor-libcbc-dev), include <memsched/solver/backends/cbc.hpp>
#   memsched::glpk    GLPK (libglpk-dev, GPL-3+: opt-in by linking), <memsched/solver/backends/glpk.hpp>
#   memsched::gecode  Gecode (libgecode-dev), the CP backend
# memsched_link_available_backends(<target>) links every backend that was built and defines
# MEMSCHED_HAVE_CBC / MEMSCHED_HAVE_GLPK / MEMSCHED_HAVE_GECODE on <target>.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/memsched_solver_libraries.cmake)

set(MEMSCHED_BACKENDS "")
set(memsched_backend_summary "")
foreach(backend IN ITEMS cbc glpk gecode)
  string(TOUPPER ${backend} BACKEND)
  if(NOT MEMSCHED_WITH_${BACKEND})
    list(APPEND memsched_backend_summary "${backend}: off")
    continue()
  endif()
  memsched_find_solver_library(${backend} found GLOBAL)
  if(NOT found)
    list(APPEND memsched_backend_summary "${backend}: not found")
    continue()
  endif()
  add_library(memsched_${backend} INTERFACE)
  add_library(memsched::${backend} ALIAS memsched_${backend})
  set_target_properties(memsched_${backend} PROPERTIES EXPORT_NAME ${backend})
  target_link_libraries(memsched_${backend} INTERFACE memsched::memsched memsched_ext::${backend})
  target_compile_definitions(memsched_${backend} INTERFACE MEMSCHED_HAVE_${BACKEND})
  list(APPEND MEMSCHED_BACKENDS ${backend})
  if(backend STREQUAL "cbc" AND MEMSCHED_CBC_VERSION)
    list(APPEND memsched_backend_summary "${backend}: yes (${MEMSCHED_CBC_VERSION})")
  else()
    list(APPEND memsched_backend_summary "${backend}: yes")
  endif()
endforeach()
list(JOIN memsched_backend_summary ", " memsched_backend_summary)
message(STATUS "memsched solver backends: ${memsched_backend_summary}")
unset(memsched_backend_summary)

# Links every backend target that was built into `target` (PRIVATE); each brings its
# MEMSCHED_HAVE_<NAME> compile definition.
function(memsched_link_available_backends target)
  foreach(backend IN LISTS MEMSCHED_BACKENDS)
    target_link_libraries(${target} PRIVATE memsched::${backend})
  endforeach()
endfunction()

if(MEMSCHED_INSTALL)
  include(GNUInstallDirs)
  foreach(backend IN LISTS MEMSCHED_BACKENDS)
    install(TARGETS memsched_${backend} EXPORT memsched_${backend}_targets)
    install(EXPORT memsched_${backend}_targets NAMESPACE memsched::
            FILE memsched_${backend}_targets.cmake
            DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/memsched)
  endforeach()
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/memsched_solver_libraries.cmake
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/memsched)
endif()
