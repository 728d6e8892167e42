# Random-Forest baseline (Vidur's per-operation forests), trained in-process with XGBoost.
# Debian 12's xgboost-config.cmake fails unless the `xgboost` CLI package is also installed (its
# targets file checks /usr/bin/xgboost), so the library is found directly and wrapped in the
# target name the config file would give.
if(NOT TARGET xgboost::xgboost)
  find_library(SERVESIM_XGBOOST_LIBRARY NAMES xgboost REQUIRED)
  find_path(SERVESIM_XGBOOST_INCLUDE_DIR NAMES xgboost/c_api.h REQUIRED)
  add_library(xgboost::xgboost UNKNOWN IMPORTED)
  set_target_properties(xgboost::xgboost PROPERTIES
    IMPORTED_LOCATION "${SERVESIM_XGBOOST_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${SERVESIM_XGBOOST_INCLUDE_DIR}")
endif()
target_sources(servesim_costmodels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/forest.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rf_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rf_cost_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rf_profile_set.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rf_tables.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec_scaler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/step_function.cpp
)
target_link_libraries(servesim_costmodels PRIVATE xgboost::xgboost hdf5::hdf5_cpp hdf5::hdf5)
