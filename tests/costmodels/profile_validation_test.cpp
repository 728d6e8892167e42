#include "costmodels/analytical/profile_validation.hpp"

#include <cmath>
#include <functional>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/costmodels/test_specs.hpp"

using namespace servesim;

namespace {
// A profile row of `model` (its dimensions) at `tp` and `tokens`, every op timed at `ms`.
VidurMlpRow row_of(const ModelSpec& model, int line, int tp, int tokens, double ms) {
  VidurMlpRow r;
  r.line = line;
  r.num_tokens = tokens;
  r.tp = tp;
  r.n_head = model.num_heads;
  r.n_kv_head = model.num_kv_heads;
  r.n_embd = model.hidden_size;
  r.n_expanded_embd = model.intermediate_size;
  r.vocab_size = model.vocab_size;
  r.gated_mlp = model.gated_mlp;
  r.ms.fill(ms);
  return r;
}

// Sets every op of `rows` to the model's own prediction × factor(prediction): "measured"
// times whose errors the test chooses.
void time_as_predicted(std::vector<VidurMlpRow>& rows, const GpuSpec& gpu, const ModelSpec& model,
                       const AnalyticalParams& params,
                       const std::function<double(const ProfileValidation::Residual&)>& factor) {
  const ProfileValidation probe =
      validate_profile(rows, "m", gpu, &model, params, AnalyticalTerms{}, true);
  REQUIRE(probe.residuals.size() == rows.size() * kNumVidurOps);
  for (const auto& res : probe.residuals) {
    for (VidurMlpRow& r : rows) {
      if (r.tp != res.tp || r.num_tokens != res.tokens) continue;
      r.ms[static_cast<std::size_t>(res.op)] = res.predicted_ns * factor(res) * 1e-6;
    }
  }
}
}  // namespace

TEST_CASE("ErrorStats keeps MAPE, signed error and the time-weighted error apart",
          "[costmodels][validation]") {
  ErrorStats e;
  e.add(110, 100);  // +10%
  e.add(5, 10);     // −50%
  CHECK(e.mape() == Approx(30.0));
  CHECK(e.mspe() == Approx(-20.0));
  CHECK(e.wape() == Approx(100.0 * (10 + 5) / 110));  // the long op weighs more
  ErrorStats m;
  m.add(90, 100);
  e.merge(m);
  CHECK(e.n == 3);
  CHECK(e.wape() == Approx(100.0 * 25 / 210));
}

TEST_CASE(
    "profile validation splits every op into decode-like and prefill-like rows and weighs "
    "it by its share of the block's time",
    "[costmodels][validation]") {
  const GpuSpec gpu = testing::a100_like();
  const AnalyticalParams params = AnalyticalParams::for_gpu(gpu);
  const ModelSpec model = testing::llama2_7b_like();
  std::vector<VidurMlpRow> rows = {row_of(model, 2, 1, 64, 1.0), row_of(model, 3, 1, 2048, 1.0)};
  // "Measured" = predicted × 1.25 on the decode row's GEMMs, × 0.5 on its light ops, and exact
  // on the prefill row.
  time_as_predicted(rows, gpu, model, params, [](const ProfileValidation::Residual& res) {
    if (res.tokens != 64) return 1.0;
    return is_projection_gemm(res.op) ? 1.25 : 0.5;
  });
  const ProfileValidation v = validate_profile(rows, "m", gpu, &model, params, AnalyticalTerms{});
  const ProfileValidation::Slice& s = v.slices.front();
  const auto up = static_cast<std::size_t>(VidurOp::kMlpUpProj);
  const auto add = static_cast<std::size_t>(VidurOp::kAdd);
  CHECK(s.decode_ops[up].mape() == Approx(20.0));    // |1 − 1.25| / 1.25
  CHECK(s.decode_ops[add].mape() == Approx(100.0));  // |1 − 0.5| / 0.5
  CHECK(s.prefill_ops[up].mape() == Approx(0.0).margin(1e-9));
  CHECK(s.ops[up].mape() == Approx(10.0));
  CHECK(s.ops[up].n == 2);
  // Shares and error points by hand from the measured times.
  double block = 0;
  double up_meas = 0;
  double add_err = 0;
  for (const VidurMlpRow& r : rows) {
    for (std::size_t i = 0; i < kNumVidurOps; ++i) block += r.ms[i];
    up_meas += r.ms[up];
  }
  add_err = rows[0].ms[add] * 1.0;  // predicted − measured = 2·m − m on the decode row
  CHECK(s.time_share(up) == Approx(100 * up_meas / block));
  CHECK(s.block_error_points(add) == Approx(100 * add_err / block));
  CHECK(s.block_error_points(up) == Approx(100 * rows[0].ms[up] * 0.2 / block));
  double shares = 0;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) shares += s.time_share(i);
  CHECK(shares == Approx(100.0));
  double gemm_share = 0;
  double light_points = 0;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    if (is_projection_gemm(static_cast<VidurOp>(i))) gemm_share += s.time_share(i);
    if (!is_projection_gemm(static_cast<VidurOp>(i))) light_points += s.block_error_points(i);
  }
  CHECK(s.light_time_share() == Approx(100.0 - gemm_share));
  CHECK(s.light_error_points() == Approx(light_points));
  CHECK(s.light_error_points() > 0);
}

TEST_CASE("an op's shape keeps what decides its work: norms ignore TP and GEMMs split by it",
          "[costmodels][validation]") {
  const ModelSpec m = testing::llama2_7b_like();
  const auto shape = [&m](int tp, VidurOp op) { return vidur_op_shape(m, tp, op, 512); };
  CHECK(shape(1, VidurOp::kInputLayernorm) == shape(4, VidurOp::kInputLayernorm));
  CHECK(shape(1, VidurOp::kAdd) == shape(8, VidurOp::kAdd));
  CHECK(shape(1, VidurOp::kAttnPreProj) != shape(2, VidurOp::kAttnPreProj));
  CHECK(shape(1, VidurOp::kMlpDownProj) != shape(2, VidurOp::kMlpDownProj));
  // The same numbers under another op never collide, and neither do other token counts.
  CHECK(shape(1, VidurOp::kInputLayernorm) != shape(1, VidurOp::kPostAttentionLayernorm));
  CHECK(vidur_op_shape(m, 1, VidurOp::kAdd, 512) != vidur_op_shape(m, 1, VidurOp::kAdd, 513));
  ModelSpec ln = m;
  ln.layer_norm = true;
  CHECK(vidur_op_shape(ln, 1, VidurOp::kInputLayernorm, 512) != shape(1, VidurOp::kInputLayernorm));
  // Past one KV head a rank the heads are replicated, as the model prices them: 8 KV heads at
  // TP 16 are one head a rank, the same KV width as at TP 8.
  ModelSpec gqa = m;
  gqa.num_kv_heads = 8;
  CHECK(vidur_op_shape(gqa, 16, VidurOp::kAttnPreProj, 512)[3] ==
        gqa.num_heads * gqa.head_dim / 16 + 2 * gqa.head_dim);
  CHECK(vidur_op_shape(gqa, 8, VidurOp::kAttnPreProj, 512)[3] ==
        gqa.num_heads * gqa.head_dim / 8 + 2 * gqa.head_dim);
  // q/k/v is one fused GEMM: its key is its width, however the heads split it. Llama-2-7B at
  // TP 4 (1024 + 2·1024) and a Llama-3-8B-like model (8 KV heads) at TP 2 (2048 + 2·512) time the
  // same 512 × 4096 × 3072 GEMM.
  CHECK(shape(4, VidurOp::kAttnPreProj) == vidur_op_shape(gqa, 2, VidurOp::kAttnPreProj, 512));
  CHECK(shape(4, VidurOp::kAttnRope) != vidur_op_shape(gqa, 2, VidurOp::kAttnRope, 512));
  // o_proj: K = heads·head_dim / tp, N = hidden.
  const VidurOpShape o = shape(4, VidurOp::kAttnPostProj);
  CHECK(o[2] == m.num_heads * m.head_dim / 4);
  CHECK(o[3] == m.hidden_size);
}

TEST_CASE(
    "profile reproducibility scores each repeated time against the best single value for its "
    "shape and the model on the same times",
    "[costmodels][validation]") {
  const GpuSpec gpu = testing::a100_like();
  const AnalyticalParams params = AnalyticalParams::for_gpu(gpu);
  const ModelSpec model = testing::llama2_7b_like();
  auto row = [&model](int tp, int tokens, double ms) { return row_of(model, 2, tp, tokens, ms); };
  // Model "a" at TP1 (1 ms per op) and TP2 (2 ms); model "b" of the same dimensions at TP1
  // (1.5 ms). A 128-token row of "a" has no repeat anywhere.
  std::vector<ProfileValidation> results = {
      validate_profile({row(1, 64, 1.0), row(2, 64, 2.0), row(1, 128, 3.0)}, "a", gpu, &model,
                       params, AnalyticalTerms{}, true),
      validate_profile({row(1, 64, 1.5)}, "b", gpu, &model, params, AnalyticalTerms{}, true),
      // A row timed 0 is no measurement: it joins no shape.
      validate_profile({row(1, 64, 0.0)}, "z", gpu, &model, params, AnalyticalTerms{}, true)};
  const ProfileReproducibility r = profile_reproducibility(results);
  const auto& qkv = r.ops[static_cast<std::size_t>(VidurOp::kAttnPreProj)];
  // qkv at TP1 is timed twice (1.0 in "a", 1.5 in "b"); TP2 and the 128-token row only once.
  CHECK(qkv.shapes == 1);
  CHECK(qkv.floor.n == 2);
  // Σ|c − t|/t over {1.0, 1.5} is c − 1 + 1 − c/1.5 on [1, 1.5]: least at c = 1.0.
  CHECK(qkv.floor.mape() == Approx(100.0 * (0.0 + 0.5 / 1.5) / 2));
  // The norm does not depend on TP: 1.0, 2.0 and 1.5 are one shape. The weights 1/t are 1,
  // 2/3 and 1/2 (half of them: 13/12); sorted, the weight first reaches half at 1.5.
  const auto& norm = r.ops[static_cast<std::size_t>(VidurOp::kInputLayernorm)];
  CHECK(norm.shapes == 1);
  CHECK(norm.floor.n == 3);
  CHECK(norm.floor.mape() == Approx(100.0 * (0.5 / 1.0 + 0.5 / 2.0 + 0.0) / 3));
  // No single value does better: a grid over [0.5, 2.5] never beats it.
  for (double c = 0.5; c <= 2.5; c += 0.01) {
    const double mape =
        100.0 * (std::abs(c - 1.0) / 1.0 + std::abs(c - 2.0) / 2.0 + std::abs(c - 1.5) / 1.5) / 3;
    CHECK(mape >= norm.floor.mape() - 1e-9);
  }
  // The model's error on exactly those three times.
  ErrorStats model_err;
  for (const auto& v : results) {
    for (const auto& e : v.residuals) {
      if (e.op == VidurOp::kInputLayernorm && e.tokens == 64) {
        model_err.add(e.predicted_ns, e.measured_ns);
      }
    }
  }
  CHECK(model_err.n == 3);
  CHECK(norm.model.mape() == Approx(model_err.mape()));
  // A single profile with no repeats has nothing to report.
  const ProfileReproducibility none = profile_reproducibility({results[1], results[2]});
  for (const auto& o : none.ops) CHECK(o.shapes == 0);
}

TEST_CASE(
    "between files the same shape is compared across TP degrees as higher over lower and across "
    "models of equal TP as larger over smaller",
    "[costmodels][validation]") {
  const GpuSpec gpu = testing::a100_like();
  const AnalyticalParams params = AnalyticalParams::for_gpu(gpu);
  const ModelSpec model = testing::llama2_7b_like();
  auto row = [&model](int line, int tp, int tokens, double ms) {
    return row_of(model, line, tp, tokens, ms);
  };
  // Model "a": TP1 2.0 ms, TP4 1.5 ms and a repeat of its TP1 row at 2.2 ms (same file: no pair);
  // model "b" of equal dimensions: TP1 2.5 ms, and at 64 tokens TP1 0.019 ms against "a"'s TP1
  // 0.010 ms (under 20 µs: no pair). Every op of a row takes the row's time.
  const std::vector<ProfileValidation> results = {
      validate_profile(
          {row(2, 1, 256, 2.0), row(3, 4, 256, 1.5), row(4, 1, 256, 2.2), row(5, 1, 64, 0.010)},
          "a", gpu, &model, params, AnalyticalTerms{}, true),
      validate_profile({row(2, 1, 256, 2.5), row(3, 1, 64, 0.019)}, "b", gpu, &model, params,
                       AnalyticalTerms{}, true)};
  const ProfileReproducibility r = profile_reproducibility(results);
  using Kind = ProfileReproducibility::Kind;
  // Norms and adds keep their shape at every TP. For each of the three, the TP4 time 1.5 pairs
  // with the three TP1 times (2.0 and 2.2 in "a", 2.5 in "b") as 1.5 / t − 1; the TP1 times of
  // "a" pair with "b" as 2.5 / t − 1 but not with each other.
  const auto& norm_add = r.between[static_cast<std::size_t>(Kind::kNormAdd)];
  REQUIRE(norm_add.across_tp.size() == 1);
  const auto& [tps, v] = *norm_add.across_tp.begin();
  CHECK(tps == std::pair<int, int>{1, 4});
  CHECK(v.size() == 3 * 3);
  CHECK(*std::min_element(v.begin(), v.end()) == Approx(1.5 / 2.5 - 1));
  CHECK(*std::max_element(v.begin(), v.end()) == Approx(1.5 / 2.0 - 1));
  CHECK(norm_add.equal_tp.size() == 2 * 3);
  for (const double d : norm_add.equal_tp) {
    CHECK((d == Approx(2.5 / 2.0 - 1) || d == Approx(2.5 / 2.2 - 1)));
  }
  // GEMMs change shape with TP: only the TP1 pairs of "a" and "b" (four projections, two TP1
  // rows of "a") remain; RoPE, the activation and the embedding are in neither kind.
  const auto& gemm = r.between[static_cast<std::size_t>(Kind::kGemm)];
  CHECK(gemm.across_tp.empty());
  CHECK(gemm.equal_tp.size() == 4 * 2);
  // The order of the files does not matter.
  const ProfileReproducibility swapped = profile_reproducibility({results[1], results[0]});
  std::vector<double> x = swapped.between[static_cast<std::size_t>(Kind::kNormAdd)].equal_tp;
  std::vector<double> y = norm_add.equal_tp;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  CHECK(x == y);
}

TEST_CASE(
    "the file offset removes an error shared by a whole TP file and none of an error of "
    "shape",
    "[costmodels][validation]") {
  const GpuSpec gpu = testing::a100_like();
  const AnalyticalParams params = AnalyticalParams::for_gpu(gpu);
  const ModelSpec model = testing::llama2_7b_like();
  std::vector<VidurMlpRow> rows;
  for (int tp : {1, 2}) {
    for (int tokens : {16, 256, 1024, 4096}) rows.push_back(row_of(model, 2, tp, tokens, 1.0));
  }
  // "Measured": the TP1 file runs the model's times × 1.1 throughout; the TP2 file runs them
  // exactly on two rows and × 0.8 / × 1.25 on the others (±20% of shape, no common factor).
  time_as_predicted(rows, gpu, model, params, [](const ProfileValidation::Residual& res) {
    if (res.tp == 1) return 1.1;
    return res.tokens == 256 ? 0.8 : res.tokens == 1024 ? 1.25 : 1.0;
  });
  const ProfileValidation v = validate_profile(rows, "m", gpu, &model, params, AnalyticalTerms{});
  REQUIRE(v.slices.size() == 3);
  const ProfileValidation::Slice& tp1 = v.slices[1];
  const ProfileValidation::Slice& tp2 = v.slices[2];
  CHECK(tp1.block.mape() == Approx(100 * 0.1 / 1.1));
  CHECK(tp1.offset_scale == Approx(1.1));
  CHECK(tp1.offset_block.mape() == Approx(0).margin(1e-9));
  // TP2: errors 0, 0, |1 − 0.8|/0.8 = 25%, |1 − 1.25|/1.25 = 20%; scale 1 keeps them (no scale
  // does better: the weighted median of m/p = {0.8, 1, 1, 1.25} with weights p/m is 1).
  CHECK(tp2.offset_scale == Approx(1.0));
  CHECK(tp2.offset_block.mape() == Approx(tp2.block.mape()));
  CHECK(tp2.block.mape() == Approx((25.0 + 20.0) / 4));
  // The merged slice keeps each file's own scale.
  const ProfileValidation::Slice& all = v.slices.front();
  CHECK(all.offset_scale == 0);
  CHECK(all.offset_block.n == 8);
  CHECK(all.offset_block.mape() == Approx((25.0 + 20.0) / 8));
}

TEST_CASE("the GEMMs-alone block prices the four GEMMs and takes every light op as measured",
          "[costmodels][validation]") {
  const GpuSpec gpu = testing::a100_like();
  const AnalyticalParams params = AnalyticalParams::for_gpu(gpu);
  const ModelSpec model = testing::llama2_7b_like();
  std::vector<VidurMlpRow> rows = {row_of(model, 2, 1, 64, 1.0), row_of(model, 3, 1, 2048, 1.0)};
  // Light ops measured at half their prediction everywhere; GEMMs exact on the prefill row and
  // 1.25 × the prediction on the decode row.
  time_as_predicted(rows, gpu, model, params, [](const ProfileValidation::Residual& res) {
    if (!is_projection_gemm(res.op)) return 0.5;
    return res.tokens == 64 ? 1.25 : 1.0;
  });
  const ProfileValidation v = validate_profile(rows, "m", gpu, &model, params, AnalyticalTerms{});
  const ProfileValidation::Slice& s = v.slices.front();
  // By hand: per row, predicted = GEMMs as priced + light as measured.
  double expected = 0;
  for (const VidurMlpRow& r : rows) {
    double gemms = 0;
    double light = 0;
    for (std::size_t i = 0; i < kNumVidurOps; ++i) {
      (is_projection_gemm(static_cast<VidurOp>(i)) ? gemms : light) += r.ms[i];
    }
    const double priced = r.num_tokens == 64 ? gemms / 1.25 : gemms;
    expected += std::abs(priced + light - (gemms + light)) / (gemms + light);
  }
  CHECK(s.gemm_block.n == 2);
  CHECK(s.gemm_block.mape() == Approx(100 * expected / 2));
  CHECK(s.gemm_block.mape() > 0);
  // The light ops' error is not in it: the whole block's error is larger.
  CHECK(s.block.mape() > s.gemm_block.mape());
}
