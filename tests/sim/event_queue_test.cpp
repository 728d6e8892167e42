#include "sim/engine/event_queue.hpp"

#include <random>
#include <vector>

#include <catch2/catch.hpp>

using servesim::EventQueue;

TEST_CASE("Events pop in time order", "[event_queue]") {
  EventQueue q;
  q.push(30, 0, 3);
  q.push(10, 0, 1);
  q.push(20, 0, 2);
  REQUIRE(q.size() == 3);
  CHECK(q.pop().target == 1);
  CHECK(q.pop().target == 2);
  CHECK(q.pop().target == 3);
  CHECK(q.empty());
}

TEST_CASE("Events at equal time pop in insertion order", "[event_queue]") {
  EventQueue q;
  for (int i = 0; i < 100; ++i) q.push(5, 0, i);
  q.push(4, 0, -1);
  CHECK(q.pop().target == -1);
  for (int i = 0; i < 100; ++i) CHECK(q.pop().target == i);
}

TEST_CASE("A random mix of pushes and pops stays ordered by time then sequence", "[event_queue]") {
  EventQueue q;
  std::mt19937_64 rng(7);
  std::int64_t last_time = 0;
  std::uint64_t last_seq = 0;
  bool have_last = false;
  for (int i = 0; i < 20000; ++i) {
    // Push only at or after the last popped time, as an event loop does.
    q.push(last_time + static_cast<std::int64_t>(rng() % 4), 0, i);
    if (rng() % 3 == 0) {
      const auto e = q.pop();
      if (have_last) {
        REQUIRE((e.time > last_time || (e.time == last_time && e.seq > last_seq)));
      }
      last_time = e.time;
      last_seq = e.seq;
      have_last = true;
    }
  }
}
