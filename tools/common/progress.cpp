#include "tools/common/progress.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace servesim {

Progress::Progress(std::ostream* out, std::size_t total)
    : out_(out), total_(total), start_(Clock::now()) {}

void Progress::done_one() {
  const std::size_t done = ++done_;
  if (out_ == nullptr) return;
  const std::lock_guard lock(mutex_);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (done < total_.load() && elapsed - last_ < 0.2) return;
  last_ = elapsed;
  constexpr int kWidth = 30;
  const std::size_t total = std::max(total_.load(), done);
  const double f = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 0;
  const int filled = static_cast<int>(f * kWidth);
  const double eta = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
  *out_ << fmt::format("\r[{}{}] {}/{} runs  {:.1f} s  ETA {:.1f} s ",
                       std::string(static_cast<std::size_t>(filled), '#'),
                       std::string(static_cast<std::size_t>(kWidth - filled), '.'), done, total,
                       elapsed, eta)
        << std::flush;
}

void Progress::finish() {
  if (out_ != nullptr && done_ > 0) *out_ << "\n";
}

}  // namespace servesim
