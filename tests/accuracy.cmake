# The accuracy suite (tests/accuracy, docs/accuracy.md): realistic PyTorch traces, healthy jobs and
# planted problems, written by accgen with their ground truth and scored against `vramtrace analyze`
# by score.py.
add_executable(accgen accuracy/accgen.c accuracy/scen.c accuracy/pt.c accuracy/jobsim.c tracegen.c)
target_include_directories(accgen PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/accuracy)
target_link_libraries(accgen PRIVATE vtcore)
target_compile_definitions(accgen PRIVATE VT_ACC_KERNELS="${CMAKE_CURRENT_SOURCE_DIR}/accuracy/kernels.tsv")
