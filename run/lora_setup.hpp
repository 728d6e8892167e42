#pragma once

#include <nlohmann/json.hpp>

#include "run/run_builder.hpp"

namespace servesim {

// Multi-LoRA serving for a built run whose config has a `lora:` section: gives every replica a
// LoraCache (its GPU slots and host cache, loads at the GPU's pcie_gb_per_s and the section's
// disk_gb_per_s) attached to its scheduler, adds the LoRA kernels' term to the cost model
// (LoraCostModel) and draws each request's adapter (LoraAdapterWorkload, seed stream 5). A
// combination it does not model (prefill/decode disaggregation, speculative decoding, a router
// that holds a fleet queue) is an InputError at the lora section. Does nothing without one.
void setup_lora(const RunConfig& config, BuiltRun& run);

// summary.json's `lora`: over the fleet, loads from the host and from disk, their seconds,
// distinct adapters per step (mean and most), most adapters on one replica's GPU at once.
nlohmann::json lora_summary(const Fleet& fleet, const LoraConfig& config);

}  // namespace servesim
