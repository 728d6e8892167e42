// The LoRA kernels' term: adapter bytes by hand, and a step's cost growing with rank, distinct
// adapters and tokens; the wrapper adds it to any cost model.
#include <memory>

#include <catch2/catch.hpp>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "costmodels/lora/lora_cost_model.hpp"

using namespace servesim;

namespace {

// Llama-3.1-8B's attention shapes: hidden 4096, 32 query and 8 KV heads of 128, 32 layers.
ModelSpec lora_llama8b() {
  ModelSpec m;
  m.name = "llama";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 14336;
  m.vocab_size = 128256;
  return m;
}

// 1000 dense bf16 TFLOP/s and 2000 GB/s: 1e6 FLOP and 2000 bytes per ns.
GpuSpec lora_gpu() {
  GpuSpec g;
  g.name = "gpu";
  g.bf16_tflops = 1000;
  g.memory_bw_gb_per_s = 2000;
  return g;
}

LoraConfig lora_config_of(std::vector<std::int32_t> ranks) {
  LoraConfig c;
  c.num_adapters = 16;
  c.ranks = std::move(ranks);
  c.target_modules = {LoraModule::kQ, LoraModule::kK, LoraModule::kV, LoraModule::kO};
  c.max_loras = 4;
  c.max_cpu_loras = 4;
  return c;
}

}  // namespace

TEST_CASE("Adapter bytes are r·(d_in + d_out)·2 per module and layer, sharded like the base",
          "[lora][costmodels]") {
  const ModelSpec m = lora_llama8b();
  const LoraConfig c = lora_config_of({16});
  // q, o: 4096 + 4096; k, v: 4096 + 1024 per layer, tp 1.
  const double tp1 = 32.0 * 16 * ((4096 + 4096) * 2 + (4096 + 1024) * 2) * 2;
  CHECK(lora_adapter_bytes(c, 16, m, 1) == Approx(tp1));
  // tp 2: q, k, v split their outputs, o its input; the hidden side stays whole.
  const double tp2 = 32.0 * 16 * ((4096 + 2048) * 2 + (4096 + 512) * 2) * 2;
  CHECK(lora_adapter_bytes(c, 16, m, 2) == Approx(tp2));
  CHECK(lora_adapter_bytes(c, 32, m, 1) == Approx(2 * tp1));
}

TEST_CASE("A step's LoRA time grows with rank, distinct adapters and tokens",
          "[lora][costmodels]") {
  const ModelSpec m = lora_llama8b();
  const GpuSpec g = lora_gpu();
  ReplicaSpec r;
  r.gpu = &g;
  r.model = &m;
  const LoraConfig low = lora_config_of({8});
  const LoraConfig high = lora_config_of({64});
  const std::vector<LoraSlice> one{{0, 64}};
  const std::vector<LoraSlice> four{{0, 16}, {1, 16}, {2, 16}, {3, 16}};
  CHECK(lora_step_ns({}, low, r) == 0);
  CHECK(lora_step_ns(one, high, r) > lora_step_ns(one, low, r));
  CHECK(lora_step_ns(four, low, r) > lora_step_ns(one, low, r));  // same tokens, 4 adapters
  CHECK(lora_step_ns({{0, 4096}}, low, r) > lora_step_ns(one, low, r));
  // By hand, one adapter of rank 8 with 64 tokens: every kernel is memory-bound here.
  double ns = 0;
  for (const double out : {4096.0, 1024.0, 1024.0}) {  // q, k, v: 4096 → out
    ns += ((64 * 4096 + 64 * 8) * 2 + 4096 * 8 * 2) / 2000.0;
    ns += ((64 * 8 + 64 * out) * 2 + 8 * out * 2) / 2000.0;
  }
  ns += ((64 * 4096 + 64 * 8) * 2 + 4096 * 8 * 2) / 2000.0;  // o: 4096 → 4096
  ns += ((64 * 8 + 64 * 4096) * 2 + 8 * 4096 * 2) / 2000.0;
  CHECK(lora_step_ns(one, low, r) == Approx(32 * ns));
}

TEST_CASE("The LoRA cost model adds the term to its inner model's steps with adapters",
          "[lora][costmodels]") {
  const ModelSpec m = lora_llama8b();
  const GpuSpec g = lora_gpu();
  ReplicaSpec r;
  r.gpu = &g;
  r.model = &m;
  auto inner = std::make_shared<FixedCostModel>(FixedCostModel::Params{10'000, 5'000'000, 0, 1});
  const LoraCostModel wrapped(inner, lora_config_of({16}));
  BatchShape shape;
  shape.prefills.push_back({100, 0});
  const StepCost base = inner->step(shape, r);
  CHECK(wrapped.step(shape, r).total_ns == base.total_ns);  // no adapters: the inner model's
  shape.lora.push_back({3, 100});
  const StepCost with = wrapped.step(shape, r);
  const double extra = lora_step_ns(shape.lora, lora_config_of({16}), r);
  CHECK(extra > 0);
  CHECK(with.total_ns == base.total_ns + static_cast<SimTime>(std::llround(extra)));
  CHECK(wrapped.name() == "fixed");
}
