# Attribution core: call-site capture and dedup (stack.c), the CPython frame
# readers found at run time (pyframes.c through the C API with the GIL,
# pyframes_raw.c from CPython's structures without it), the interval index of live allocations
# (intervals.c). dladdr/dlsym need libdl (part of libc on current glibc); no
# build-time dependency on Python.
target_sources(vtcore PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/intervals.c
  ${CMAKE_CURRENT_LIST_DIR}/pyframes.c
  ${CMAKE_CURRENT_LIST_DIR}/pyframes_raw.c
  ${CMAKE_CURRENT_LIST_DIR}/stack.c
  ${CMAKE_CURRENT_LIST_DIR}/unwind.c)
target_link_libraries(vtcore PUBLIC ${CMAKE_DL_LIBS})
