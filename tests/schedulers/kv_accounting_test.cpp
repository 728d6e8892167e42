// Random workloads on small KV caches, every step checked against the scheduler contracts: KV
// block accounting, queue discipline (FCFS, preempted requests first, victims newest first), the
// per-kind batch rules, and exact token counts at the end.

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "schedulers/replica/orca_scheduler.hpp"
#include "schedulers/replica/sarathi_scheduler.hpp"
#include "schedulers/replica/vllm_scheduler.hpp"
#include "tests/schedulers/scheduler_harness.hpp"

using namespace servesim;
using servesim::test::SchedulerHarness;

namespace {

enum class Kind { kVllm, kSarathi, kOrca };

struct Case {
  Kind kind;
  std::int32_t budget;
  std::int32_t max_num_seqs;
  std::int64_t blocks;
  double watermark;
  bool prefix_caching = false;  // requests then share 0–80 token prefixes in 4 groups
};

constexpr std::int32_t kBlockSize = 16;
constexpr int kRequests = 300;
constexpr std::int32_t kMaxPrompt = 160;
constexpr std::int32_t kMaxOutput = 64;

// Uniform integer in [lo, hi] by a fixed formula (std distributions differ between libraries).
std::int32_t uniform(std::mt19937_64& rng, std::int32_t lo, std::int32_t hi) {
  return lo + static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

std::unique_ptr<ReplicaScheduler> build(const Case& c) {
  SchedulerOptions o;
  o.max_num_batched_tokens = c.budget;
  o.max_num_seqs = c.max_num_seqs;
  switch (c.kind) {
    case Kind::kVllm:
      return std::make_unique<VllmScheduler>(o);
    case Kind::kSarathi:
      return std::make_unique<SarathiScheduler>(o);
    case Kind::kOrca:
      return std::make_unique<OrcaScheduler>(o);
  }
  return nullptr;
}

// Blocks the requests hold: private ones, plus each group's shared prefix blocks once (a
// request's shared blocks are its group's leading blocks).
// A request's shared blocks are its group's prefix blocks (one copy per group) and, after a
// preemption, its own cached blocks past that prefix (its alone).
std::int64_t blocks_in_use(const std::deque<Request>& requests, std::int32_t block_size) {
  std::int64_t n = 0;
  std::map<std::int64_t, std::int64_t> shared;  // group -> leading blocks in use
  for (const Request& r : requests) {
    n += r.kv_blocks - r.kv_shared;
    const std::int64_t group_blocks =
        r.spec.prefix_group >= 0 ? std::min(r.spec.prefix_tokens, r.spec.prompt_tokens) / block_size
                                 : 0;
    const std::int64_t in_group = std::min(r.kv_shared, group_blocks);
    n += r.kv_shared - in_group;
    if (in_group > 0) {
      auto& m = shared[r.spec.prefix_group];
      m = std::max(m, in_group);
    }
  }
  for (const auto& [group, k] : shared) n += k;
  return n;
}

#define ENSURE(cond, ...)                                                                  \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      return fmt::format("step {}: {} [{}]", step, fmt::format(__VA_ARGS__), h.entries()); \
    }                                                                                      \
  } while (0)

// Runs `kRequests` random requests through the case's scheduler; returns the first broken rule
// ("" when every step kept every rule). `preemptions` receives the total preemption count.
std::string run_checked(const Case& c, std::uint64_t seed, std::int64_t& preemptions) {
  std::mt19937_64 rng(seed);
  struct Arrival {
    std::int64_t step;
    std::int32_t prompt, output;
    std::int64_t group;
    std::int32_t prefix;
  };
  std::vector<Arrival> arrivals;
  std::int64_t at = 0;
  for (int i = 0; i < kRequests; ++i) {
    at += uniform(rng, 0, 2);
    const std::int32_t prompt = uniform(rng, 1, kMaxPrompt);
    const std::int32_t output = uniform(rng, 1, kMaxOutput);
    const std::int64_t group = c.prefix_caching ? uniform(rng, -1, 3) : -1;
    const std::int32_t prefix = group >= 0 ? uniform(rng, 0, 80) : 0;
    arrivals.push_back({at, prompt, output, group, prefix});
  }
  SchedulerHarness h(build(c), KvCache(c.blocks, kBlockSize, c.watermark));
  KvCache& kv = h.kv();
  kv.set_prefix_caching(c.prefix_caching);
  ReplicaScheduler& s = h.scheduler();
  std::deque<RequestId> waiting;   // model of the scheduler's waiting queue
  std::vector<RequestId> running;  // model of its running list, in admission order
  std::vector<char> was_running, was_decode, is_finished;
  std::vector<std::int32_t> preempted_before;
  std::size_t next_arrival = 0;

  for (std::int64_t step = 0; step < 200000; ++step) {
    while (next_arrival < arrivals.size() && arrivals[next_arrival].step <= step) {
      const Arrival& a = arrivals[next_arrival];
      const Request& r = h.add(a.prompt, a.output, a.group, a.prefix);
      waiting.push_back(r.id);
      ++next_arrival;
      is_finished.push_back(0);
    }
    if (h.finished().size() == arrivals.size()) break;
    const std::size_t n = h.requests().size();
    was_running.assign(n, 0);
    was_decode.assign(n, 0);
    preempted_before.assign(n, 0);
    for (const Request& r : h.requests()) {
      const auto i = static_cast<std::size_t>(r.id);
      was_running[i] = r.kv_blocks > 0;
      was_decode[i] = r.is_decode();
      preempted_before[i] = r.preemptions;
    }

    const Batch& batch = h.form();
    const auto outstanding = static_cast<std::int64_t>(n - h.finished().size());
    ENSURE(s.num_outstanding() == outstanding, "outstanding {} != {}", s.num_outstanding(),
           outstanding);
    if (batch.empty()) {
      ENSURE(outstanding == 0, "empty batch with {} requests outstanding", outstanding);
      continue;
    }

    // KV accounting and the running set.
    std::int64_t holders = 0;
    for (const Request& r : h.requests()) {
      ENSURE(r.kv_blocks >= 0, "request {} holds {} blocks", r.id, r.kv_blocks);
      if (r.kv_blocks > 0) ++holders;
      if (r.kv_blocks == 0 && !is_finished[static_cast<std::size_t>(r.id)]) {
        ENSURE(r.computed == 0 && r.step_tokens == 0, "request {} holds no KV but computed {}",
               r.id, r.computed);
      }
    }
    ENSURE(kv.used_blocks() >= 0 && kv.used_blocks() <= kv.total_blocks(), "used {} of {}",
           kv.used_blocks(), kv.total_blocks());
    std::int64_t held = blocks_in_use(h.requests(), kv.block_size());
    ENSURE(kv.used_blocks() == held, "used {} != held {}", kv.used_blocks(), held);
    ENSURE(s.num_running() == holders, "running {} != KV holders {}", s.num_running(), holders);
    ENSURE(holders <= c.max_num_seqs, "{} running > max_num_seqs", holders);

    // Entries: each request once, within its pending tokens, with KV for them.
    std::int64_t sum = 0;
    std::vector<RequestId> admitted;
    for (std::size_t k = 0; k < batch.entries.size(); ++k) {
      const BatchEntry& e = batch.entries[k];
      const Request& r = *e.request;
      const auto i = static_cast<std::size_t>(r.id);
      for (std::size_t j = 0; j < k; ++j) {
        ENSURE(batch.entries[j].request != e.request, "request {} twice", r.id);
      }
      ENSURE(e.tokens >= 1 && e.tokens <= r.pending_tokens(), "request {}: {} of {} pending", r.id,
             e.tokens, r.pending_tokens());
      ENSURE(r.step_tokens == e.tokens, "step_tokens {} != {}", r.step_tokens, e.tokens);
      // What the engine shapes the step from without reading the request.
      ENSURE(e.context == r.computed, "request {}: entry context {} != computed {}", r.id,
             e.context, r.computed);
      ENSURE(e.decode == (e.tokens == 1 && r.is_decode()), "request {}: entry says decode {}", r.id,
             e.decode);
      ENSURE(kv.blocks_for_tokens(r.computed + e.tokens) <= r.kv_blocks,
             "request {} scheduled {}+{} tokens with {} blocks", r.id, r.computed, e.tokens,
             r.kv_blocks);
      sum += e.tokens;
      // A victim scheduled again in the same step counts as admitted.
      if (!was_running[i] || r.preemptions > preempted_before[i]) admitted.push_back(r.id);
    }

    // Preemption victims: the newest running requests, moved to the front of the queue.
    std::vector<RequestId> victims;
    for (RequestId id : running) {
      const Request& r = h.request(id);
      if (r.preemptions > preempted_before[static_cast<std::size_t>(id)]) {
        ENSURE(r.preemptions == preempted_before[static_cast<std::size_t>(id)] + 1,
               "request {} preempted twice in one step", id);
        victims.push_back(id);
      }
    }
    ENSURE(static_cast<std::int32_t>(victims.size()) == batch.preempted,
           "{} victims but batch.preempted {}", victims.size(), batch.preempted);
    ENSURE(std::equal(victims.begin(), victims.end(), running.end() - std::ssize(victims)),
           "victims are not the newest running requests");
    ENSURE(victims.empty() || admitted.empty(), "admitted in an iteration that preempted");
    for (RequestId id : victims) {
      ENSURE(h.request(id).kv_blocks == 0 && h.request(id).computed == 0, "victim {} kept KV", id);
    }
    if (!admitted.empty() && c.kind != Kind::kOrca) {
      ENSURE(kv.free_blocks() >= kv.watermark_blocks(), "admitted into the watermark ({} free)",
             kv.free_blocks());
    }
    // Admissions pop the queue's head in order (FCFS; preempted requests first).
    for (RequestId id : admitted) {
      ENSURE(!waiting.empty() && waiting.front() == id, "admitted {} but queue head is {}", id,
             waiting.empty() ? -1 : waiting.front());
      waiting.pop_front();
      running.push_back(id);
    }
    for (auto it = victims.rbegin(); it != victims.rend(); ++it) waiting.push_front(*it);
    running.resize(running.size() - victims.size());

    // Per-kind batch rules.
    auto cls = [&](const BatchEntry& e) {  // 0 decode, 1 ongoing prefill, 2 new
      const auto i = static_cast<std::size_t>(e.request->id);
      return !was_running[i] ? 2 : was_decode[i] ? 0 : 1;
    };
    std::int64_t decodes_before = 0;
    for (RequestId id : running) {
      if (was_running[static_cast<std::size_t>(id)] && was_decode[static_cast<std::size_t>(id)]) {
        ++decodes_before;
      }
    }
    if (c.kind == Kind::kSarathi) {
      ENSURE(sum <= c.budget, "{} tokens > budget {}", sum, c.budget);
      for (std::size_t k = 1; k < batch.entries.size(); ++k) {
        ENSURE(cls(batch.entries[k - 1]) <= cls(batch.entries[k]),
               "decodes, ongoing prefills, new requests out of order");
      }
      for (std::size_t k = 0; k < batch.entries.size(); ++k) {
        const BatchEntry& e = batch.entries[k];
        const bool truncated = e.tokens < e.request->pending_tokens();
        if (truncated && batch.preempted == 0) {
          ENSURE(k + 1 == batch.entries.size() && sum == c.budget,
                 "chunk of {} is not min(remaining, budget left)", e.request->id);
        }
      }
      if (decodes_before <= c.budget) {
        for (RequestId id : running) {
          if (was_running[static_cast<std::size_t>(id)] &&
              was_decode[static_cast<std::size_t>(id)]) {
            ENSURE(h.request(id).step_tokens == 1, "running decode {} left out", id);
          }
        }
      }
    } else if (c.kind == Kind::kVllm) {
      if (!admitted.empty()) {
        ENSURE(admitted.size() == batch.entries.size(), "prefill iteration with decodes");
        ENSURE(sum <= c.budget, "{} prefill tokens > budget {}", sum, c.budget);
        for (const BatchEntry& e : batch.entries) {
          ENSURE(e.request->computed == e.request->cached_prefix &&
                     e.tokens == e.request->pending_tokens(),
                 "prompt of {} split", e.request->id);
        }
      } else {
        for (const BatchEntry& e : batch.entries)
          ENSURE(cls(e) == 0 && e.tokens == 1, "not a decode");
        ENSURE(batch.entries.size() == running.size(), "a running request did not decode");
      }
    } else {
      ENSURE(batch.preempted == 0, "Orca preempted");
      ENSURE(sum <= c.budget || batch.entries.size() == 1, "{} tokens > budget {}", sum, c.budget);
      for (const BatchEntry& e : batch.entries) {
        const Request& r = *e.request;
        ENSURE(r.kv_blocks == kv.blocks_for_tokens(r.spec.prompt_tokens + r.spec.output_tokens - 1),
               "request {} does not hold KV for its whole life", r.id);
        ENSURE(cls(e) == 0 ? e.tokens == 1 : cls(e) == 2 && e.tokens == r.spec.prompt_tokens,
               "request {} is neither a decode nor a whole prompt", r.id);
      }
      ENSURE(batch.entries.size() == running.size(), "a running request was left out");
    }

    // Apply the step as the engine does and check what finished.
    const std::vector<Request*> done = h.apply();
    for (Request* r : done) {
      auto& f = is_finished[static_cast<std::size_t>(r->id)];
      ENSURE(!f, "request {} finished twice", r->id);
      f = 1;
      ENSURE(r->generated == r->spec.output_tokens, "request {} finished with {} of {} tokens",
             r->id, r->generated, r->spec.output_tokens);
      ENSURE(r->computed == r->spec.prompt_tokens + r->spec.output_tokens - 1,
             "request {} finished with {} computed", r->id, r->computed);
      ENSURE(r->kv_blocks == 0, "finished request {} kept {} blocks", r->id, r->kv_blocks);
      running.erase(std::find(running.begin(), running.end(), r->id));
    }
    held = blocks_in_use(h.requests(), kv.block_size());
    for (const Request& r : h.requests()) {
      if (!is_finished[static_cast<std::size_t>(r.id)]) {
        ENSURE(!r.done() && r.computed <= r.target_tokens(), "request {} done but not finished",
               r.id);
      }
    }
    ENSURE(kv.used_blocks() == held, "after the step used {} != held {}", kv.used_blocks(), held);
    ENSURE(s.num_running() == static_cast<std::int64_t>(running.size()), "running {} != {}",
           s.num_running(), running.size());
  }
  const std::int64_t step = h.steps();
  ENSURE(h.finished().size() == arrivals.size(), "{} of {} finished", h.finished().size(),
         arrivals.size());
  ENSURE(kv.used_blocks() == 0, "{} blocks still used at the end", kv.used_blocks());
  ENSURE(kv.cached_free_blocks() >= 0 && kv.cached_free_blocks() <= kv.total_blocks(),
         "{} cached free blocks", kv.cached_free_blocks());
  if (c.prefix_caching && c.kind != Kind::kOrca) {
    ENSURE(kv.prefix_hit_blocks() > 0, "no prefix cache hit");
  }
  ENSURE(s.num_outstanding() == 0 && s.num_running() == 0, "requests left in the scheduler");
  std::int64_t counted = 0;
  for (const Request& r : h.requests()) counted += r.preemptions;
  ENSURE(counted == h.preemptions(), "request preemptions {} != batch counts {}", counted,
         h.preemptions());
  preemptions = h.preemptions();
  return "";
}

#undef ENSURE

std::string name_of(Kind k) {
  return k == Kind::kVllm ? "vllm" : k == Kind::kSarathi ? "sarathi" : "orca";
}

}  // namespace

TEST_CASE("Random workloads on small caches keep KV accounting and batch rules at every step",
          "[schedulers][kv]") {
  // The largest request (160 + 64 tokens) needs 14 blocks, so every request fits each cache.
  const std::vector<Case> cases{
      {Kind::kVllm, 256, 8, 16, 0.0},
      {Kind::kVllm, 256, 8, 24, 0.05},
      {Kind::kVllm, 512, 64, 64, 0.01},
      {Kind::kSarathi, 32, 16, 16, 0.0},
      {Kind::kSarathi, 64, 8, 24, 0.05},
      {Kind::kSarathi, 256, 64, 64, 0.01},
      {Kind::kOrca, 256, 8, 16, 0.0},
      {Kind::kOrca, 512, 64, 64, 0.01},
      // max_num_seqs binds before the cache does.
      {Kind::kVllm, 512, 3, 64, 0.01},
      {Kind::kSarathi, 128, 3, 64, 0.01},
      {Kind::kOrca, 512, 3, 64, 0.01},
      // Automatic prefix caching: shared blocks count once; freed prefixes stay cached.
      {Kind::kVllm, 256, 8, 24, 0.05, true},
      {Kind::kSarathi, 64, 8, 24, 0.05, true},
      {Kind::kSarathi, 256, 64, 64, 0.01, true},
  };
  for (const Case& c : cases) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      INFO(fmt::format(
          "{} budget {} max_num_seqs {} blocks {} watermark {} prefix caching {} seed {}",
          name_of(c.kind), c.budget, c.max_num_seqs, c.blocks, c.watermark, c.prefix_caching,
          seed));
      std::int64_t preemptions = -1;
      CHECK(run_checked(c, seed, preemptions) == "");
      if (c.kind == Kind::kOrca) {
        CHECK(preemptions == 0);
      } else if (c.blocks <= 24) {
        CHECK(preemptions > 0);  // the small caches must exercise preemption
      }
    }
  }
}

TEST_CASE("Random workloads under async scheduling never idle with work waiting and return all KV",
          "[schedulers][kv]") {
  // Async scheduling holds the KV of requests finished in the step in flight while the next
  // batch is formed, which the step-by-step model above does not describe; these invariants
  // must hold all the same: a replica with outstanding requests always forms a batch, seats
  // never exceed max_num_seqs, every request finishes and every block comes back.
  for (const bool prefix_caching : {false, true}) {
    for (const std::int64_t blocks : {std::int64_t{14}, std::int64_t{16}, std::int64_t{24}}) {
      for (std::uint64_t seed : {1u, 2u, 3u}) {
        INFO("blocks " << blocks << " prefix caching " << prefix_caching << " seed " << seed);
        SchedulerOptions o;
        o.max_num_batched_tokens = 64;
        o.max_num_seqs = 8;
        o.async_scheduling = true;
        SchedulerHarness h(std::make_unique<SarathiScheduler>(o), KvCache(blocks, kBlockSize, 0));
        h.kv().set_prefix_caching(prefix_caching);
        std::mt19937_64 rng(seed);
        int added = 0;
        std::int64_t idle_with_work = 0;
        for (int step = 0; step < 100000 && h.finished().size() < kRequests; ++step) {
          for (int k = uniform(rng, 0, 1); k > 0 && added < kRequests; --k, ++added) {
            const std::int64_t group = prefix_caching ? uniform(rng, -1, 3) : -1;
            h.add(uniform(rng, 1, kMaxPrompt), uniform(rng, 1, kMaxOutput), group,
                  group >= 0 ? uniform(rng, 0, 80) : 0);
          }
          const Batch& b = h.form();
          if (b.entries.empty() && h.scheduler().num_outstanding() > 0) ++idle_with_work;
          CHECK(h.scheduler().num_running() <= o.max_num_seqs);
          CHECK(h.kv().used_blocks() <= h.kv().total_blocks());
          h.apply();
        }
        CHECK(idle_with_work == 0);
        CHECK(h.finished().size() == static_cast<std::size_t>(kRequests));
        h.form();  // releases the KV of the last step's finished requests
        CHECK(h.kv().used_blocks() == 0);
      }
    }
  }
}
