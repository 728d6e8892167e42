#include "tools/sweep/grid.hpp"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "sim/config/input_error.hpp"

using namespace servesim;
using namespace servesim::sweep;
using Strings = std::vector<std::string>;

namespace {
Strings values(const std::string& spec) { return expand_values(spec, "--vary k=" + spec); }
}  // namespace

TEST_CASE("a geometric range multiplies from A while it stays within B", "[sweep][grid]") {
  CHECK(values("256..8192:x2") == Strings{"256", "512", "1024", "2048", "4096", "8192"});
  CHECK(values("256..5000:x2") == Strings{"256", "512", "1024", "2048", "4096"});
  CHECK(values("8192..1024:x0.5") == Strings{"8192", "4096", "2048", "1024"});
  // Integer ends give integers, rounded to the nearest: sqrt(2) steps.
  CHECK(values("256..1024:x1.41421356") == Strings{"256", "362", "512", "724", "1024"});
  // Real ends keep 12 significant digits.
  CHECK(values("0.5..2.0:x2") == Strings{"0.5", "1", "2"});
}

TEST_CASE("an arithmetic range steps from A to B inclusive", "[sweep][grid]") {
  CHECK(values("1..8:+1") == Strings{"1", "2", "3", "4", "5", "6", "7", "8"});
  CHECK(values("10..120:+50") == Strings{"10", "60", "110"});
  CHECK(values("8..2:+-3") == Strings{"8", "5", "2"});
  // Float steps that do not land exactly on B still include it, without float noise.
  CHECK(values("0.1..0.5:+0.1") == Strings{"0.1", "0.2", "0.3", "0.4", "0.5"});
}

TEST_CASE("a list splits at commas outside brackets and quotes", "[sweep][grid]") {
  CHECK(values("vllm,sarathi, orca") == Strings{"vllm", "sarathi", "orca"});
  CHECK(values("{kind: rf, gpu: h200},{kind: analytical}") ==
        Strings{"{kind: rf, gpu: h200}", "{kind: analytical}"});
  CHECK(values("'a,b',[1, 2]") == Strings{"'a,b'", "[1, 2]"});
  CHECK(values("7") == Strings{"7"});
}

TEST_CASE("a values file gives one value per line and names its line in errors", "[sweep][grid]") {
  const auto path = std::filesystem::temp_directory_path() / "servesim_grid_values.txt";
  // Built by append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  const std::string spec = std::string("@").append(path.string());
  std::ofstream(path) << "# budgets\n256\n\n  1024  \n#2048\n";
  CHECK(values(spec) == Strings{"256", "1024"});
  std::ofstream(path) << "# nothing but comments\n";
  CHECK_THROWS_WITH(values(spec), Catch::Contains("holds no values"));
  CHECK_THROWS_WITH(values("@/no/such/file"), Catch::Contains("/no/such/file"));
}

TEST_CASE("bad value specs are errors that name the flag and what was expected", "[sweep][grid]") {
  CHECK_THROWS_WITH(values("1..8"),
                    Catch::Contains("--vary k=1..8") && Catch::Contains("expected A..B:xF"));
  CHECK_THROWS_WITH(values("1..8:*2"), Catch::Contains("expected A..B:xF"));
  CHECK_THROWS_WITH(values("a..8:+1"), Catch::Contains("expected A..B:xF"));
  CHECK_THROWS_WITH(values("8..1:+1"), Catch::Contains("expected a step < 0"));
  CHECK_THROWS_WITH(values("1..8:x0.5"), Catch::Contains("expected a factor > 1"));
  CHECK_THROWS_WITH(values("0..8:x2"), Catch::Contains("positive ends"));
  CHECK_THROWS_WITH(values("1..3:x1.1"), Catch::Contains("gives 1 twice"));
  CHECK_THROWS_WITH(values("1..1000000000:+1"), Catch::Contains("more than 100000 values"));
  CHECK_THROWS_WITH(values("1,,2"), Catch::Contains("an empty value"));
  CHECK_THROWS_WITH(values(""), Catch::Contains("no values"));
  CHECK_THROWS_WITH(parse_axis("=1,2"), Catch::Contains("expected KEY=VALUES"));
  CHECK_THROWS_WITH(parse_axis("scheduler.kind"), Catch::Contains("expected KEY=VALUES"));
}

TEST_CASE("several axes form their product with the last varying fastest", "[sweep][grid]") {
  const Grid g({"a=1,2", "b=x,y,z"}, false, 1, 42);
  REQUIRE(g.size() == 6);
  CHECK(g.values(0) == Strings{"1", "x"});
  CHECK(g.values(2) == Strings{"1", "z"});
  CHECK(g.values(3) == Strings{"2", "x"});
  CHECK(g.assignments(5) == Strings{"a=2", "b=z"});
  CHECK(g.describe(4) == "a=2, b=y");
  CHECK(g.seeds() == std::vector<std::uint64_t>{42});
  CHECK(g.find({"b=y", "a=2"}) == std::optional<std::size_t>(4));
  CHECK(g.find({"a=2.0", "b=y"}) == std::optional<std::size_t>(4));  // numbers compare by value
  CHECK_FALSE(g.find({"a=2"}));                                      // every axis named
  CHECK_FALSE(g.find({"a=3", "b=y"}));
  CHECK_FALSE(g.find({"a=1", "a=2", "b=y"}));
}

TEST_CASE("zipped axes pair element-wise and must have equal lengths", "[sweep][grid]") {
  const Grid g({"a=1,2,3", "b=10..30:+10"}, true, 1, 0);
  REQUIRE(g.size() == 3);
  CHECK(g.values(1) == Strings{"2", "20"});
  CHECK_THROWS_WITH(Grid({"a=1,2,3", "b=1,2"}, true, 1, 0),
                    Catch::Contains("--vary a has 3 values but --vary b has 2"));
  CHECK_THROWS_WITH(Grid({}, true, 1, 0), Catch::Contains("--zip: no --vary"));
}

TEST_CASE("seeds are replicates that count up from the base or are listed by a seed axis",
          "[sweep][grid]") {
  CHECK(Grid({"a=1,2"}, false, 3, 42).seeds() == std::vector<std::uint64_t>{42, 43, 44});
  const Grid listed({"seed=7,1,9", "a=1,2"}, false, 1, 42);
  CHECK(listed.size() == 2);  // seed is not an axis
  CHECK(listed.axes().size() == 1);
  CHECK(listed.seeds() == std::vector<std::uint64_t>{7, 1, 9});
  CHECK(Grid({}, false, 1, 5).size() == 1);  // no axes: the config itself
  CHECK_THROWS_WITH(Grid({"seed=1,2"}, false, 3, 0), Catch::Contains("both give the seeds"));
  CHECK_THROWS_WITH(Grid({"seed=1,1"}, false, 1, 0), Catch::Contains("seed 1 is given twice"));
  CHECK_THROWS_WITH(Grid({"seed=-1"}, false, 1, 0), Catch::Contains("not a whole number"));
  CHECK_THROWS_WITH(Grid({"a=1", "a=2"}, false, 1, 0), Catch::Contains("varied twice"));
}
