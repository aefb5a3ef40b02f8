# analyze: lifetimes, timeline, phases, detectors, reports. The stages form the static
# library vtanalysis (also linked by the analyzer tests); cmd_analyze.c is the subcommand.
add_library(vtanalysis STATIC
  ${CMAKE_CURRENT_LIST_DIR}/analysis.c
  ${CMAKE_CURRENT_LIST_DIR}/load.c
  ${CMAKE_CURRENT_LIST_DIR}/phase.c
  ${CMAKE_CURRENT_LIST_DIR}/lifetime.c
  ${CMAKE_CURRENT_LIST_DIR}/timeline.c
  ${CMAKE_CURRENT_LIST_DIR}/live_group.c
  ${CMAKE_CURRENT_LIST_DIR}/detect_leak.c
  ${CMAKE_CURRENT_LIST_DIR}/detect_retained.c
  ${CMAKE_CURRENT_LIST_DIR}/detect_spike.c
  ${CMAKE_CURRENT_LIST_DIR}/detect_transfer.c
  ${CMAKE_CURRENT_LIST_DIR}/detect_oom.c
  ${CMAKE_CURRENT_LIST_DIR}/writeback.c
  ${CMAKE_CURRENT_LIST_DIR}/report_text.c
  ${CMAKE_CURRENT_LIST_DIR}/report_json.c
  ${CMAKE_CURRENT_LIST_DIR}/report_markdown.c
  ${CMAKE_CURRENT_LIST_DIR}/report_html.c
  ${CMAKE_CURRENT_LIST_DIR}/trace_open.c)
target_include_directories(vtanalysis PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(vtanalysis PUBLIC vtcore vtimport m)
target_sources(vramtrace PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cmd_analyze.c)
target_link_libraries(vramtrace PRIVATE vtanalysis)
