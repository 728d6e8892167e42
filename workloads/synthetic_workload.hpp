#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/engine/workload.hpp"
#include "workloads/arrival_process.hpp"
#include "workloads/length_sampler.hpp"
#include "workloads/request_shaper.hpp"
#include "workloads/workload_options.hpp"

namespace servesim {

// Synthetic arrivals paired with sampled lengths, generated one request per next() call: O(1)
// state (a length pool is fixed in size), so a 10M-request run holds no requests. Arrivals,
// lengths and prefix groups draw from separate seed streams. Ends after num_requests or at the
// first arrival ≥ start_s + duration_s, whichever comes first (staged arrivals also end after
// their last stage). Not thread-safe.
class SyntheticWorkload final : public Workload {
 public:
  // `arrival_where` positions an arrival past the horizon ("file:line:col" of the arrival section).
  SyntheticWorkload(const ArrivalSpec& arrivals, LengthSpec lengths, const WorkloadOptions& options,
                    std::uint64_t seed, std::string arrival_where = "workload.arrival");

  std::string_view name() const override { return "synthetic"; }
  std::optional<RequestSpec> next() override;
  std::optional<std::int64_t> expected_requests() const override { return expected_; }

  // For a trace length pool, zero_*_rows and error_rows count the pool file's rows.
  WorkloadCounts counts() const;

 private:
  ArrivalProcess arrivals_;
  LengthSampler lengths_;
  RequestShaper shaper_;
  std::optional<std::int64_t> expected_;  // num_requests
  bool done_ = false;
};

}  // namespace servesim
