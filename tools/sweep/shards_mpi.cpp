// Shards over MPI (Open MPI from Debian's libopenmpi-dev, or any MPI): one gather to rank 0.
#include <cstdint>
#include <numeric>

#include <mpi.h>

#include "tools/sweep/shards.hpp"

namespace servesim::sweep {

Shards::Shards(int& argc, char**& argv) {
  if (!launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);  // TBB threads make no MPI calls
  initialised_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Shards::~Shards() {
  if (initialised_) MPI_Finalize();
}

std::vector<std::string> Shards::gather(const std::vector<std::string>& local) const {
  if (size_ == 1) return local;
  // Each rank sends its strings as one buffer: a length (8 bytes) before each.
  std::vector<char> buf;
  for (const auto& s : local) {
    const std::uint64_t n = s.size();
    buf.insert(buf.end(), reinterpret_cast<const char*>(&n),
               reinterpret_cast<const char*>(&n) + sizeof n);
    buf.insert(buf.end(), s.begin(), s.end());
  }
  const int mine_bytes = static_cast<int>(buf.size());
  std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(counts.size());
  MPI_Gather(&mine_bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<char> all;
  if (rank_ == 0) {
    std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
    all.resize(static_cast<std::size_t>(offsets.back()) + static_cast<std::size_t>(counts.back()));
  }
  MPI_Gatherv(buf.data(), mine_bytes, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t at = 0; at < all.size();) {
    std::uint64_t n = 0;
    std::copy(all.data() + at, all.data() + at + sizeof n, reinterpret_cast<char*>(&n));
    at += sizeof n;
    out.emplace_back(all.data() + at, static_cast<std::size_t>(n));
    at += static_cast<std::size_t>(n);
  }
  return out;
}

std::size_t Shards::sum(std::size_t n) const {
  if (size_ == 1) return n;
  auto v = static_cast<unsigned long long>(n);
  unsigned long long total = 0;
  MPI_Allreduce(&v, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return static_cast<std::size_t>(total);
}

bool Shards::built_with_mpi() { return true; }

}  // namespace servesim::sweep
