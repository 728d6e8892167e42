#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/engine/replica_scheduler.hpp"

namespace servesim::test {

// A replica scheduler that only counts: each request a router places adds one to its outstanding
// count, which a router test may also set; it never forms a batch. Its token budget and seat
// limit are what the test gives.
class LoadOnlyScheduler : public ReplicaScheduler {
 public:
  explicit LoadOnlyScheduler(std::int32_t token_budget = 0, std::int32_t seat_limit = 0)
      : budget_(token_budget), seats_(seat_limit) {}
  std::string_view name() const override { return "load_only"; }
  void enqueue(Request*, SimTime) override { ++outstanding_; }
  void next_batch(SimTime, KvCache&, Batch&) override {}
  void complete_batch(const Batch&, std::span<Request* const>, SimTime, KvCache&) override {}
  std::int64_t num_outstanding() const override { return outstanding_; }
  std::int64_t num_running() const override { return 0; }
  std::int64_t prefill_backlog_tokens() const override { return 0; }
  void decode_contexts(std::vector<std::int32_t>&, std::vector<std::int32_t>&) const override {}
  std::int32_t token_budget() const override { return budget_; }
  std::int32_t seat_limit() const override { return seats_; }
  std::int64_t outstanding_ = 0;

 private:
  std::int32_t budget_;
  std::int32_t seats_;
};

}  // namespace servesim::test
