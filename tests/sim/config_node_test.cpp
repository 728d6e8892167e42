#include "sim/config/config_node.hpp"

#include <catch2/catch.hpp>

#include "sim/config/input_error.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using servesim::ConfigNode;
using servesim::InputError;

TEST_CASE("Config values convert strictly and errors name file, line and column", "[config]") {
  const auto root = ConfigNode::parse("a:\n  n: 12\n  x: 1.5\n  s: hello\n  bad: abc\n", "t.yaml");
  const auto a = root.at("a");
  CHECK(a.get_int("n") == 12);
  CHECK(a.get_double("x") == 1.5);
  CHECK(a.get_string("s") == "hello");
  CHECK(a.get_int("missing", 7) == 7);
  CHECK_THROWS_WITH(a.get_double("bad"),
                    Contains("t.yaml:5:8: a.bad: expected a number, got 'abc'"));
  CHECK_THROWS_WITH(a.get_int("x"), Contains("expected an integer, got '1.5'"));
  CHECK_THROWS_WITH(a.at("nope"), Contains("t.yaml:2:3: a: missing key 'nope'"));
}

TEST_CASE("Unknown keys are errors that list the known keys", "[config]") {
  const auto root = ConfigNode::parse("kind: x\nchunk_sise: 3\n", "s.yaml");
  CHECK_THROWS_AS(root.check_keys({"kind", "chunk_size"}), InputError);
  CHECK_THROWS_WITH(
      root.check_keys({"kind", "chunk_size"}),
      Contains("s.yaml:2:1: unknown key 'chunk_sise' (did you mean 'chunk_size'? known: "
               "chunk_size, kind)"));
  CHECK_NOTHROW(root.check_keys({"kind", "chunk_sise"}));
}

TEST_CASE("Range checks say what was expected", "[config]") {
  const auto root =
      ConfigNode::parse("qps: -1\nfrac: 1.5\nn: 0\nbig: 4294967297\nempty:\n", "r.yaml");
  CHECK_THROWS_WITH(root.get_positive("qps"), Contains("qps: expected a positive number, got -1"));
  CHECK_THROWS_WITH(root.get_fraction("frac", 0), Contains("expected a number in [0, 1]"));
  CHECK_THROWS_WITH(root.get_positive_int("n"),
                    Contains("expected a positive integer ≤ 2147483647, got 0"));
  // A count that does not fit 32 bits is refused, not wrapped (2^32 + 1 would run as 1).
  CHECK_THROWS_WITH(root.get_positive_int("big", 7),
                    Contains("r.yaml:4:6: big: expected a positive integer ≤ 2147483647"));
  // A key written without a value is an error, not the default.
  CHECK(root.has("empty"));
  CHECK_THROWS_WITH(root.get_positive_int("empty", 512),
                    Contains("r.yaml:5:") && Contains("empty"));
  CHECK_THROWS_AS(root.get_double("empty", 1.0), InputError);
}

TEST_CASE("Overrides given with --set edit nested keys and errors name the flag", "[config]") {
  auto root = ConfigNode::parse("scheduler:\n  kind: sarathi\n  chunk_size: 512\n", "c.yaml");
  root.apply_override("scheduler.chunk_size=1024");
  root.apply_override("workload.arrival.qps=8.5");
  CHECK(root.at("scheduler").get_int("chunk_size") == 1024);
  CHECK(root.at("workload").at("arrival").get_double("qps") == 8.5);
  root.apply_override("workload.arrival.qps=-2");
  CHECK_THROWS_WITH(root.at("workload").at("arrival").get_positive("qps"),
                    Contains("--set workload.arrival.qps=-2: workload.arrival.qps: expected a "
                             "positive number"));
  CHECK_THROWS_AS(root.apply_override("novalue"), InputError);
  CHECK_THROWS_WITH(root.apply_override("scheduler.kind.x=1"),
                    Contains("is a value, not a section"));
  // A section the --set itself created (scheduler.foo) is blamed on that flag, not on the file.
  root.apply_override("scheduler.foo.bar=5");
  CHECK_THROWS_WITH(root.at("scheduler").check_keys({"kind", "chunk_size"}),
                    StartsWith("--set scheduler.foo.bar=5: unknown key 'foo' in scheduler"));
}

TEST_CASE("YAML syntax errors carry the position", "[config]") {
  CHECK_THROWS_WITH(ConfigNode::parse("a: [1, 2\nb: 3\n", "y.yaml"), Contains("y.yaml:"));
}

TEST_CASE("A second YAML document is an error, not silently dropped", "[config]") {
  CHECK_THROWS_WITH(
      ConfigNode::parse("seed: 1\n---\nseed: 7\n", "two.yaml"),
      Contains("two.yaml:3:1: a second YAML document (expected one document per file)"));
  // A leading document marker alone is still one document.
  CHECK(ConfigNode::parse("---\nseed: 1\n", "one.yaml").get_int("seed", 0) == 1);
  CHECK(ConfigNode::parse("", "empty.yaml").size() == 0);
  // A trailing marker, or one followed only by a comment, starts an empty document: nothing lost.
  CHECK(ConfigNode::parse("seed: 1\n---\n", "trail.yaml").get_int("seed", 0) == 1);
  CHECK(ConfigNode::parse("seed: 1\n---\n# nothing\n", "trail.yaml").get_int("seed", 0) == 1);
}
