#include "sim/metrics.hpp"

namespace servesim {

MetricsCollector::MetricsCollector(SloSpec slo, SimTime request_overhead_ns)
    : slo_(slo), overhead_ns_(request_overhead_ns) {}

void MetricsCollector::on_step(const StepRecord& step, const BatchShape& /*shape*/,
                               const StepCost& cost) {
  prefill_tokens_computed_ += step.prefill_tokens;
  energy_j_ += cost.energy_j;
}

void MetricsCollector::on_token(const Request& /*request*/, SimTime /*now*/, SimTime gap_ns) {
  if (gap_ns >= 0) tbt_.add(sim_to_ms(gap_ns));
}

void MetricsCollector::on_request_done(const Request& r, bool rejected) {
  if (rejected) return;
  ++finished_;
  prompt_tokens_ += r.spec.prompt_tokens;
  output_tokens_ += r.generated;
  if (r.preemptions > 0) ++preempted_requests_;
  const double ttft = sim_to_ms(r.first_token - r.spec.arrival + overhead_ns_);
  const double e2e = sim_to_ms(r.finished - r.spec.arrival + overhead_ns_);
  ttft_.add(ttft);
  e2e_.add(e2e);
  sched_.add(sim_to_ms(r.first_scheduled - r.spec.arrival));
  double tpot = 0;
  if (r.generated > 1) {
    tpot = (e2e - ttft) / static_cast<double>(r.generated - 1);
    tpot_.add(tpot);
  }
  const double tbt_max = r.tbt_max_ns * 1e-6;
  const bool met =
      (!slo_.ttft_ms || ttft <= *slo_.ttft_ms) && (!slo_.tbt_ms || tbt_max <= *slo_.tbt_ms) &&
      (!slo_.tpot_ms || tpot <= *slo_.tpot_ms) && (!slo_.e2e_ms || e2e <= *slo_.e2e_ms);
  if (met) ++slo_met_;
}

// A statistic of no values is null, not 0 (a TBT of 0 would read as a perfect result).
nlohmann::json sketch_json(const QuantileSketch& s) {
  if (s.count() == 0) {
    return nlohmann::json{{"count", 0},     {"mean", nullptr}, {"p50", nullptr}, {"p90", nullptr},
                          {"p95", nullptr}, {"p99", nullptr},  {"max", nullptr}};
  }
  return nlohmann::json{{"count", s.count()},      {"mean", s.mean()},
                        {"p50", s.quantile(0.5)},  {"p90", s.quantile(0.9)},
                        {"p95", s.quantile(0.95)}, {"p99", s.quantile(0.99)},
                        {"max", s.max()}};
}

// Energy is null until a cost model prices it (none does yet: the power model comes later).
nlohmann::json energy_json(double joules) {
  return joules > 0 ? nlohmann::json(joules) : nlohmann::json(nullptr);
}

nlohmann::json MetricsCollector::summary(const EngineTotals& totals, const Fleet& fleet) const {
  using nlohmann::json;
  const SimTime span = totals.end_time - totals.first_arrival;
  const double makespan_s = sim_to_s(span);
  const double per_s = makespan_s > 0 ? 1.0 / makespan_s : 0.0;
  json j;
  j["requests"] = {{"arrived", totals.arrived},
                   {"finished", totals.finished},
                   {"rejected", totals.rejected},
                   {"unfinished", totals.arrived - totals.finished - totals.rejected},
                   {"preemptions", totals.preemptions},
                   {"preempted_requests", preempted_requests_},
                   {"prompt_tokens", prompt_tokens_},
                   {"output_tokens", output_tokens_}};
  j["makespan_s"] = makespan_s;
  j["request_overhead_ms"] = sim_to_ms(overhead_ns_);
  j["steps"] = totals.steps;
  j["throughput"] = {
      {"requests_per_s", static_cast<double>(totals.finished) * per_s},
      {"output_tokens_per_s", static_cast<double>(output_tokens_) * per_s},
      {"prefill_tokens_per_s", static_cast<double>(prefill_tokens_computed_) * per_s}};
  j["latency_ms"] = {{"ttft", sketch_json(ttft_)},
                     {"tbt", sketch_json(tbt_)},
                     {"tpot", sketch_json(tpot_)},
                     {"e2e", sketch_json(e2e_)},
                     {"scheduling_delay", sketch_json(sched_)}};
  j["percentiles_exact"] = ttft_.exact() && tbt_.exact() && e2e_.exact();
  if (slo_.any()) {
    json slo;
    if (slo_.ttft_ms) slo["ttft_ms"] = *slo_.ttft_ms;
    if (slo_.tbt_ms) slo["tbt_ms"] = *slo_.tbt_ms;
    if (slo_.tpot_ms) slo["tpot_ms"] = *slo_.tpot_ms;
    if (slo_.e2e_ms) slo["e2e_ms"] = *slo_.e2e_ms;
    slo["met"] = slo_met_;
    // Rejected requests count as missed.
    slo["attainment"] = totals.arrived > 0
                            ? static_cast<double>(slo_met_) / static_cast<double>(totals.arrived)
                            : 0.0;
    slo["goodput_requests_per_s"] = static_cast<double>(slo_met_) * per_s;
    j["slo"] = slo;
  } else {
    j["slo"] = nullptr;
  }
  json replicas = json::array();
  for (const auto& r : fleet) {
    replicas.push_back(
        {{"id", r->id},
         {"gpu", r->spec.gpu->name},
         {"model", r->spec.model->name},
         {"tp", r->spec.tp},
         {"pp", r->spec.pp},
         {"precision", r->spec.weights == Precision::kFp8 ? "fp8" : "bf16"},
         {"topology", r->spec.links()},
         {"cuda_graphs", r->spec.cuda_graphs ? json(cuda_graph_mode_name(r->spec.cuda_graph_mode))
                                             : json("eager")},
         {"power_cap_w", r->spec.effective_power_cap_w()},
         {"scheduler", std::string(r->scheduler->name())},
         {"token_budget", r->scheduler->token_budget()},
         {"max_model_len", r->max_model_len},
         {"block_size", r->kv.block_size()},
         {"kv_blocks", r->kv.total_blocks()},
         {"steps", r->steps},
         {"busy_fraction",
          span > 0 ? static_cast<double>(r->busy_ns) / static_cast<double>(span) : 0.0},
         {"energy_j", energy_json(r->energy_j)}});
    if (r->kv.prefix_caching()) {
      // Admission lookups over the run: cacheable blocks looked up, found, and cached blocks
      // evicted to make room.
      const auto q = r->kv.prefix_query_blocks();
      const auto hit = r->kv.prefix_hit_blocks();
      replicas.back()["prefix_cache"] = {
          {"query_blocks", q},
          {"hit_blocks", hit},
          {"hit_rate", q > 0 ? json(static_cast<double>(hit) / static_cast<double>(q))
                             : json(nullptr)},  // no lookups: no rate
          {"evicted_blocks", r->kv.prefix_evictions()}};
    }
  }
  j["replicas"] = replicas;
  j["energy_j"] = energy_json(energy_j_);
  j["energy_j_per_output_token"] =
      energy_json(output_tokens_ > 0 ? energy_j_ / static_cast<double>(output_tokens_) : 0.0);
  return j;
}

}  // namespace servesim
