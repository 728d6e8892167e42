#include "workloads/closed_loop_base.hpp"

#include <algorithm>
#include <utility>

#include "sim/util/splitmix.hpp"
#include "workloads/mooncake_reader.hpp"

namespace servesim {

ClosedLoopBase::ClosedLoopBase(const ArrivalSpec& arrivals, const WorkloadOptions& options,
                               std::optional<std::int64_t> num_sessions, std::uint64_t seed,
                               std::string arrival_where)
    : rng_(stream_seed(seed, 4)),
      arrivals_(arrivals, seed, std::move(arrival_where)),
      options_(options),
      num_sessions_(num_sessions) {}

void ClosedLoopBase::draw_start() {
  if (starts_done_ || next_start_) return;
  if ((num_sessions_ && counts_.started >= *num_sessions_) || arrivals_.done()) {
    starts_done_ = true;
    return;
  }
  const SimTime t = arrivals_.next();
  if (options_.duration && t >= *options_.duration) {
    starts_done_ = true;
    return;
  }
  next_start_ = options_.start + t;
}

std::optional<RequestSpec> ClosedLoopBase::next() {
  if (options_.num_requests && yielded_ >= *options_.num_requests) return std::nullopt;
  draw_start();
  const bool start = next_start_ && (queue_.empty() || *next_start_ < queue_.front().spec.arrival);
  if (start) {
    const SimTime at = *next_start_;
    next_start_.reset();
    ++yielded_;
    return start_session(counts_.started++, at);
  }
  if (queue_.empty()) return std::nullopt;
  ++yielded_;
  std::pop_heap(queue_.begin(), queue_.end(), later);
  RequestSpec spec = std::move(queue_.back().spec);
  queue_.pop_back();
  return spec;
}

void ClosedLoopBase::give_back(RequestSpec spec) {
  --yielded_;
  push(std::move(spec));
}

void ClosedLoopBase::on_request_left_out(const RequestSpec& spec) {
  // The follow-ups arrive at or after spec.arrival, which is no earlier than anything still
  // queued: the order next() yields in holds. The subclasses count every request done without a
  // refusal as finished; this one was not.
  on_request_done(spec, spec.arrival, /*rejected=*/false);
  --counts_.requests_finished;
  ++counts_.requests_left_out;
}

void ClosedLoopBase::push(RequestSpec spec) {
  queue_.push_back(Queued{std::move(spec), seq_++});
  std::push_heap(queue_.begin(), queue_.end(), later);
}

const SessionCounts* session_counts(const Workload& workload) {
  if (const auto* c = dynamic_cast<const ClosedLoopBase*>(workload.closed_loop())) {
    return &c->session_counts();
  }
  return nullptr;
}

std::shared_ptr<const PrefixHashes> session_hashes(std::int64_t root, std::int32_t prompt_tokens,
                                                   std::int32_t shared_tokens,
                                                   std::int64_t branch) {
  auto h = std::make_shared<PrefixHashes>();
  h->block_tokens = kSessionHashTokens;
  const std::int64_t blocks =
      (std::int64_t{prompt_tokens} + kSessionHashTokens - 1) / kSessionHashTokens;
  h->chain.reserve(static_cast<std::size_t>(blocks));
  // The chain starts from the root, so different sessions never share a block; a block past the
  // shared part mixes in the branch, and every later block inherits that through the chain.
  std::int64_t chain = root;
  for (std::int64_t j = 0; j < blocks; ++j) {
    const bool shared = (j + 1) * kSessionHashTokens <= shared_tokens;
    chain = chain_hash(chain, shared ? j : ((branch + 1) << 32) + j);
    h->chain.push_back(chain);
  }
  return h;
}

}  // namespace servesim
