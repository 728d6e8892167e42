#include <cstdlib>

#include "tools/sweep/shards.hpp"

namespace servesim::sweep {

bool Shards::launched_by_mpi() {
  // Open MPI's mpirun, MPICH/Intel MPI's hydra and Slurm's PMI2, PMIx (Open MPI 5, srun).
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

}  // namespace servesim::sweep
