// The prefix-caching switch is a common scheduler key (it once was read but not listed, so every
// section rejected it).

#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "schedulers/registry.hpp"

using namespace servesim;

TEST_CASE("enable_prefix_caching is accepted in every scheduler section",
          "[schedulers][registry]") {
  for (const std::string& kind : replica_scheduler_kinds()) {
    INFO("kind " << kind);
    const ConfigNode node =
        ConfigNode::parse(fmt::format("kind: {}\nenable_prefix_caching: true\n", kind), "t.yaml");
    const SchedulerOptions o = parse_scheduler_options(node);
    CHECK(o.enable_prefix_caching);
    CHECK_NOTHROW(make_replica_scheduler(node, o));
  }
}
