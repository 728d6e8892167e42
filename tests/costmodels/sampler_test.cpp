#include <catch2/catch.hpp>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "tests/costmodels/test_specs.hpp"

using namespace servesim;
using namespace servesim::testing;

namespace {

// LM head + sampler for `requests` decodes of a Llama-2-7B-like model with `vocab` entries, on
// the H100-like spec, with vLLM 0.11's sampler constants and the given sampling.
double head_ns(double requests, double vocab, bool top_p, bool penalties) {
  static const GpuSpec gpu = h100_like();
  ModelSpec model = llama2_7b_like();
  model.vocab_size = static_cast<int>(vocab);
  ReplicaSpec r;
  r.gpu = &gpu;
  r.model = &model;
  AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
  p.sampler_random_bytes = 46;
  p.sampler_top_p_bytes = 210;
  p.sampler_penalty_bytes = 85;
  p.sampling_top_p = top_p;
  p.sampling_penalties = penalties;
  return LayerPricer(r, p, AnalyticalTerms{}).edge_requests_ns(requests, true);
}

}  // namespace

TEST_CASE("the sampler's cost grows with the vocabulary and the batch", "[costmodels][sampler]") {
  for (const bool top_p : {false, true}) {
    for (const bool penalties : {false, true}) {
      INFO("top_p " << top_p << " penalties " << penalties);
      double last_batch = 0;
      for (const double b : {1.0, 8.0, 64.0, 256.0, 1024.0}) {
        const double t = head_ns(b, 128256, top_p, penalties);
        CHECK(t > last_batch);
        last_batch = t;
        double last_vocab = 0;
        for (const double v : {32000.0, 128256.0, 151936.0, 262144.0}) {
          const double tv = head_ns(b, v, top_p, penalties);
          CHECK(tv > last_vocab);
          last_vocab = tv;
        }
      }
    }
  }
}

TEST_CASE("top-p sorting and penalties are priced per request and vocabulary entry",
          "[costmodels][sampler]") {
  // Without sampling options the sampler is the one 4-byte pass priced before them.
  const double plain = head_ns(256, 128256, false, false);
  const double top_p = head_ns(256, 128256, true, false);
  const double both = head_ns(256, 128256, true, true);
  CHECK(top_p > plain);
  CHECK(both > top_p);
  // At 256 requests the bytes dominate the floors: the added time is the added bytes at the
  // sampling kernel's rate, 0.5 of 3352 GB/s here (the spec's constants).
  const double rate = 0.5 * 3352;  // bytes per ns
  CHECK(top_p - plain == Approx(256.0 * 128256 * (46 + 210) / rate).epsilon(0.02));
  CHECK(both - top_p == Approx(256.0 * 128256 * 85 / rate).epsilon(0.02));
}
