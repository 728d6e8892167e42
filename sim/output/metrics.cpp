#include "sim/output/metrics.hpp"

#include <algorithm>
#include <cmath>

#include "sim/output/kv_offload_summary.hpp"

namespace servesim {

MetricsCollector::MetricsCollector(SloPolicy slo, SimTime request_overhead_ns,
                                   bool benchmark_client)
    : slo_(std::move(slo)),
      overhead_ns_(request_overhead_ns),
      classes_(slo_.classes().size()),
      default_class_(slo_.any() && !slo_.named() ? 0 : -1),
      benchmark_client_(benchmark_client) {}

namespace {
// The class on_tokens gives a benchmark client's warm-up tokens: no SLO class has it.
constexpr std::int32_t kWarmupClass = -2;
}  // namespace

std::int32_t MetricsCollector::class_of(const Request& r) const {
  return r.spec.slo_class >= 0 ? r.spec.slo_class : default_class_;
}

void MetricsCollector::on_step(const StepRecord& step, const BatchShape& /*shape*/,
                               const StepCost& /*cost*/) {
  prefill_tokens_computed_ += step.prefill_tokens;
}

void MetricsCollector::on_tokens(std::span<const TokenEvent> tokens, SimTime /*now*/) {
  // Most requests of a step waited the same gap since their previous token (the previous step's
  // end): each run of equal gaps and class goes into the sketches at once. Without SLO classes no
  // request has one: the class is the constant -1, and the compiler drops its lookups and tests.
  const auto add_runs = [&](auto class_at) {
    for (std::size_t i = 0; i < tokens.size();) {
      const SimTime gap = tokens[i].gap_ns;
      const std::int32_t k = class_at(i);
      std::size_t j = i + 1;
      while (j < tokens.size() && tokens[j].gap_ns == gap && class_at(j) == k) ++j;
      if (gap >= 0 && k != kWarmupClass) {
        const double ms = sim_to_ms(gap);
        const auto n = static_cast<std::int64_t>(j - i);
        if (k >= 0) classes_[static_cast<std::size_t>(k)].tbt.add(ms, n);
        tbt_.add(ms, n);
      }
      i = j;
    }
  };
  if (benchmark_client_) {
    // A warm-up's tokens go into a class of their own that no sketch takes.
    add_runs([&](std::size_t i) {
      const Request& r = *tokens[i].request;
      return r.spec.warmup ? kWarmupClass : class_of(r);
    });
  } else if (classes_.empty()) {
    add_runs([](std::size_t) { return std::int32_t{-1}; });
  } else {
    add_runs([&](std::size_t i) { return class_of(*tokens[i].request); });
  }
}

void MetricsCollector::on_request_done(const Request& r, bool rejected) {
  if (r.spec.warmup) {
    ++warmups_;
    return;
  }
  if (benchmark_client_) {
    if (measured_first_send_ < 0 || r.spec.arrival < measured_first_send_) {
      measured_first_send_ = r.spec.arrival;
    }
    measured_last_finish_ = std::max(measured_last_finish_, rejected ? r.spec.arrival : r.finished);
  }
  if (r.spec.hashes) hashed_requests_ = true;
  const std::int32_t k = class_of(r);
  ClassStats* c = k >= 0 ? &classes_[static_cast<std::size_t>(k)] : nullptr;
  if (c) ++c->done;
  if (r.demoted) {
    ++demoted_;
    if (c) ++c->demoted;
  }
  if (rejected) {
    if (r.reject_reason == RejectReason::kAdmission) ++rejected_admission_;
    if (c) ++c->rejected;
    return;
  }
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
  // A demoted request was estimated for the place it did not keep: its estimates are not scored.
  if (r.est_wait >= 0 && !r.demoted) {
    const double wait = sim_to_ms(r.first_scheduled - r.spec.arrival);
    const double err = sim_to_ms(r.est_wait) - wait;
    wait_abs_error_ms_.add(std::abs(err));
    wait_signed_error_ms_ += err;
    if (wait > 0) wait_ape_pct_.add(100 * std::abs(err) / wait);
  }
  if (r.est_due >= 0 && !r.demoted) {
    const double err = sim_to_ms(r.est_due - (r.deadline_ttft ? r.first_token : r.finished));
    due_abs_error_ms_.add(std::abs(err));
    due_signed_error_ms_ += err;
    if (err < 0) ++due_early_;
  }
  if (r.deadline != kNoDeadline && r.first_scheduled > r.deadline) ++served_past_deadline_;
  if (!c) return;
  c->ttft.add(ttft);
  c->e2e.add(e2e);
  if (r.generated > 1) c->tpot.add(tpot);
  if (slo_.classes()[static_cast<std::size_t>(k)].bounds.met(
          ttft, static_cast<double>(r.tbt_max_ns) * 1e-6, tpot, e2e)) {
    ++slo_met_;
    ++c->met;
  }
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

// Energy and power are null where the cost model prices none (no power model for the GPU).
nlohmann::json energy_json(double value) {
  return value > 0 ? nlohmann::json(value) : nlohmann::json(nullptr);
}

// A replica's board energy over the run: its steps, and its idle power while it had none in
// flight (from the first arrival to the end, the span makespan_s measures).
double replica_energy_j(const Replica& r, SimTime span) {
  return r.energy_j + r.idle_w * sim_to_s(std::max<SimTime>(0, span - r.busy_ns));
}

nlohmann::json MetricsCollector::client_json() const {
  const double duration_s =
      measured_first_send_ >= 0 ? sim_to_s(measured_last_finish_ - measured_first_send_) : 0.0;
  const double per_s = duration_s > 0 ? 1.0 / duration_s : 0.0;
  const auto mean = [](const QuantileSketch& s) { return sketch_json(s)["mean"]; };
  return {{"warmup_requests", warmups_},
          {"completed", finished_},
          {"duration_s", duration_s},
          {"request_throughput", static_cast<double>(finished_) * per_s},
          {"output_throughput", static_cast<double>(output_tokens_) * per_s},
          {"total_token_throughput", static_cast<double>(prompt_tokens_ + output_tokens_) * per_s},
          {"mean_ttft_ms", mean(ttft_)},
          {"mean_tpot_ms", mean(tpot_)},
          {"mean_itl_ms", mean(tbt_)},
          {"mean_e2el_ms", mean(e2e_)}};
}

void MetricsCollector::on_transfer(const TransferRecord& t) {
  transfer_ms_.add(sim_to_ms(t.end_ns - t.start_ns));
  handoff_wait_ms_.add(sim_to_ms(t.start_ns - t.queued_ns));
}

nlohmann::json MetricsCollector::summary(const EngineTotals& totals, const Fleet& fleet,
                                         const LinkNetwork* network) const {
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
  if (benchmark_client_) {
    j["requests"]["warmup"] = warmups_;
    j["client"] = client_json();
  }
  j["requests"]["rejected_by_admission"] = rejected_admission_;
  j["requests"]["demoted"] = demoted_;
  if (slo_.any()) {
    json slo;
    auto bounds = [](json& out, const SloSpec& b) {
      if (b.ttft_ms) out["ttft_ms"] = *b.ttft_ms;
      if (b.tbt_ms) out["tbt_ms"] = *b.tbt_ms;
      if (b.tpot_ms) out["tpot_ms"] = *b.tpot_ms;
      if (b.e2e_ms) out["e2e_ms"] = *b.e2e_ms;
    };
    if (!slo_.named()) bounds(slo, slo_.classes()[0].bounds);
    slo["met"] = slo_met_;
    // Rejected requests count as missed.
    slo["attainment"] = totals.arrived > 0
                            ? static_cast<double>(slo_met_) / static_cast<double>(totals.arrived)
                            : 0.0;
    slo["goodput_requests_per_s"] = static_cast<double>(slo_met_) * per_s;
    // Served requests whose deadline had passed before their first step: under EDF they are
    // the most urgent in the queue, so a queue that cannot meet every deadline serves them first.
    slo["served_past_deadline"] = served_past_deadline_;
    if (slo_.named()) {
      slo["classes"] = json::array();
      for (std::size_t i = 0; i < classes_.size(); ++i) {
        const ClassStats& c = classes_[i];
        json k{{"name", slo_.classes()[i].name}};
        bounds(k, slo_.classes()[i].bounds);
        k["requests"] = c.done;
        k["met"] = c.met;
        k["attainment"] =
            c.done > 0 ? json(static_cast<double>(c.met) / static_cast<double>(c.done)) : json();
        k["goodput_requests_per_s"] = static_cast<double>(c.met) * per_s;
        k["rejected"] = c.rejected;
        k["demoted"] = c.demoted;
        k["latency_ms"] = {{"ttft", sketch_json(c.ttft)},
                           {"tbt", sketch_json(c.tbt)},
                           {"tpot", sketch_json(c.tpot)},
                           {"e2e", sketch_json(c.e2e)}};
        slo["classes"].push_back(k);
      }
    }
    j["slo"] = slo;
  } else {
    j["slo"] = nullptr;
  }
  json replicas = json::array();
  double energy_j = 0;
  bool every_priced = true;  // a fleet total leaving some replicas out would read as complete
  for (const auto& r : fleet) {
    every_priced = every_priced && r->idle_w > 0;
    const double e = replica_energy_j(*r, span);
    energy_j += e;
    replicas.push_back(
        {{"id", r->id},
         {"gpu", r->spec.gpu->name},
         {"model", r->spec.model->name},
         {"tp", r->spec.tp},
         {"pp", r->spec.pp},
         {"precision", std::string(precision_name(r->spec.weights))},
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
         {"energy_j", energy_json(e)},
         {"power_w",
          {{"mean", energy_json(makespan_s > 0 ? e / makespan_s : 0.0)},
           {"peak", energy_json(std::max(r->peak_power_w, r->idle_w))},
           {"idle", energy_json(r->idle_w)}}}});
    if (r->spec.moe_parallel()) {
      // Only an MoE layout says them, so every other run's summary keeps its bytes.
      replicas.back()["attention_dp"] = r->spec.attention_dp;
      replicas.back()["ep"] = r->spec.moe_ep;
    }
    if (r->role != ReplicaRole::kMixed) replicas.back()["role"] = role_name(r->role);
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
  if (json off = kv_offload_summary(fleet, makespan_s); !off.is_null()) j["kv_offload"] = off;
  if (hashed_requests_) {
    // Fleet-wide prefix-cache hit rate for runs whose requests carry block hashes (a Mooncake
    // trace): Σ hit blocks / Σ looked-up blocks over the replicas with prefix caching.
    std::int64_t q = 0;
    std::int64_t hit = 0;
    for (const auto& r : fleet) {
      q += r->kv.prefix_query_blocks();
      hit += r->kv.prefix_hit_blocks();
    }
    j["prefix_cache"] = {
        {"query_blocks", q},
        {"hit_blocks", hit},
        {"hit_rate",
         q > 0 ? json(static_cast<double>(hit) / static_cast<double>(q)) : json(nullptr)}};
  }
  if (wait_abs_error_ms_.count() > 0) {
    // The router's waiting-time estimates against the waits that followed (served requests).
    j["wait_estimate"] = {
        {"requests", wait_abs_error_ms_.count()},
        {"abs_error_ms", sketch_json(wait_abs_error_ms_)},
        {"mean_signed_error_ms",
         wait_signed_error_ms_ / static_cast<double>(wait_abs_error_ms_.count())},
        {"ape_pct", sketch_json(wait_ape_pct_)},
        {"due_abs_error_ms", sketch_json(due_abs_error_ms_)},
        {"due_mean_signed_error_ms",
         due_abs_error_ms_.count() > 0
             ? json(due_signed_error_ms_ / static_cast<double>(due_abs_error_ms_.count()))
             : json()},
        {"due_early_fraction", due_abs_error_ms_.count() > 0
                                   ? json(static_cast<double>(due_early_) /
                                          static_cast<double>(due_abs_error_ms_.count()))
                                   : json()}};
  } else {
    j["wait_estimate"] = nullptr;
  }
  if (!every_priced) energy_j = 0;  // null: not every replica's energy is priced
  j["energy_j"] = energy_json(energy_j);
  j["energy_j_per_output_token"] =
      energy_json(output_tokens_ > 0 ? energy_j / static_cast<double>(output_tokens_) : 0.0);
  j["power_w"] = {{"mean", energy_json(makespan_s > 0 ? energy_j / makespan_s : 0.0)},
                  {"peak", energy_json(every_priced ? totals.peak_power_w : 0.0)}};
  if (network != nullptr) {
    json d;
    d["transfers"] = totals.transfers;
    d["kv_tokens"] = totals.transfer_tokens;
    d["kv_bytes"] = totals.transfer_bytes;
    d["handoff_waits"] = totals.handoff_waits;
    d["transfer_ms"] = sketch_json(transfer_ms_);
    d["handoff_wait_ms"] = sketch_json(handoff_wait_ms_);
    // Mean busy fraction of each role's replicas.
    json roles;
    for (const ReplicaRole role : {ReplicaRole::kPrefill, ReplicaRole::kDecode}) {
      double busy = 0;
      int n = 0;
      for (const auto& r : fleet) {
        if (r->role != role) continue;
        busy += span > 0 ? static_cast<double>(r->busy_ns) / static_cast<double>(span) : 0.0;
        ++n;
      }
      roles[role_name(role)] = {{"replicas", n}, {"busy_fraction", n > 0 ? busy / n : 0.0}};
    }
    d["roles"] = roles;
    // Links that carried KV: bytes and the share of their bandwidth over the run.
    json links = json::array();
    for (const auto& l : network->link_stats()) {
      if (l.bytes <= 0) continue;
      links.push_back(
          {{"link", l.name},
           {"gb_per_s", l.gb_per_s},
           {"bytes", l.bytes},
           {"utilization", span > 0 ? l.bytes / (l.gb_per_s * static_cast<double>(span)) : 0.0}});
    }
    d["links"] = links;
    j["disaggregation"] = d;
  }
  return j;
}

}  // namespace servesim
