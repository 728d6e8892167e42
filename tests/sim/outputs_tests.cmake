# Tests of the output building blocks of sim/ (quantile sketch, HDF5/CSV records, Chrome trace).
# Included from tests/sim/CMakeLists.txt.
servesim_add_test(sim_outputs_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/quantile_sketch_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/hdf5_record_writer_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/chrome_trace_writer_test.cpp
  LIBS servesim::sim hdf5::hdf5_cpp hdf5::hdf5 nlohmann_json::nlohmann_json)
