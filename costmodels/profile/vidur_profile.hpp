#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// The per-layer operations Vidur's mlp.csv times, in the order a layer runs them.
enum class VidurOp : std::size_t {
  kEmb,
  kInputLayernorm,
  kAttnPreProj,
  kAttnRope,
  kAttnPostProj,
  kPostAttentionLayernorm,
  kMlpUpProj,
  kMlpAct,
  kMlpDownProj,
  kAdd,
  kCount
};
inline constexpr std::size_t kNumVidurOps = static_cast<std::size_t>(VidurOp::kCount);
// Vidur's column stem, e.g. "attn_pre_proj".
std::string_view vidur_op_name(VidurOp op);
// The four projection GEMMs (qkv, o, gate+up, down); the other ops are light kernels.
constexpr bool is_projection_gemm(VidurOp op) {
  return op == VidurOp::kAttnPreProj || op == VidurOp::kAttnPostProj || op == VidurOp::kMlpUpProj ||
         op == VidurOp::kMlpDownProj;
}

// One row of profiling/compute/<gpu>/<org>/<model>/mlp.csv: median op times of one layer.
struct VidurMlpRow {
  int line = 0;
  int num_tokens = 0;
  int tp = 1;
  std::array<double, kNumVidurOps> ms{};  // median, milliseconds; NaN when the cell is empty
  int n_head = 0;
  int n_kv_head = 0;
  int n_embd = 0;
  int n_expanded_embd = 0;
  int vocab_size = 0;
  bool gated_mlp = true;
};

// One row of profiling/network/<node>/{all_reduce,send_recv}.csv.
struct VidurNetworkRow {
  int line = 0;
  int num_workers = 0;
  int devices_per_node = 0;
  int max_devices_per_node = 0;
  double size_bytes = 0;
  double ms = 0;  // median
};

// Readers of Vidur's CSV profiles. Every missing column, unparsable cell or impossible value is
// an InputError "file:line: …"; nothing is skipped silently.
std::vector<VidurMlpRow> read_vidur_mlp(const std::string& path);
std::vector<VidurMlpRow> parse_vidur_mlp(const std::string& text, const std::string& source);
// `collective` is "all_reduce" or "send_recv" (the column stem).
std::vector<VidurNetworkRow> read_vidur_network(const std::string& path,
                                                std::string_view collective);
std::vector<VidurNetworkRow> parse_vidur_network(const std::string& text, const std::string& source,
                                                 std::string_view collective);

}  // namespace servesim
