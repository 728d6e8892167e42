#include "sim/config/autoscaling_config.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "sim/config/run_config.hpp"

namespace servesim {
namespace {

// The longest time a key may give: longer ones are no autoscaler (and near the ns horizon).
constexpr double kMaxSeconds = 1e6;

SimTime seconds_key(const ConfigNode& n, std::string_view key, double fallback, bool positive) {
  const double s = positive ? n.get_positive(key, fallback) : n.get_nonnegative(key, fallback);
  if (s > kMaxSeconds)
    n.at(key).fail(fmt::format("expected at most {:.0e} s, got {}", kMaxSeconds, s));
  return seconds_to_sim(s);
}

int replicas_key(const ConfigNode& n, std::string_view key, std::int64_t fallback) {
  const std::int64_t v = n.get_positive_int(key, fallback);
  if (v > kMaxReplicas) {
    n.at(key).fail(fmt::format("expected at most {} replicas, got {}", kMaxReplicas, v));
  }
  return static_cast<int>(v);
}

}  // namespace

const char* autoscale_metric_name(AutoscaleMetric m) {
  switch (m) {
    case AutoscaleMetric::kQueue:
      return "queue_per_replica";
    case AutoscaleMetric::kOutstanding:
      return "outstanding_per_replica";
    case AutoscaleMetric::kKvUse:
      return "kv_use";
    case AutoscaleMetric::kSloMiss:
      return "slo_miss";
  }
  return "queue_per_replica";
}

AutoscalingConfig AutoscalingConfig::parse(const ConfigNode& node) {
  node.require_map("the autoscaling section {metric, target, min_replicas, max_replicas, …}");
  node.check_keys({"metric", "target", "interval_s", "window_s", "min_replicas", "max_replicas",
                   "initial_replicas", "tolerance", "scale_down_stabilization_s",
                   "storage_gb_per_s", "engine_start_s", "provisioning_delay_s", "prices"});
  AutoscalingConfig c;
  c.node = node;
  const ConfigNode metric = node.at("metric");
  const std::string m = metric.as_string();
  if (m == "queue_per_replica") {
    c.metric = AutoscaleMetric::kQueue;
  } else if (m == "outstanding_per_replica") {
    c.metric = AutoscaleMetric::kOutstanding;
  } else if (m == "kv_use") {
    c.metric = AutoscaleMetric::kKvUse;
  } else if (m == "slo_miss") {
    c.metric = AutoscaleMetric::kSloMiss;
  } else {
    metric.fail(
        fmt::format("unknown autoscaling metric '{}' (known: kv_use, outstanding_per_replica, "
                    "queue_per_replica, slo_miss)",
                    m));
  }
  const bool count =
      c.metric == AutoscaleMetric::kQueue || c.metric == AutoscaleMetric::kOutstanding;
  c.target = count ? node.get_positive("target") : node.get_positive_fraction("target", 0);
  if (c.target <= 0) node.at("target").fail("expected a share in (0, 1]");
  c.interval = seconds_key(node, "interval_s", 15.0, true);
  c.window = seconds_key(node, "window_s", sim_to_s(c.interval), true);
  if (c.window < c.interval) {
    node.at("window_s")
        .fail(fmt::format("expected at least interval_s ({} s), got {} s", sim_to_s(c.interval),
                          sim_to_s(c.window)));
  }
  c.min_replicas = replicas_key(node, "min_replicas", 1);
  c.max_replicas = replicas_key(node, "max_replicas", 0);
  if (c.max_replicas < c.min_replicas) {
    node.at("max_replicas")
        .fail(fmt::format("expected at least min_replicas ({}), got {}", c.min_replicas,
                          c.max_replicas));
  }
  c.initial_replicas = replicas_key(node, "initial_replicas", c.min_replicas);
  if (c.initial_replicas < c.min_replicas || c.initial_replicas > c.max_replicas) {
    node.at("initial_replicas")
        .fail(fmt::format("expected {} to {} (min_replicas to max_replicas), got {}",
                          c.min_replicas, c.max_replicas, c.initial_replicas));
  }
  c.tolerance = node.get_fraction("tolerance", 0.1);
  if (c.tolerance >= 1) node.at("tolerance").fail("expected a share in [0, 1)");
  c.scale_down_stabilization = seconds_key(node, "scale_down_stabilization_s", 300.0, false);
  c.storage_gb_per_s = node.get_positive("storage_gb_per_s", 2.0);
  if (c.storage_gb_per_s > 1e6) node.at("storage_gb_per_s").fail("expected at most 1e6 GB/s");
  c.engine_start = seconds_key(node, "engine_start_s", 30.0, false);
  if (node.has("provisioning_delay_s")) {
    c.provisioning_delay = seconds_key(node, "provisioning_delay_s", 0, false);
  }
  if (auto p = node.find("prices")) {
    std::filesystem::path path(p->as_string());
    if (path.is_relative()) path = std::filesystem::path(p->base_dir()) / path;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      p->fail(
          fmt::format("no such file '{}' (expected a price file like "
                      "configs/prices/on-demand.yaml)",
                      path.string()));
    }
    c.prices_file = path.string();
  }
  return c;
}

}  // namespace servesim
