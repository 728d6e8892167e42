// The prefix-caching switch is a common scheduler key (it once was read but not listed, so every
// section rejected it); orca, which has no prefix cache, refuses it rather than ignore it.

#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "schedulers/registry.hpp"

using namespace servesim;

TEST_CASE("enable_prefix_caching is accepted by every scheduler with a prefix cache",
          "[schedulers][registry]") {
  for (const std::string& kind : replica_scheduler_kinds()) {
    INFO("kind " << kind);
    const ConfigNode node =
        ConfigNode::parse(fmt::format("kind: {}\nenable_prefix_caching: true\n", kind), "t.yaml");
    const SchedulerOptions o = parse_scheduler_options(node);
    CHECK(o.enable_prefix_caching);
    if (!scheduler_capabilities(node, o).prefix_caching) {
      // Orca reserves whole lives at admission and never looks a prefix up: refused, not ignored.
      CHECK_THROWS_WITH(make_replica_scheduler(node, o),
                        Catch::Contains("t.yaml:2:24: enable_prefix_caching: orca reserves each "
                                        "request's whole KV"));
    } else {
      CHECK_NOTHROW(make_replica_scheduler(node, o));
    }
  }
}
