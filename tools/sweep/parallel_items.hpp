#pragma once

#include <cstddef>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

namespace servesim::sweep {

// Runs f(i) for i in [0, n) on `threads` threads of a oneTBB arena, one task per item (the items
// of a study are whole simulations: few, long and uneven).
template <class F>
void parallel_items(std::size_t n, int threads, F&& f) {
  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, n, 1),
        [&](const tbb::blocked_range<std::size_t>& r) {
          for (std::size_t i = r.begin(); i != r.end(); ++i) f(i);
        },
        tbb::simple_partitioner());
  });
}

}  // namespace servesim::sweep
