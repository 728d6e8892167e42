# The sweep benchmark (thread scaling, memory; see README.md). Included from tools/bench/CMakeLists.txt.
add_executable(bench_sweep ${CMAKE_CURRENT_LIST_DIR}/bench_sweep.cpp)
target_link_libraries(bench_sweep PRIVATE servesim_sweep servesim_warnings)
target_compile_definitions(bench_sweep PRIVATE SERVESIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                           SERVESIM_SWEEP_BIN="$<TARGET_FILE:sweep>")
add_dependencies(bench_sweep sweep)
