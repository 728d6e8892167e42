// The source the test suite's precompiled header (catch.hpp) is built with; see CMakeLists.txt.
