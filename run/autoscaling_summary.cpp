#include "run/autoscaling_summary.hpp"

#include <cmath>
#include <filesystem>
#include <optional>

#include "run/prices.hpp"

namespace servesim {
namespace {

constexpr double kNsPerHour = 3.6e12;

}  // namespace

nlohmann::json autoscaling_summary(const Autoscaler& autoscaler, const BuiltRun& run) {
  const AutoscalingConfig& c = autoscaler.config();
  const ReplicaSpec& spec = run.fleet.front()->spec;
  const int gpus = spec.tp * spec.pp;
  const std::string file =
      !c.prices_file.empty()
          ? c.prices_file
          : (std::filesystem::path(Catalog::default_dirs().back()) / "prices" / "on-demand.yaml")
                .string();
  const decide::Prices prices(file, {}, *run.catalog);
  std::optional<double> usd_per_gpu_hour;
  if (prices.has(spec.gpu->name)) usd_per_gpu_hour = prices.usd_per_gpu_hour(spec.gpu->name);
  const auto usd = [&](SimTime billed_ns) -> nlohmann::json {
    if (!usd_per_gpu_hour) return nullptr;
    return static_cast<double>(billed_ns) / kNsPerHour * gpus * *usd_per_gpu_hour;
  };

  nlohmann::json series;
  for (const char* key :
       {"time_s", "active", "provisioning", "draining", "desired", "metric", "arrival_qps",
        "output_tokens", "utilisation", "replica_hours", "cumulative_usd"}) {
    series[key] = nlohmann::json::array();
  }
  SimTime billed = 0;
  SimTime previous = 0;
  std::int64_t tokens = 0;
  for (const AutoscaleSample& s : autoscaler.samples()) {
    billed += s.billed_ns;
    tokens += s.output_tokens;
    const double span_s = sim_to_s(s.time - previous);
    previous = s.time;
    series["time_s"].push_back(sim_to_s(s.time));
    series["active"].push_back(s.active);
    series["provisioning"].push_back(s.provisioning);
    series["draining"].push_back(s.draining);
    series["desired"].push_back(s.desired >= 0 ? nlohmann::json(s.desired) : nullptr);
    series["metric"].push_back(std::isnan(s.metric) ? nlohmann::json(nullptr)
                                                    : nlohmann::json(s.metric));
    series["arrival_qps"].push_back(span_s > 0 ? static_cast<double>(s.arrivals) / span_s : 0.0);
    series["output_tokens"].push_back(s.output_tokens);
    series["utilisation"].push_back(s.utilisation);
    series["replica_hours"].push_back(static_cast<double>(s.billed_ns) / kNsPerHour);
    series["cumulative_usd"].push_back(usd(billed));
  }
  const double span_s = sim_to_s(previous);
  nlohmann::json totals{
      {"replica_hours", static_cast<double>(autoscaler.billed_ns()) / kNsPerHour},
      {"gpu_hours", static_cast<double>(autoscaler.billed_ns()) / kNsPerHour * gpus},
      {"usd", usd(autoscaler.billed_ns())},
      {"output_tokens", tokens},
      {"usd_per_million_output_tokens", nullptr},
      {"mean_replicas", span_s > 0 ? sim_to_s(autoscaler.billed_ns()) / span_s : 0.0},
      {"peak_replicas", autoscaler.peak_billed()},
      {"scale_ups", autoscaler.scale_ups()},
      {"scale_downs", autoscaler.scale_downs()}};
  if (usd_per_gpu_hour && tokens > 0) {
    totals["usd_per_million_output_tokens"] =
        totals["usd"].get<double>() / static_cast<double>(tokens) * 1e6;
  }
  return {{"metric", autoscale_metric_name(c.metric)},
          {"target", c.target},
          {"interval_s", sim_to_s(c.interval)},
          {"window_s", sim_to_s(c.window)},
          {"min_replicas", c.min_replicas},
          {"max_replicas", c.max_replicas},
          {"initial_replicas", c.initial_replicas},
          {"scale_down_stabilization_s", sim_to_s(c.scale_down_stabilization)},
          {"provisioning_delay_s", sim_to_s(autoscaler.provisioning_delay())},
          {"price",
           {{"gpu", spec.gpu->name},
            {"gpus_per_replica", gpus},
            {"usd_per_gpu_hour", usd_per_gpu_hour ? nlohmann::json(*usd_per_gpu_hour) : nullptr},
            {"source", prices.source()}}},
          {"totals", totals},
          {"series", series}};
}

}  // namespace servesim
