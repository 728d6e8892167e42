#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/time.hpp"

namespace servesim {

// One scheduled event: what happens (`kind`, interpreted by the engine) to whom (`target`).
struct Event {
  SimTime time = 0;
  std::uint64_t seq = 0;  // insertion order, assigned by the queue
  std::int32_t kind = 0;
  std::int64_t target = 0;
};

// Min-heap of events ordered by (time, insertion sequence): events at equal time pop in the
// order they were pushed, which makes every run deterministic.
// Invariant: pop() returns events in non-decreasing (time, seq) order.
class EventQueue {
 public:
  void push(SimTime time, std::int32_t kind, std::int64_t target);
  Event pop();  // precondition: !empty()
  const Event& top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

 private:
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace servesim
