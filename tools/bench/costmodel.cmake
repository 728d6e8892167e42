# bench_costmodel: ns per CostModel::step() (not in CTest). Included from tools/bench/CMakeLists.txt.
add_executable(bench_costmodel ${CMAKE_CURRENT_LIST_DIR}/bench_costmodel.cpp)
target_link_libraries(bench_costmodel PRIVATE servesim_tools servesim_warnings)
target_compile_definitions(bench_costmodel PRIVATE SERVESIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
