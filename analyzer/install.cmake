# record and info: helper sources, where record looks for libcupti, and the man page.
target_sources(vramtrace PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/record_env.c
  ${CMAKE_CURRENT_LIST_DIR}/record_find.c)

# libcupti of the toolkit this was built against: record points NVTX_INJECTION64_PATH at it
# unless VRAMTRACE_CUPTI says otherwise.
get_filename_component(VT_CUPTI_DIR "${CUDA_cupti_LIBRARY}" DIRECTORY)
target_compile_definitions(vramtrace PRIVATE
  VT_CUPTI_DIR="${VT_CUPTI_DIR}"
  VT_TOOLKIT_LIBDIR="${CUDAToolkit_LIBRARY_DIR}"
  VT_CUPTI_SONAME="libcupti.so.${CUDAToolkit_VERSION_MAJOR}"
  VT_INSTALL_LIBDIR="${CMAKE_INSTALL_LIBDIR}")
target_link_libraries(vramtrace PRIVATE ${CMAKE_DL_LIBS})

install(FILES ${PROJECT_SOURCE_DIR}/docs/vramtrace.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
