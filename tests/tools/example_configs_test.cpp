// Every example config in configs/ must have its own CTest (tests/tools/CMakeLists.txt lists them
// by hand: the CMake rules forbid file(GLOB)); this test fails when one is missing from the list.
#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {

TEST_CASE("every configs/*.yaml has a CTest in tests/tools/CMakeLists.txt", "[configs]") {
  std::set<std::string> listed;
  std::istringstream names(SERVESIM_LISTED_CONFIGS);
  std::string name;
  while (std::getline(names, name, ',')) listed.insert(name);
  REQUIRE_FALSE(listed.empty());

  std::set<std::string> present;
  for (const auto& e : std::filesystem::directory_iterator(source_root() / "configs")) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") {
      present.insert(e.path().filename().string());
    }
  }
  for (const auto& f : present) {
    INFO("configs/" << f << " has no CTest: add it to SERVESIM_EXAMPLE_CONFIGS in "
                    << "tests/tools/CMakeLists.txt");
    CHECK(listed.count(f) == 1);
  }
  for (const auto& f : listed) {
    INFO("tests/tools/CMakeLists.txt lists configs/" << f << ", which does not exist");
    CHECK(present.count(f) == 1);
  }
}

}  // namespace servesim::test
