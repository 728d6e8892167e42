// The benchmark-client workload (workload.client) in a whole run, with the `fixed` cost model
// (10 µs per prefill token, 5 ms per decode step): at most max_concurrency requests in flight, a
// request sent the instant a slot frees, warm-ups first and out of the metrics, lengths within
// the range ratio, the same bytes for a seed.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "run/run_executor.hpp"
#include "run/simulation.hpp"
#include "sim/config/run_config.hpp"
#include "sim/output/metrics.hpp"
#include "tests/workloads/test_support.hpp"

using namespace servesim;

namespace {

struct Sent {
  SimTime arrival = -1;
  SimTime first_token = -1;
  SimTime finished = -1;
  std::int32_t prompt = 0;
  std::int32_t output = 0;
  bool warmup = false;
};

struct SentRecorder final : RunObserver {
  std::vector<Sent> done;
  void on_request_done(const Request& r, bool /*rejected*/) override {
    done.push_back({r.spec.arrival, r.first_token, r.finished, r.spec.prompt_tokens,
                    r.spec.output_tokens, r.spec.warmup});
  }
};

std::string config(const std::string& client, const std::string& lengths, std::uint64_t seed = 7) {
  return fmt::format(
      "name: client\nseed: {}\nmodel: meta-llama/Llama-2-7b-hf\nreplicas: [{{gpu: a100-80gb}}]\n"
      "scheduler: {{kind: sarathi, chunk_size: 512, max_num_seqs: 64, num_gpu_blocks: 4000}}\n"
      "cost_model: {{kind: fixed, prefill_ns_per_token: 10000, decode_ns_per_step: 5000000}}\n"
      "workload:\n  client: {}\n  lengths: {}\n",
      seed, client, lengths);
}

const std::string kRandom = "{kind: random, input_len: 500, output_len: 40, range_ratio: 0.8}";

// The most requests of `sent` in flight at once ([arrival, finished) intervals).
std::int64_t most_in_flight(const std::vector<Sent>& sent) {
  std::vector<std::pair<SimTime, int>> edges;
  for (const Sent& s : sent) {
    edges.emplace_back(s.arrival, +1);
    edges.emplace_back(s.finished, -1);
  }
  std::sort(edges.begin(), edges.end());  // a finish before a send at the same instant
  std::int64_t now = 0, most = 0;
  for (const auto& [t, d] : edges) most = std::max(most, now += d);
  return most;
}

struct ClientRun {
  std::vector<Sent> measured, warmups;
  nlohmann::json summary;
};

ClientRun run(const std::string& yaml) {
  Simulation sim(RunConfig::parse(ConfigNode::parse(yaml, "client.yaml")));
  SentRecorder rec;
  RunOptions options;
  options.write_outputs = false;
  options.observers = {&rec};
  ClientRun out;
  out.summary = execute_run(sim, options);
  for (const Sent& s : rec.done) (s.warmup ? out.warmups : out.measured).push_back(s);
  return out;
}

}  // namespace

TEST_CASE("a benchmark client never has more than max_concurrency requests in flight",
          "[workloads][client]") {
  const ClientRun r =
      run(config("{max_concurrency: 8, num_prompts: 80, num_warmups: 16}", kRandom));
  REQUIRE(r.measured.size() == 80);
  REQUIRE(r.warmups.size() == 16);
  CHECK(most_in_flight(r.measured) == 8);
  CHECK(most_in_flight(r.warmups) == 8);
  // The client gathers its warm-ups before it sends a measured request.
  SimTime last_warmup = 0, first_measured = r.measured.front().arrival;
  for (const Sent& s : r.warmups) last_warmup = std::max(last_warmup, s.finished);
  for (const Sent& s : r.measured) first_measured = std::min(first_measured, s.arrival);
  CHECK(first_measured == last_warmup);
}

TEST_CASE("a benchmark client sends a request the instant a slot frees: TTFT has no client wait",
          "[workloads][client]") {
  const ClientRun r = run(config("{max_concurrency: 4, num_prompts: 30, num_warmups: 0}", kRandom));
  REQUIRE(r.measured.size() == 30);
  std::vector<SimTime> sends, finishes;
  for (const Sent& s : r.measured) {
    sends.push_back(s.arrival);
    finishes.push_back(s.finished);
  }
  std::sort(sends.begin(), sends.end());
  std::sort(finishes.begin(), finishes.end());
  // The first four go at time 0; every later send is one of the first 26 finishes, in order.
  for (std::size_t i = 0; i < 4; ++i) CHECK(sends[i] == 0);
  for (std::size_t i = 4; i < sends.size(); ++i) CHECK(sends[i] == finishes[i - 4]);
  // summary["client"] is the client's own report: TTFT from the send, over measured requests.
  double ttft_ms = 0;
  for (const Sent& s : r.measured) ttft_ms += sim_to_ms(s.first_token - s.arrival);
  CHECK(r.summary["client"]["mean_ttft_ms"].get<double>() == Approx(ttft_ms / 30));
  CHECK(r.summary["client"]["completed"] == 30);
  CHECK(r.summary["client"]["warmup_requests"] == 0);
}

TEST_CASE("a benchmark client's warm-ups repeat its first prompt and stay out of the metrics",
          "[workloads][client]") {
  const ClientRun r =
      run(config("{max_concurrency: 2, num_prompts: 10, num_warmups: 4}",
                 "{kind: random, input_len: 300, output_len: 20, range_ratio: 0.5}"));
  REQUIRE(r.warmups.size() == 4);
  for (const Sent& w : r.warmups) {
    CHECK(w.prompt == r.warmups.front().prompt);
    CHECK(w.output == r.warmups.front().output);
  }
  // The first measured request, one of the two sent at once when the warm-ups end, is their
  // prompt; the measured ones are not all that prompt (range ratio 0.5).
  SimTime start = r.measured.front().arrival;
  for (const Sent& s : r.measured) start = std::min(start, s.arrival);
  int same = 0, first_same = 0;
  for (const Sent& s : r.measured) {
    const bool is = s.prompt == r.warmups.front().prompt && s.output == r.warmups.front().output;
    same += is;
    first_same += is && s.arrival == start;
  }
  CHECK(first_same >= 1);
  CHECK(same < 10);
  const auto& s = r.summary;
  CHECK(s["requests"]["finished"] == 14);  // the engine served every one
  CHECK(s["requests"]["warmup"] == 4);
  CHECK(s["latency_ms"]["ttft"]["count"] == 10);  // the metrics only the measured ones
  CHECK(s["client"]["completed"] == 10);
  CHECK(s["client"]["warmup_requests"] == 4);
  std::int64_t output = 0;
  for (const Sent& m : r.measured) output += m.output;
  const double duration = s["client"]["duration_s"].get<double>();
  CHECK(duration > 0);
  CHECK(s["client"]["output_throughput"].get<double>() ==
        Approx(static_cast<double>(output) / duration));
}

TEST_CASE("random lengths stay within the range ratio and cover it", "[workloads][client]") {
  auto w = test::make(
      "workload:\n  client: {max_concurrency: 1000, num_prompts: 1000, num_warmups: 0}\n"
      "  lengths: {kind: random, input_len: 1000, output_len: 100, range_ratio: 0.8}\n");
  const auto requests = test::drain(*w);  // the 1000 slots are free at time 0
  REQUIRE(requests.size() == 1000);
  std::int32_t lo_p = 1 << 30, hi_p = 0, lo_o = 1 << 30, hi_o = 0;
  for (const auto& q : requests) {
    lo_p = std::min(lo_p, q.prompt_tokens);
    hi_p = std::max(hi_p, q.prompt_tokens);
    lo_o = std::min(lo_o, q.output_tokens);
    hi_o = std::max(hi_o, q.output_tokens);
  }
  CHECK(lo_p >= 800);
  CHECK(hi_p <= 1000);
  CHECK(lo_o >= 80);
  CHECK(hi_o <= 100);
  // 1000 draws over 201 values: both ends are reached.
  CHECK(lo_p <= 805);
  CHECK(hi_p >= 995);
}

TEST_CASE("a benchmark client's run is the same bytes for a seed and moves with it",
          "[workloads][client]") {
  const std::string client = "{max_concurrency: 6, num_prompts: 40}";
  const ClientRun a = run(config(client, kRandom, 3));
  const ClientRun b = run(config(client, kRandom, 3));
  const ClientRun c = run(config(client, kRandom, 4));
  CHECK(a.summary.dump() == b.summary.dump());
  CHECK(a.summary["latency_ms"].dump() != c.summary["latency_ms"].dump());
  // The defaults: two warm-ups per slot.
  CHECK(a.summary["client"]["warmup_requests"] == 12);
}

TEST_CASE("a benchmark client refuses what would change what it sends", "[workloads][client]") {
  using Catch::Matchers::Contains;
  CHECK_THAT(test::error_of("workload:\n  client: {max_concurrency: 4}\n  lengths: " + kRandom +
                            "\n  arrival: {kind: poisson, qps: 2}\n"),
             Contains("test.yaml:4:12: workload.arrival: cannot be combined with 'client'"));
  CHECK_THAT(
      test::error_of("workload:\n  client: {max_concurrency: 0}\n  lengths: " + kRandom + "\n"),
      Contains("test.yaml:2:29: workload.client.max_concurrency: expected a positive integer"));
  CHECK_THAT(test::error_of("workload:\n  client: {max_concurrency: 4}\n"),
             Contains("a 'client' needs a 'lengths' section"));
  CHECK_THAT(test::error_of("workload:\n  client: {max_concurrency: 4, num_prompt: 9}\n  "
                            "lengths: " +
                            kRandom + "\n"),
             Contains("num_prompt"));
  CHECK_THAT(test::error_of("workload:\n  client: {max_concurrency: 4}\n  lengths: {kind: random, "
                            "input_len: 10, output_len: 5, range_ratio: 1.5}\n"),
             Contains("expected a number in [0, 1], got 1.5"));
}
