#include "tools/common/stop_signals.hpp"

#include <csignal>

namespace servesim {

namespace {
std::atomic<bool> stop_requested{false};
volatile std::sig_atomic_t stop_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void on_stop_signal(int sig) {
  stop_signal = sig;
  stop_requested.store(true, std::memory_order_relaxed);
}
}  // namespace

const std::atomic<bool>* stop_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // the second signal takes its default action: ends the process
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return &stop_requested;
}

int received_stop_signal() { return stop_signal; }

}  // namespace servesim
