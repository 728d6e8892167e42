// Every example config in configs/ and every experiment config in configs/experiments/ must have
// its own CTest (tests/tools/CMakeLists.txt lists them by hand: the CMake rules forbid
// file(GLOB)); this test fails when one is missing from its list.
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace {

void check_listed(const std::string& folder, const std::string& list, const char* variable) {
  std::set<std::string> listed;
  std::istringstream names(list);
  std::string name;
  while (std::getline(names, name, ',')) listed.insert(name);
  REQUIRE_FALSE(listed.empty());

  std::set<std::string> present;
  for (const auto& e : std::filesystem::directory_iterator(source_root() / folder)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") {
      present.insert(e.path().filename().string());
    }
  }
  for (const auto& f : present) {
    INFO(folder << "/" << f << " has no CTest: add it to " << variable
                << " in tests/tools/CMakeLists.txt");
    CHECK(listed.count(f) == 1);
  }
  for (const auto& f : listed) {
    INFO("tests/tools/CMakeLists.txt lists " << folder << "/" << f << ", which does not exist");
    CHECK(present.count(f) == 1);
  }
}

}  // namespace

TEST_CASE("every configs/*.yaml has a CTest in tests/tools/CMakeLists.txt", "[configs]") {
  check_listed("configs", SERVESIM_LISTED_CONFIGS, "SERVESIM_EXAMPLE_CONFIGS");
}

TEST_CASE("every configs/experiments/*.yaml has a CTest in tests/tools/CMakeLists.txt",
          "[configs]") {
  check_listed("configs/experiments", SERVESIM_LISTED_EXPERIMENTS, "SERVESIM_EXPERIMENT_CONFIGS");
}

}  // namespace servesim::test
