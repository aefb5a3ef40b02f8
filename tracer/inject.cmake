# The CUPTI glue: session/config/outfile/procinfo and the decoding of API callbacks
# (apicall.c) and kernel parameters (kparams.c) go into vtcore (testable without
# CUPTI); inject.c becomes libvramtrace.so (target vramtrace_inject), which exports
# only InitializeInjection, hides its private static SQLite, needs libcupti by
# soname (so a copy already loaded in the process is reused) and never libcudart.
target_sources(vtcore PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/apicall.c
  ${CMAKE_CURRENT_LIST_DIR}/config.c
  ${CMAKE_CURRENT_LIST_DIR}/kparams.c
  ${CMAKE_CURRENT_LIST_DIR}/outfile.c
  ${CMAKE_CURRENT_LIST_DIR}/procinfo.c
  ${CMAKE_CURRENT_LIST_DIR}/session.c)

add_library(vramtrace_inject SHARED ${CMAKE_CURRENT_LIST_DIR}/inject.c)
set_target_properties(vramtrace_inject PROPERTIES
  OUTPUT_NAME vramtrace
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
  C_VISIBILITY_PRESET hidden
  LINK_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/exports.map
  SKIP_BUILD_RPATH ON
  BUILD_WITH_INSTALL_RPATH ON
  INSTALL_RPATH "$ORIGIN;${CUDAToolkit_LIBRARY_DIR}")
target_include_directories(vramtrace_inject PRIVATE ${CMAKE_CURRENT_LIST_DIR})
# libcupti.so is a link to libcupti.so.13, whose SONAME becomes our DT_NEEDED entry;
# tests/glue.cmake checks that, and that libcudart is not needed.
target_link_libraries(vramtrace_inject PRIVATE vtcore CUDA::cupti Threads::Threads ${CMAKE_DL_LIBS})
target_link_options(vramtrace_inject PRIVATE
  -Wl,--exclude-libs,ALL
  -Wl,--version-script=${CMAKE_CURRENT_LIST_DIR}/exports.map
  -Wl,--enable-new-dtags)
install(TARGETS vramtrace_inject LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
