#include "workloads/lora_adapter_workload.hpp"

#include <algorithm>
#include <cmath>

#include "sim/util/splitmix.hpp"

namespace servesim {

LoraAdapterWorkload::LoraAdapterWorkload(std::unique_ptr<Workload> inner, const LoraConfig& config,
                                         std::uint64_t seed)
    : inner_(std::move(inner)), base_fraction_(config.base_fraction), rng_(seed), seed_(seed) {
  inner_->set_lora_adapters(config.num_adapters);
  inner_names_ = inner_->names_adapters();
  cdf_.resize(static_cast<std::size_t>(config.num_adapters));
  double sum = 0;
  for (std::size_t k = 0; k < cdf_.size(); ++k) {
    sum += std::pow(static_cast<double>(k + 1), -config.zipf_s);
    cdf_[k] = sum;
  }
  for (double& c : cdf_) c /= sum;
  cdf_.back() = 1;
}

std::int32_t LoraAdapterWorkload::draw() {
  // Two draws per request whatever the outcome, so one request's draw never shifts the next's.
  const double base = rng_.uniform01();
  const double u = rng_.uniform01();
  return pick(base, u);
}

std::int32_t LoraAdapterWorkload::session_adapter(std::int64_t session) const {
  RandomSource r(stream_seed(seed_, static_cast<std::uint64_t>(session)));
  const double base = r.uniform01();
  const double u = r.uniform01();
  return pick(base, u);
}

std::int32_t LoraAdapterWorkload::pick(double base, double u) const {
  if (base < base_fraction_) return -1;
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  return static_cast<std::int32_t>(
      std::min<std::ptrdiff_t>(it - cdf_.begin(), static_cast<std::ptrdiff_t>(cdf_.size()) - 1));
}

std::optional<RequestSpec> LoraAdapterWorkload::next() {
  std::optional<RequestSpec> spec = inner_->next();
  if (spec && !inner_names_) {
    spec->adapter = spec->session >= 0 ? session_adapter(spec->session) : draw();
  }
  return spec;
}

}  // namespace servesim
