// Shards for a build without MPI: always one process.
#include "sim/config/input_error.hpp"
#include "tools/sweep/shards.hpp"

namespace servesim::sweep {

Shards::Shards(int&, char**&) {
  if (launched_by_mpi()) {
    throw InputError(
        "sweep: started by an MPI launcher, but this build has no MPI (expected a build with "
        "libopenmpi-dev installed, or a plain `sweep` without mpirun)");
  }
}

Shards::~Shards() = default;

std::vector<std::string> Shards::gather(const std::vector<std::string>& local) const {
  return local;
}

std::size_t Shards::sum(std::size_t n) const { return n; }

bool Shards::built_with_mpi() { return false; }

}  // namespace servesim::sweep
