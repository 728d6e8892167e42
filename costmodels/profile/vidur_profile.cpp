#include "costmodels/profile/vidur_profile.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "costmodels/profile/csv_table.hpp"
#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

constexpr std::array<std::string_view, kNumVidurOps> kOpNames = {
    "emb",         "input_layernorm", "attn_pre_proj",
    "attn_rope",   "attn_post_proj",  "post_attention_layernorm",
    "mlp_up_proj", "mlp_act",         "mlp_down_proj",
    "add"};

// A count in a profile row: a whole number in [1, limit].
int positive_int(const CsvTable& t, std::size_t row, std::size_t col, double limit) {
  const double v = t.number(row, col);
  if (v < 1 || v != std::floor(v) || v > limit) {
    throw_input_error(t.source(), t.line(row), 0,
                      fmt::format("column '{}': value {} (expected a whole number in [1, {}])",
                                  t.column_name(col), t.cell(row, col), limit));
  }
  return static_cast<int>(v);
}

// Bounds far above any real profile that keep the casts and per-TP tables sane.
constexpr double kMaxTokens = 1 << 24;   // tokens in one profiled batch
constexpr double kMaxWorkers = 1 << 12;  // GPUs in a TP group or a collective
constexpr double kMaxDim = 1 << 24;      // heads, widths, vocabulary

std::vector<VidurMlpRow> rows_of(const CsvTable& t) {
  constexpr std::string_view kExpected = "a Vidur mlp.csv column";
  // The four projection GEMMs are required; a light op may be absent (phi-2 has no
  // post-attention norm), which reads as NaN in every row.
  constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);
  std::array<std::size_t, kNumVidurOps> op_col{};
  std::array<bool, kNumVidurOps> required{};
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    const std::string name = "time_stats." + std::string(kOpNames[i]) + ".median";
    const auto op = static_cast<VidurOp>(i);
    required[i] = op == VidurOp::kAttnPreProj || op == VidurOp::kAttnPostProj ||
                  op == VidurOp::kMlpUpProj || op == VidurOp::kMlpDownProj;
    op_col[i] = required[i] || t.has_column(name) ? t.column(name, kExpected) : kAbsent;
  }
  const std::size_t c_tokens = t.column("num_tokens", kExpected);
  const std::size_t c_tp = t.column("num_tensor_parallel_workers", kExpected);
  const std::size_t c_head = t.column("n_head", kExpected);
  const std::size_t c_kv = t.column("n_kv_head", kExpected);
  const std::size_t c_embd = t.column("n_embd", kExpected);
  const std::size_t c_exp = t.column("n_expanded_embd", kExpected);
  const std::size_t c_vocab = t.column("vocab_size", kExpected);
  const std::size_t c_gated = t.column("use_gated_mlp", kExpected);
  if (t.rows() == 0) {
    throw InputError(t.source() + ":2: no profile rows (expected one row per token count)");
  }
  std::vector<VidurMlpRow> rows;
  rows.reserve(t.rows());
  for (std::size_t r = 0; r < t.rows(); ++r) {
    VidurMlpRow row;
    row.line = t.line(r);
    for (std::size_t i = 0; i < kNumVidurOps; ++i) {
      // An empty cell reads as "not timed" (NaN) only for a light op; a GEMM needs its time.
      row.ms[i] = op_col[i] == kAbsent ? std::numeric_limits<double>::quiet_NaN()
                  : required[i]
                      ? t.number(r, op_col[i])
                      : t.number_or(r, op_col[i], std::numeric_limits<double>::quiet_NaN());
      if (row.ms[i] < 0) {
        throw_input_error(t.source(), row.line, 0,
                          "negative time in column '" + std::string(kOpNames[i]) + "'");
      }
    }
    row.num_tokens = positive_int(t, r, c_tokens, kMaxTokens);
    row.tp = positive_int(t, r, c_tp, kMaxWorkers);
    row.n_head = positive_int(t, r, c_head, kMaxDim);
    row.n_kv_head = positive_int(t, r, c_kv, kMaxDim);
    row.n_embd = positive_int(t, r, c_embd, kMaxDim);
    row.n_expanded_embd = positive_int(t, r, c_exp, kMaxDim);
    row.vocab_size = positive_int(t, r, c_vocab, kMaxDim);
    row.gated_mlp = t.boolean(r, c_gated);
    rows.push_back(row);
  }
  return rows;
}

std::vector<VidurNetworkRow> network_rows_of(const CsvTable& t, std::string_view collective) {
  const std::string expected = "a Vidur " + std::string(collective) + ".csv column";
  const std::size_t c_ms = t.column("time_stats." + std::string(collective) + ".median", expected);
  const std::size_t c_workers = t.column("num_workers", expected);
  const std::size_t c_size = t.column("size", expected);
  const std::size_t c_dpn = t.column("devices_per_node", expected);
  const std::size_t c_max = t.column("max_devices_per_node", expected);
  std::vector<VidurNetworkRow> rows;
  rows.reserve(t.rows());
  for (std::size_t r = 0; r < t.rows(); ++r) {
    VidurNetworkRow row;
    row.line = t.line(r);
    row.ms = t.number(r, c_ms);
    row.num_workers = positive_int(t, r, c_workers, kMaxWorkers);
    row.size_bytes = t.number(r, c_size);
    row.devices_per_node = positive_int(t, r, c_dpn, kMaxWorkers);
    row.max_devices_per_node = positive_int(t, r, c_max, kMaxWorkers);
    if (row.ms < 0 || row.size_bytes <= 0) {
      throw_input_error(t.source(), row.line, 0,
                        "non-positive size or negative time (expected size > 0, time ≥ 0)");
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

std::string_view vidur_op_name(VidurOp op) { return kOpNames[static_cast<std::size_t>(op)]; }

std::vector<VidurMlpRow> read_vidur_mlp(const std::string& path) {
  return rows_of(CsvTable::load(path));
}
std::vector<VidurMlpRow> parse_vidur_mlp(const std::string& text, const std::string& source) {
  return rows_of(CsvTable::parse(text, source));
}
std::vector<VidurNetworkRow> read_vidur_network(const std::string& path,
                                                std::string_view collective) {
  return network_rows_of(CsvTable::load(path), collective);
}
std::vector<VidurNetworkRow> parse_vidur_network(const std::string& text, const std::string& source,
                                                 std::string_view collective) {
  return network_rows_of(CsvTable::parse(text, source), collective);
}

}  // namespace servesim
