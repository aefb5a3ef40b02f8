# Tests of `vramtrace sql` (views, read-only guard, formats), `vramtrace export --perfetto`
# and the SQL cookbook (every query in docs/queries.md with its stated result).
vt_add_test(NAME test_sql SOURCES test_sql.c LIBS vtcli LABELS analyzer cli)
vt_add_test(NAME test_export SOURCES test_export.c LIBS vttrace vtutil LABELS analyzer cli)
vt_add_test(NAME test_queries SOURCES test_queries.c LIBS vttrace LABELS analyzer cli)
foreach(t test_sql test_export test_queries)
  add_dependencies(${t} vramtrace)
endforeach()
