#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace servesim::sweep {

// The processes one sweep runs on: this process alone, or the ranks of an MPI job when the sweep
// was started by an MPI launcher (mpirun, srun) and built with MPI. Work item i belongs to rank
// i mod size; rank 0 gathers every result and writes every file, so the files are the same
// whatever the number of ranks. MPI is initialised only under a launcher: a plain `sweep` never
// touches it. Not thread-safe: call from the main thread only.
class Shards {
 public:
  // Throws InputError under a launcher when this build has no MPI (every rank would otherwise
  // run the whole sweep and write the same files).
  Shards(int& argc, char**& argv);
  ~Shards();
  Shards(const Shards&) = delete;
  Shards& operator=(const Shards&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool mine(std::size_t item) const {
    return static_cast<int>(item % static_cast<std::size_t>(size_)) == rank_;
  }
  // Every rank's strings on rank 0, in rank order (empty on the other ranks).
  std::vector<std::string> gather(const std::vector<std::string>& local) const;
  // The sum over the ranks of `n`, on every rank.
  std::size_t sum(std::size_t n) const;

  // Whether an MPI launcher started this process (its environment says so).
  static bool launched_by_mpi();
  static bool built_with_mpi();

 private:
  int rank_ = 0;
  int size_ = 1;
  bool initialised_ = false;
};

}  // namespace servesim::sweep
