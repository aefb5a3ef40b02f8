# Command-line tests of record and info (label cli): they run the built vramtrace command.
vt_add_test(NAME test_info SOURCES test_info.c LIBS vtutil vttrace LABELS cli)
add_dependencies(test_info vramtrace)
vt_add_test(NAME test_upgrade SOURCES test_upgrade.c LIBS vtutil vttrace LABELS cli)
add_dependencies(test_upgrade vramtrace)

vt_add_test(NAME test_record
  SOURCES test_record.c LIBS vtcli LABELS cli)
# The installed-tree test runs `cmake --install` on this build.
target_compile_definitions(test_record PRIVATE VT_CMAKE_COMMAND="${CMAKE_COMMAND}")
add_dependencies(test_record vramtrace)
if(TARGET vramtrace_inject)
  add_dependencies(test_record vramtrace_inject)
endif()

# The Debian package (cpack -G DEB) installed into a scratch root: the installed command runs
# and finds its tracer and Python hook (tests/package_test.sh; skipped without dpkg-deb).
add_test(NAME package_deb COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/package_test.sh ${PROJECT_BINARY_DIR}
  ${CMAKE_CPACK_COMMAND})
set_tests_properties(package_deb PROPERTIES LABELS cli SKIP_RETURN_CODE 77)
