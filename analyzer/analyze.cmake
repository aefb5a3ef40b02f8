# analyze: lifetimes, timeline, phases, detectors, reports.
target_sources(vramtrace PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cmd_analyze.c)
