# Tests of `vramtrace sql` (views, read-only guard, formats), `vramtrace export --perfetto`
# and the SQL cookbook (every query in docs/queries.md with its stated result).
set(VT_SQL_SOURCES ${PROJECT_SOURCE_DIR}/analyzer/sql_views.c
  ${PROJECT_SOURCE_DIR}/analyzer/sql_output.c ${PROJECT_SOURCE_DIR}/analyzer/trace_open.c)
vt_add_test(NAME test_sql SOURCES test_sql.c ${VT_SQL_SOURCES} LIBS vtcore vtimport m LABELS analyzer cli)
vt_add_test(NAME test_export SOURCES test_export.c LIBS vtcore LABELS analyzer cli)
vt_add_test(NAME test_queries SOURCES test_queries.c LIBS vtcore LABELS analyzer cli)
foreach(t test_sql test_export test_queries)
  target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/analyzer)
  add_dependencies(${t} vramtrace)
endforeach()
