#pragma once

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <utility>

#include <pybind11/pybind11.h>

namespace servesim::python {

// Runs `work` (which must not touch Python) on a thread of its own while this thread, the GIL
// released between looks, checks every 100 ms for a pending signal. A signal's exception
// (KeyboardInterrupt from Ctrl-C) sets `stop`, which `work` obeys by returning what it has; that
// exception is returned beside work's result (None when there was none), for the caller to raise
// once it holds the partial result. An exception from `work` itself propagates as it is.
template <class Work>
auto run_interruptible(std::atomic<bool>& stop, Work&& work)
    -> std::pair<decltype(work()), pybind11::object> {
  namespace py = pybind11;
  std::packaged_task<decltype(work())()> task(std::forward<Work>(work));
  auto done = task.get_future();
  std::thread worker(std::move(task));
  py::object interrupt = py::none();
  for (;;) {
    bool ready = false;
    {
      const py::gil_scoped_release nogil;
      ready = done.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready;
    }
    if (ready) break;
    if (interrupt.is_none() && PyErr_CheckSignals() != 0) {
      interrupt = py::error_already_set().value();
      stop = true;
    }
  }
  worker.join();
  return {done.get(), interrupt};
}

}  // namespace servesim::python
