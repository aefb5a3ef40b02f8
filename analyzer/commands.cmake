# record, info, sql, export.
target_sources(vramtrace PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cmd_record.c
  ${CMAKE_CURRENT_LIST_DIR}/cmd_info.c
  ${CMAKE_CURRENT_LIST_DIR}/cmd_sql.c
  ${CMAKE_CURRENT_LIST_DIR}/cmd_export.c)
