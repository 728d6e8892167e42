#pragma once

#include <atomic>

namespace servesim {

// Installs SIGINT and SIGTERM handlers that set the returned flag (a second signal ends the
// process at once, as without them). received_stop_signal() is the signal that set it, or 0.
const std::atomic<bool>* stop_on_signals();
int received_stop_signal();

}  // namespace servesim
