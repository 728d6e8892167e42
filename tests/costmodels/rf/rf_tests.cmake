# Tests of the Random-Forest baseline (costmodels/rf).
servesim_add_test(costmodels_rf_test
  SOURCES rf/forest_test.cpp rf/spec_scaler_test.cpp rf/rf_cache_test.cpp
          rf/rf_cost_model_test.cpp rf/rf_profile_test.cpp
  LIBS servesim::costmodels)
