#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <ostream>

namespace servesim {

// A progress bar with an ETA, drawn at most every 0.2 s on the stream the command hands in (its
// stderr on a terminal; nullptr: counts only), for the tools that run many simulations (sweep,
// plan, sim2real). Thread-safe: workers call done_one() as their runs end.
class Progress {
 public:
  Progress(std::ostream* out, std::size_t total);
  // More runs to come (a capacity search learns its runs as it goes).
  void add_total(std::size_t n) { total_ += n; }
  void done_one();
  // Ends the bar's line.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream* out_;
  std::atomic<std::size_t> total_;
  std::atomic<std::size_t> done_{0};
  Clock::time_point start_;
  std::mutex mutex_;  // one writer of the line at a time
  double last_ = -1;  // seconds since start_ of the last drawing
};

}  // namespace servesim
