# The core engine benchmark (see README.md). Included from tools/bench/CMakeLists.txt.
add_executable(bench_engine ${CMAKE_CURRENT_LIST_DIR}/bench_engine.cpp)
target_link_libraries(bench_engine PRIVATE servesim_tools servesim_warnings)
target_compile_definitions(bench_engine PRIVATE SERVESIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
