#include "tools/costmodel/placement.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

std::size_t gpus_of(const PriceTable& price) { return price.empty() ? 0 : price[0].size(); }

// makespan_ns with the per-GPU loads in `load` (resized and overwritten).
double makespan_into(const std::vector<int>& gpu_of, const PriceTable& price,
                     std::vector<double>& load) {
  load.assign(gpus_of(price), 0.0);
  for (std::size_t j = 0; j < gpu_of.size(); ++j) {
    const auto g = static_cast<std::size_t>(gpu_of[j]);
    load[g] += price[j][g];
  }
  return load.empty() ? 0.0 : *std::max_element(load.begin(), load.end());
}

}  // namespace

double makespan_ns(const std::vector<int>& gpu_of, const PriceTable& price) {
  std::vector<double> load;
  return makespan_into(gpu_of, price, load);
}

Placement earliest_finish(const PriceTable& price) {
  const std::size_t n = price.size();
  const std::size_t gpus = gpus_of(price);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto size = [&](std::size_t j) { return *std::min_element(price[j].begin(), price[j].end()); };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return size(a) > size(b); });
  Placement p;
  p.gpu_of.assign(n, 0);
  std::vector<double> load(gpus, 0.0);
  for (const std::size_t j : order) {
    std::size_t best = 0;
    for (std::size_t g = 1; g < gpus; ++g) {
      if (load[g] + price[j][g] < load[best] + price[j][best]) best = g;
    }
    load[best] += price[j][best];
    p.gpu_of[j] = static_cast<int>(best);
  }
  p.makespan_ns = makespan_ns(p.gpu_of, price);
  return p;
}

double earliest_finish_makespan_over_orders(const PriceTable& price, const PriceTable& truth) {
  const std::size_t gpus = gpus_of(price);
  if (gpus == 0) return 0;
  double sum = 0;
  PriceTable rotated = price;
  std::vector<int> gpu_of(price.size());
  for (std::size_t k = 0; k < gpus; ++k) {
    for (std::size_t j = 0; j < price.size(); ++j) {
      for (std::size_t g = 0; g < gpus; ++g) rotated[j][g] = price[j][(g + k) % gpus];
    }
    const Placement p = earliest_finish(rotated);
    for (std::size_t j = 0; j < price.size(); ++j) {
      gpu_of[j] = static_cast<int>((static_cast<std::size_t>(p.gpu_of[j]) + k) % gpus);
    }
    sum += makespan_ns(gpu_of, truth);
  }
  return sum / static_cast<double>(gpus);
}

Placement brute_force(const PriceTable& price, std::int64_t max_assignments,
                      const std::string& what) {
  const std::size_t n = price.size();
  const auto gpus = static_cast<std::int64_t>(gpus_of(price));
  std::int64_t count = 1;
  for (std::size_t j = 0; j < n; ++j) {
    if (count > max_assignments / std::max<std::int64_t>(gpus, 1)) {
      throw InputError(fmt::format(
          "{}: the oracle enumerates every assignment, {}^{} here, more than its limit of {} "
          "(expected fewer pieces or GPUs)",
          what, gpus, n, max_assignments));
    }
    count *= gpus;
  }
  Placement best;
  best.makespan_ns = INFINITY;
  std::vector<int> a(n, 0);
  std::vector<double> load;
  for (std::int64_t k = 0; k < count; ++k) {
    std::int64_t rest = k;  // gpu_of in base `gpus`, piece 0 most significant
    for (std::size_t j = n; j-- > 0;) {
      a[j] = static_cast<int>(rest % gpus);
      rest /= gpus;
    }
    const double m = makespan_into(a, price, load);
    if (m < best.makespan_ns) {
      best.makespan_ns = m;
      best.gpu_of = a;
    }
  }
  return best;
}

}  // namespace servesim
