# Tracer core: CUPTI record decoding, string interning, bounded maps, host-record ring, SQLite writer.
target_sources(vtcore PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/boundmap.c
  ${CMAKE_CURRENT_LIST_DIR}/strintern.c
  ${CMAKE_CURRENT_LIST_DIR}/ring.c
  ${CMAKE_CURRENT_LIST_DIR}/decode.c
  ${CMAKE_CURRENT_LIST_DIR}/writer.c)
