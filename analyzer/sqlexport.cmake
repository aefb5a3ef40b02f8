# sql and export helpers: read-only multi-trace connections, Nsight views, result printing.
target_sources(vramtrace PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/sql_views.c
  ${CMAKE_CURRENT_LIST_DIR}/sql_output.c)
target_sources(vramtrace PRIVATE ${CMAKE_CURRENT_LIST_DIR}/export_perfetto.c)
