#include "sim/config/lora_config.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace servesim {

const char* lora_module_name(LoraModule m) {
  switch (m) {
    case LoraModule::kQ:
      return "q";
    case LoraModule::kK:
      return "k";
    case LoraModule::kV:
      return "v";
    case LoraModule::kO:
      return "o";
    case LoraModule::kGate:
      return "gate";
    case LoraModule::kUp:
      return "up";
    case LoraModule::kDown:
      return "down";
  }
  return "q";
}

namespace {

std::int32_t parse_rank(const ConfigNode& n) {
  const std::int64_t r = n.as_int();
  if (r < 1 || r > LoraConfig::kMaxRank) {
    n.fail(fmt::format("expected a rank from 1 to {}, got {}", LoraConfig::kMaxRank, r));
  }
  return static_cast<std::int32_t>(r);
}

LoraModule parse_module(const ConfigNode& n) {
  const std::string s = n.as_string();
  for (const LoraModule m : {LoraModule::kQ, LoraModule::kK, LoraModule::kV, LoraModule::kO,
                             LoraModule::kGate, LoraModule::kUp, LoraModule::kDown}) {
    if (s == lora_module_name(m)) return m;
  }
  n.fail(fmt::format("unknown target module '{}' (known: down, gate, k, o, q, up, v)", s));
}

}  // namespace

LoraConfig LoraConfig::parse(const ConfigNode& node) {
  node.require_map("the lora section {num_adapters, rank, max_loras}");
  node.check_keys({"num_adapters", "rank", "ranks", "target_modules", "zipf_s", "base_fraction",
                   "max_loras", "max_cpu_loras", "disk_gb_per_s"});
  LoraConfig c;
  c.node = node;
  const ConfigNode count = node.at("num_adapters");
  const std::int64_t n = count.as_int();
  if (n < 1 || n > kMaxAdapters) {
    count.fail(fmt::format("expected an integer from 1 to {}, got {}", kMaxAdapters, n));
  }
  c.num_adapters = static_cast<std::int32_t>(n);
  const bool one = node.has("rank");
  const bool list = node.has("ranks");
  if (one == list) {
    node.fail(
        "expected exactly one of rank (one rank for every adapter) and ranks (a list given "
        "in turn over the adapters)");
  }
  if (one) {
    c.ranks.push_back(parse_rank(node.at("rank")));
  } else {
    const ConfigNode ranks = node.at("ranks");
    if (!ranks.is_sequence() || ranks.items().empty()) {
      ranks.fail("expected a non-empty list of ranks");
    }
    for (const ConfigNode& r : ranks.items()) c.ranks.push_back(parse_rank(r));
  }
  if (node.has("target_modules")) {
    const ConfigNode mods = node.at("target_modules");
    if (!mods.is_sequence() || mods.items().empty()) {
      mods.fail("expected a non-empty list of modules (q, k, v, o, gate, up, down)");
    }
    for (const ConfigNode& m : mods.items()) {
      const LoraModule mod = parse_module(m);
      if (std::find(c.target_modules.begin(), c.target_modules.end(), mod) !=
          c.target_modules.end()) {
        m.fail(fmt::format("module '{}' is listed twice", lora_module_name(mod)));
      }
      c.target_modules.push_back(mod);
    }
  } else {
    c.target_modules = {LoraModule::kQ, LoraModule::kK, LoraModule::kV, LoraModule::kO};
  }
  c.zipf_s = node.get_nonnegative("zipf_s", c.zipf_s);
  if (c.zipf_s > 10) node.at("zipf_s").fail(fmt::format("expected at most 10, got {}", c.zipf_s));
  c.base_fraction = node.get_fraction("base_fraction", c.base_fraction);
  const ConfigNode slots = node.at("max_loras");
  const std::int64_t max_loras = slots.as_int();
  if (max_loras < 1 || max_loras > kMaxAdapters) {
    slots.fail(fmt::format("expected an integer from 1 to {}, got {}", kMaxAdapters, max_loras));
  }
  c.max_loras = static_cast<std::int32_t>(max_loras);
  c.max_cpu_loras = c.max_loras;  // vLLM's default: as many as max_loras
  if (node.has("max_cpu_loras")) {
    const ConfigNode cpu = node.at("max_cpu_loras");
    const std::int64_t v = cpu.as_int();
    if (v < max_loras || v > kMaxAdapters) {
      cpu.fail(fmt::format("expected an integer from max_loras ({}) to {}, got {}", max_loras,
                           kMaxAdapters, v));
    }
    c.max_cpu_loras = static_cast<std::int32_t>(v);
  }
  c.disk_gb_per_s = node.get_positive("disk_gb_per_s", c.disk_gb_per_s);
  if (c.disk_gb_per_s > 1000) {
    node.at("disk_gb_per_s")
        .fail(fmt::format("expected at most 1000 GB/s, got {}", c.disk_gb_per_s));
  }
  return c;
}

}  // namespace servesim
