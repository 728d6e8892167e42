#include "sim/engine/event_queue.hpp"

#include <algorithm>

namespace servesim {
namespace {
// std::push_heap builds a max-heap; "later" events compare greater-than to sink.
struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }
};
}  // namespace

void EventQueue::push(SimTime time, std::int32_t kind, std::int64_t target) {
  heap_.push_back(Event{time, next_seq_++, kind, target});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

Event EventQueue::pop() {
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  Event e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace servesim
