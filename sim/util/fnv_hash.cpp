#include "sim/util/fnv_hash.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"

namespace servesim {

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string file_fnv1a64(const std::string& path) {
  std::ifstream in = open_input_file(path, "a file to hash");
  std::ostringstream s;
  s << in.rdbuf();
  return fmt::format("{:016x}", fnv1a64(s.str()));
}

}  // namespace servesim
