#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "costmodels/profile/vidur_profile.hpp"

namespace servesim::testing {

// A fresh folder under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("servesim-rf-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// The whole text of a file ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A synthetic Vidur mlp.csv for Llama-2-7b's dimensions: every op takes
// `scale` · (a + b · tokens / tp) ms over a grid of token counts, at the given TP degrees.
inline std::string synthetic_mlp(std::initializer_list<int> tps, double scale = 1.0) {
  std::string s;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    s += "time_stats." + std::string(vidur_op_name(static_cast<VidurOp>(i))) + ".median,";
  }
  s += "n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,"
       "num_tensor_parallel_workers\n";
  for (int tp : tps) {
    for (int t = 1; t <= 512; t = t < 8 ? t * 2 : t + 8) {
      for (std::size_t i = 0; i < kNumVidurOps; ++i) {
        const double a = 0.005 * static_cast<double>(i + 1);
        const double b = 0.0004 * static_cast<double>(i % 4 + 1);
        s += std::to_string(scale * (a + b * t / tp)) + ",";
      }
      s += "32,32,4096,11008,32000,True," + std::to_string(t) + "," + std::to_string(tp) + "\n";
    }
  }
  return s;
}

// The repository's Vidur compute profiles (data/vidur/profiling/compute).
inline std::string data_compute_dir() {
  return std::string(SERVESIM_DATA_DIR) + "/vidur/profiling/compute";
}

}  // namespace servesim::testing
