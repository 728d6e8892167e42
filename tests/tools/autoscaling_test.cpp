// Autoscaling end to end: `simulate` with an `autoscaling:` section and a diurnal workload, its
// summary series and totals, the provisioning delay it derives, determinism, and bad inputs.
#include <catch2/catch.hpp>

#include "tests/tools/bad_input.hpp"
#include "tests/tools/run_ok.hpp"
#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace {

constexpr const char* kAutoscaling = "tests/tools/configs/autoscaling.yaml";

nlohmann::json autoscaled(const std::string& name, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{kAutoscaling};
  args.insert(args.end(), extra.begin(), extra.end());
  return read_json(run_ok(name, args) / "summary.json");
}

double sum(const nlohmann::json& column) {
  double s = 0;
  for (const auto& v : column) s += v.get<double>();
  return s;
}

}  // namespace

TEST_CASE("An autoscaled run reports replicas and dollars per interval that sum to its totals",
          "[autoscaling]") {
  const auto s = autoscaled("autoscale_series");
  REQUIRE(s.contains("autoscaling"));
  const auto& a = s["autoscaling"];
  const auto& series = a["series"];
  const std::size_t n = series["time_s"].size();
  REQUIRE(n > 10);
  for (const auto& [key, column] : series.items()) CHECK(column.size() == n);
  CHECK(s["requests"]["finished"] == s["requests"]["arrived"]);
  int highest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int current = series["active"][i].get<int>() + series["provisioning"][i].get<int>();
    CHECK(current >= 1);
    CHECK(current <= 6);
    highest = std::max(highest, current);
  }
  CHECK(highest > 2);  // the peak needs more than the initial replicas
  const auto& t = a["totals"];
  CHECK(sum(series["replica_hours"]) == Approx(t["replica_hours"].get<double>()).epsilon(1e-12));
  CHECK(series["cumulative_usd"].back().get<double>() ==
        Approx(t["usd"].get<double>()).epsilon(1e-12));
  CHECK(sum(series["output_tokens"]) == s["requests"]["output_tokens"].get<double>());
  // One H100 per replica at the price file's rate.
  CHECK(t["usd"].get<double>() ==
        Approx(t["replica_hours"].get<double>() * a["price"]["usd_per_gpu_hour"].get<double>()));
  CHECK(t["usd_per_million_output_tokens"].get<double>() ==
        Approx(t["usd"].get<double>() / s["requests"]["output_tokens"].get<double>() * 1e6));
  CHECK(t["mean_replicas"].get<double>() < t["peak_replicas"].get<double>());
}

TEST_CASE("The provisioning delay is the weights over the storage rate plus the engine start",
          "[autoscaling]") {
  const auto slow = autoscaled("autoscale_slow", {"--set", "autoscaling.storage_gb_per_s=1"});
  const auto fast = autoscaled("autoscale_fast", {"--set", "autoscaling.storage_gb_per_s=4"});
  const double load_slow = slow["autoscaling"]["provisioning_delay_s"].get<double>() - 30;
  const double load_fast = fast["autoscaling"]["provisioning_delay_s"].get<double>() - 30;
  CHECK(load_slow == Approx(4 * load_fast));
  CHECK(load_slow > 15);  // Llama-3.1-8B: 8 B parameters of 2 bytes at 1 GB/s
  CHECK(load_slow < 17);
  const auto fixed = autoscaled("autoscale_fixed", {"--set", "autoscaling.provisioning_delay_s=5"});
  CHECK(fixed["autoscaling"]["provisioning_delay_s"].get<double>() == 5.0);
  // A slower start costs SLO attainment or replicas: the runs differ.
  CHECK(fixed["latency_ms"].dump() != slow["latency_ms"].dump());
}

TEST_CASE("An autoscaled run is deterministic for its seed", "[autoscaling]") {
  const auto a = autoscaled("autoscale_det_a");
  const auto b = autoscaled("autoscale_det_b");
  CHECK(a["autoscaling"].dump() == b["autoscaling"].dump());
  CHECK(a["latency_ms"].dump() == b["latency_ms"].dump());
}

TEST_CASE("Bad autoscaling keys name their file, line and column", "[autoscaling][errors]") {
  const std::string at = std::string(kAutoscaling) + ":";
  const auto bad = [&](const std::string& name, const std::string& set) {
    return bad_input_message("autoscale_" + name, {kAutoscaling, "--set", set});
  };
  CHECK_THAT(bad("metric", "autoscaling.metric=qps"),
             Catch::Contains("unknown autoscaling metric 'qps'") &&
                 Catch::Contains("outstanding_per_replica"));
  CHECK_THAT(bad("target", "autoscaling.target=0"), Catch::Contains("autoscaling.target"));
  CHECK_THAT(bad("kv_target", "autoscaling.metric=kv_use"), Catch::Contains("target"));
  CHECK_THAT(bad("interval", "autoscaling.interval_s=0"), Catch::Contains("interval_s"));
  CHECK_THAT(bad("window", "autoscaling.window_s=5"),
             Catch::Contains("--set autoscaling.window_s=5") &&
                 Catch::Contains("expected at least interval_s (10 s), got 5 s"));
  CHECK_THAT(bad("max", "autoscaling.max_replicas=0"), Catch::Contains("max_replicas"));
  CHECK_THAT(bad("min_max", "autoscaling.min_replicas=7"),
             Catch::Contains("expected at least min_replicas (7), got 6"));
  CHECK_THAT(bad("initial", "autoscaling.initial_replicas=9"), Catch::Contains("expected 1 to 6"));
  CHECK_THAT(bad("tolerance", "autoscaling.tolerance=1"), Catch::Contains("[0, 1)"));
  CHECK_THAT(bad("storage", "autoscaling.storage_gb_per_s=-1"),
             Catch::Contains("storage_gb_per_s"));
  CHECK_THAT(bad("start", "autoscaling.engine_start_s=2e6"), Catch::Contains("at most 1e+06 s"));
  CHECK_THAT(bad("stabilization", "autoscaling.scale_down_stabilization_s=-1"),
             Catch::Contains("scale_down_stabilization_s"));
  CHECK_THAT(bad("delay", "autoscaling.provisioning_delay_s=-3"),
             Catch::Contains("provisioning_delay_s"));
  CHECK_THAT(bad("prices", "autoscaling.prices=no_such_prices.yaml"),
             Catch::Contains("no such file"));
  CHECK_THAT(bad("unknown", "autoscaling.interval=5"), Catch::Contains("interval"));
  CHECK_THAT(bad("count", "replicas.0.count=2"),
             Catch::Contains("an autoscaled group has no count"));
  CHECK_THAT(bad("queue_router", "router.kind=global_queue"), Catch::Contains("fleet-level queue"));
  CHECK_THAT(
      bad_input_message("autoscale_slo_miss", {kAutoscaling, "--set", "autoscaling.metric=slo_miss",
                                               "--set", "autoscaling.target=0.1"}),
      Catch::Contains("needs an slo section"));
  // In the file itself: file:line:col of the key.
  CHECK_THAT(
      bad_input_message("autoscale_file_window", {"tests/tools/bad/autoscaling_window.yaml"}),
      Catch::Contains("tests/tools/bad/autoscaling_window.yaml:10:") &&
          Catch::Contains("expected at least interval_s"));
  CHECK_THAT(bad_input_message("autoscale_file_count", {"tests/tools/bad/autoscaling_count.yaml"}),
             Catch::Contains("tests/tools/bad/autoscaling_count.yaml:5:") &&
                 Catch::Contains("an autoscaled group has no count"));
}

TEST_CASE("Bad diurnal arrival keys name the key and the expected values",
          "[autoscaling][errors]") {
  const auto bad = [&](const std::string& name, const std::string& set) {
    return bad_input_message("diurnal_" + name, {kAutoscaling, "--set", set});
  };
  CHECK_THAT(bad("trough", "workload.arrival.trough_qps=50"),
             Catch::Contains("--set workload.arrival.trough_qps=50") &&
                 Catch::Contains("expected at most peak_qps (40), got 50"));
  CHECK_THAT(bad("peak", "workload.arrival.peak_qps=0"), Catch::Contains("peak_qps"));
  CHECK_THAT(bad("hour", "workload.arrival.peak_hour=24"), Catch::Contains("[0, 24)"));
  CHECK_THAT(bad("day", "workload.arrival.day_s=0"), Catch::Contains("day_s"));
  CHECK_THAT(bad("unknown", "workload.arrival.qps=3"), Catch::Contains("qps"));
}

}  // namespace servesim::test
