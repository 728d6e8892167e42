#include "workloads/benchmark_client_workload.hpp"

#include <algorithm>
#include <utility>

namespace servesim {

namespace {
// The prefix group of the first request and its warm-up copies: no other request has one.
constexpr std::int64_t kFirstPromptGroup = 0;
}  // namespace

BenchmarkClientWorkload::BenchmarkClientWorkload(const ClientSpec& client, LengthSpec lengths,
                                                 const WorkloadOptions& options, std::uint64_t seed)
    : client_(client),
      lengths_(std::move(lengths), seed),
      shaper_(options, seed),
      warming_up_(client.num_warmups > 0) {
  free_slots_.assign(static_cast<std::size_t>(client_.max_concurrency), 0);
}

std::pair<std::int32_t, std::int32_t> BenchmarkClientWorkload::first_lengths() {
  if (!first_) first_ = lengths_.next();
  return *first_;
}

std::optional<RequestSpec> BenchmarkClientWorkload::next() {
  if (held_) {
    RequestSpec spec = std::move(*held_);
    held_.reset();
    return spec;
  }
  if (free_slots_.empty()) return std::nullopt;
  const SimTime at = free_slots_.front();
  if (warming_up_) {
    if (warmups_sent_ == client_.num_warmups) return std::nullopt;  // gathering the warm-ups
    free_slots_.pop_front();
    ++warmups_sent_;
    const auto [prompt, output] = first_lengths();
    RequestSpec spec = shaper_.shape(at, prompt, output, kFirstPromptGroup, prompt);
    spec.warmup = true;
    return spec;
  }
  if (sent_ == client_.num_prompts) return std::nullopt;
  free_slots_.pop_front();
  const bool first = sent_++ == 0;
  if (first) {
    const auto [prompt, output] = first_lengths();
    return shaper_.shape(at, prompt, output, kFirstPromptGroup, prompt);
  }
  const auto [prompt, output] = lengths_.next();
  return shaper_.shape(at, prompt, output);
}

void BenchmarkClientWorkload::on_request_done(const RequestSpec& spec, SimTime now,
                                              bool /*rejected*/) {
  // A refused request frees its slot as a finished one does: the client reads the error and
  // sends the next.
  const SimTime at = std::max<SimTime>(0, now - shaper_.options().start);
  if (spec.warmup) {
    ++warmups_done_;
    if (warmups_sent_ < client_.num_warmups) {
      free_slots_.push_back(at);
    } else if (warmups_done_ == client_.num_warmups) {
      warming_up_ = false;
      free_slots_.assign(static_cast<std::size_t>(client_.max_concurrency), at);
    }
    return;
  }
  if (sent_ < client_.num_prompts) free_slots_.push_back(at);
}

void BenchmarkClientWorkload::give_back(RequestSpec spec) { held_ = std::move(spec); }

void BenchmarkClientWorkload::on_request_left_out(const RequestSpec& spec) {
  on_request_done(spec, spec.arrival, true);
}

}  // namespace servesim
