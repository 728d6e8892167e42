#include "sim/config/run_config.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

ConfigNode section_or_empty(const ConfigNode& root, std::string_view key, const char* kind) {
  if (auto n = root.find(key)) {
    n->require_map(fmt::format("the {} section", key));
    return *n;
  }
  return ConfigNode::parse(fmt::format("kind: {}", kind), root.file());
}

ReplicaGroupConfig parse_group(const ConfigNode& g, const std::string& default_model) {
  g.require_map("a replica group {gpu, tp, count, …}");
  g.check_keys({"gpu", "model", "count", "tp", "pp", "precision", "cuda_graphs", "cuda_graph_mode",
                "cuda_graph_max_tokens", "power_cap_w", "topology", "role", "batches_in_flight",
                "kv_cache_dtype", "attention_dp", "ep", "scheduler"});
  ReplicaGroupConfig c;
  c.node = g;
  c.gpu = g.get_string("gpu");
  c.model = g.get_string("model", default_model);
  if (c.model.empty()) g.fail("missing key 'model' (here or at the top level)");
  c.count = static_cast<int>(g.get_positive_int("count", 1));
  c.tp = static_cast<int>(g.get_positive_int("tp", 1));
  c.pp = static_cast<int>(g.get_positive_int("pp", 1));
  c.attention_dp = static_cast<int>(g.get_positive_int("attention_dp", 1));
  c.ep = static_cast<int>(g.get_positive_int("ep", 1));
  for (const auto& [key, n] : {std::pair{"attention_dp", c.attention_dp}, {"ep", c.ep}}) {
    if (c.tp % n != 0) {
      g.at(key).fail(fmt::format("expected a divisor of tp ({}), got {}", c.tp, n));
    }
  }
  if (auto p = g.find("precision")) {
    const std::string s = p->as_string();
    const auto named = precision_named(s);
    if (!named) p->fail(fmt::format("unknown precision '{}' (known: {})", s, precision_names()));
    c.weights = *named;
  }
  if (auto kv = g.find("kv_cache_dtype")) {
    // vLLM's spellings: auto is the model's dtype; fp8 stores E4M3 (E5M2 the same bytes).
    const std::string s = kv->as_string();
    if (s == "fp8" || s == "fp8_e4m3" || s == "fp8_e5m2") {
      c.kv_dtype_bytes = 1.0;
    } else if (s != "auto" && s != "bf16" && s != "fp16") {
      kv->fail(fmt::format(
          "unknown kv_cache_dtype '{}' (known: auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2)", s));
    }
  }
  c.cuda_graphs = g.get_bool("cuda_graphs", true);
  if (auto m = g.find("cuda_graph_mode")) c.cuda_graph_mode = parse_cuda_graph_mode(*m);
  c.cuda_graph_max_tokens = g.get_positive_int("cuda_graph_max_tokens", 0);  // absent: no limit
  c.power_cap_w = g.get_nonnegative("power_cap_w", 0);
  c.topology = g.get_string("topology", "");  // checked against the GPU when the run is built
  if (g.has("topology") && c.topology.empty()) {
    g.at("topology").fail("expected nvlink, pairwise_nvlink or pcie, got an empty value");
  }
  if (g.has("batches_in_flight")) {
    const auto n = g.get_positive_int("batches_in_flight");
    if (n > c.pp) {
      g.at("batches_in_flight")
          .fail(fmt::format("expected 1 to pp ({}) steps in flight, got {}", c.pp, n));
    }
    c.batches_in_flight = static_cast<int>(n);
  }
  if (auto role = g.find("role")) {
    const std::string r = role->as_string();
    if (r == "prefill") {
      c.role = ReplicaRole::kPrefill;
    } else if (r == "decode") {
      c.role = ReplicaRole::kDecode;
    } else if (r != "mixed") {
      role->fail(fmt::format("unknown role '{}' (known: mixed, prefill, decode)", r));
    }
  }
  return c;
}

ClusterSpec parse_cluster(const ConfigNode& n) {
  n.require_map("the cluster section");
  n.check_keys({"gpus_per_node", "nic_gb_per_s", "nic_latency_us", "nvlink_efficiency",
                "nvlink_latency_us"});
  ClusterSpec c;
  c.gpus_per_node = static_cast<int>(n.get_positive_int("gpus_per_node", c.gpus_per_node));
  c.nic_gb_per_s = n.get_positive("nic_gb_per_s", c.nic_gb_per_s);
  c.nic_latency_us = n.get_nonnegative("nic_latency_us", c.nic_latency_us);
  c.nvlink_efficiency = n.get_positive_fraction("nvlink_efficiency", c.nvlink_efficiency);
  c.nvlink_latency_us = n.get_nonnegative("nvlink_latency_us", c.nvlink_latency_us);
  // Bandwidths past 1e6 GB/s or latencies past a second are no link (and overflow the ns clock
  // when scaled): refuse them.
  if (c.nic_gb_per_s > 1e6) n.at("nic_gb_per_s").fail("expected at most 1e6 GB/s");
  for (const char* key : {"nic_latency_us", "nvlink_latency_us"}) {
    if (n.get_nonnegative(key, 0) > 1e6) n.at(key).fail("expected at most 1e6 µs (1 s)");
  }
  return c;
}

}  // namespace

bool RunConfig::disaggregated() const {
  return std::any_of(replicas.begin(), replicas.end(),
                     [](const ReplicaGroupConfig& g) { return g.role != ReplicaRole::kMixed; });
}

CudaGraphMode parse_cuda_graph_mode(const ConfigNode& node) {
  const std::string s = node.as_string();
  if (auto m = cuda_graph_mode_named(s)) return *m;
  node.fail(fmt::format("unknown cuda_graph_mode '{}' (known: decode_only, piecewise)", s));
}

RunConfig RunConfig::parse(const ConfigNode& document, std::optional<std::uint64_t> seed_override) {
  ConfigNode root = document;  // a handle: set_base_dir below holds for the whole document
  root.require_map("a run configuration");
  root.check_keys({"name", "seed", "model", "replicas", "scheduler", "router", "decode_router",
                   "cluster", "cost_model", "workload", "slo", "output", "catalog", "config_dir",
                   "speculative", "lora", "autoscaling", "kv_offload"});
  if (auto dir = root.find("config_dir")) {
    // Relative input paths resolve against this folder, not the file's: an output folder's
    // config.yaml names the folder of the config its run was read from.
    std::filesystem::path p(dir->as_string());
    if (p.is_relative()) p = std::filesystem::path(root.base_dir()) / p;
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) {
      dir->fail(
          fmt::format("no such folder '{}' (expected the folder relative input paths of "
                      "this config resolve against)",
                      p.string()));
    }
    root.set_base_dir(p.lexically_normal().string());
  }
  RunConfig c;
  c.root = root;
  c.name = root.get_string("name", std::filesystem::path(root.file()).stem().string());
  if (auto s = root.find("seed")) {
    const auto v = s->as_int();
    if (v < 0) s->fail("expected an integer ≥ 0");
    c.seed = static_cast<std::uint64_t>(v);
  }
  if (seed_override) c.seed = *seed_override;
  const std::string model = root.get_string("model", "");
  const ConfigNode groups = root.at("replicas");
  if (groups.is_map()) {
    c.replicas.push_back(parse_group(groups, model));
  } else {
    for (const auto& g : groups.items()) c.replicas.push_back(parse_group(g, model));
    if (c.replicas.empty()) groups.fail("expected at least one replica group");
  }
  std::int64_t fleet = 0;
  for (const auto& g : c.replicas) {
    fleet += g.count;
    if (fleet > kMaxReplicas) {
      (g.node.has("count") ? g.node.at("count") : g.node)
          .fail(fmt::format("count {} makes the fleet {} replicas, more than the {} a run may have "
                            "(expected a fleet that fits in memory; see tools/README.md, Input "
                            "limits)",
                            g.count, fleet, kMaxReplicas));
    }
  }
  c.scheduler = section_or_empty(root, "scheduler", "sarathi");
  for (auto& g : c.replicas) {
    const std::optional<ConfigNode> own = g.node.find("scheduler");
    g.scheduler = c.scheduler;
    if (own) {
      own->require_map("a replica group's scheduler keys {max_num_seqs, …}");
      if (own->has("kind")) {
        own->at("kind").fail(
            "a replica group's scheduler refines the fleet's and keeps its kind (expected the "
            "kind in the top-level scheduler section only)");
      }
      g.scheduler = c.scheduler.overlaid(*own);
    }
  }
  c.router = section_or_empty(root, "router", "round_robin");
  // Disaggregation: prefill and decode groups come together, without mixed ones.
  const auto with_role = [&](ReplicaRole role) {
    return std::find_if(c.replicas.begin(), c.replicas.end(),
                        [role](const ReplicaGroupConfig& g) { return g.role == role; });
  };
  const auto prefill = with_role(ReplicaRole::kPrefill);
  const auto decode = with_role(ReplicaRole::kDecode);
  const auto mixed = with_role(ReplicaRole::kMixed);
  if (prefill != c.replicas.end() || decode != c.replicas.end()) {
    const auto& some = prefill != c.replicas.end() ? *prefill : *decode;
    if (prefill == c.replicas.end() || decode == c.replicas.end()) {
      some.node.at("role").fail(fmt::format(
          "a {} group needs a {} group beside it (disaggregated serving: expected groups with "
          "role prefill and role decode)",
          role_name(some.role), prefill == c.replicas.end() ? "prefill" : "decode"));
    }
    if (mixed != c.replicas.end()) {
      mixed->node.fail(
          "a mixed group cannot join a disaggregated fleet (expected role prefill or decode on "
          "every group)");
    }
  }
  if (c.disaggregated()) {
    std::int64_t gpus = 0;
    for (const auto& g : c.replicas) {
      gpus += static_cast<std::int64_t>(g.count) * g.tp * g.pp;
      if (gpus > kMaxDisaggregatedGpus) {
        g.node.fail(
            fmt::format("this group makes the disaggregated fleet {} GPUs, more than the "
                        "{} its link graph may have (see tools/README.md, Input limits)",
                        gpus, kMaxDisaggregatedGpus));
      }
    }
    c.decode_router = section_or_empty(root, "decode_router", "most_free_kv");
  } else if (root.has("decode_router")) {
    root.at("decode_router")
        .fail(
            "only a disaggregated fleet has a decode router (expected replica groups with role "
            "prefill and role decode)");
  }
  if (auto cl = root.find("cluster")) {
    c.cluster = parse_cluster(*cl);
    // Read by KV transfers (a disaggregated fleet), by pipeline-stage hand-offs (pp > 1) and by
    // where a multi-GPU replica's stages fall on nodes (gpus_per_node): on a fleet with none of
    // these, every key of it would go unread.
    const auto placed = [](const ReplicaGroupConfig& g) { return g.pp > 1 || g.tp > 1; };
    if (!c.disaggregated() && std::none_of(c.replicas.begin(), c.replicas.end(), placed)) {
      cl->fail(
          "nothing in this fleet reads the cluster section: it prices KV transfers, "
          "pipeline-stage hand-offs and where a replica's GPUs fall on nodes (expected groups "
          "with role prefill and role decode, or a replica with tp or pp > 1)");
    }
  }
  c.cost_model = section_or_empty(root, "cost_model", "roofline");
  c.workload = root.at("workload");
  c.workload.require_map("the workload section");
  if (auto slo = root.find("slo")) c.slo = SloPolicy::parse(*slo);
  if (auto out = root.find("output")) {
    out->require_map("the output section");
    out->check_keys({"dir", "csv", "csv_max_requests", "trace", "trace_max_steps",
                     "trace_max_requests", "requests", "steps", "steady_state"});
    c.output.dir = out->get_string("dir", "");
    if (auto csv = out->find("csv")) {
      const std::string v = csv->as_string();
      if (v == "auto" || v == "true" || v == "false") {
        c.output.csv = v;
      } else {
        csv->fail(fmt::format("expected auto, true or false, got '{}'", v));
      }
    }
    c.output.csv_max_requests =
        out->get_positive_int("csv_max_requests", c.output.csv_max_requests);
    c.output.trace_max_steps = out->get_positive_int("trace_max_steps", c.output.trace_max_steps);
    if (out->has("trace_max_requests")) {
      const ConfigNode n = out->at("trace_max_requests");
      const auto v = n.as_int();
      if (v < 0) n.fail("expected an integer ≥ 0 (0: no request tracks)");
      c.output.trace_max_requests = v;
    }
    c.output.trace = out->get_bool("trace", true);
    c.output.requests = out->get_bool("requests", true);
    c.output.steps = out->get_bool("steps", true);
    c.output.steady_state = out->get_bool("steady_state", false);
  }
  if (auto spec = root.find("speculative")) {
    c.speculative = SpeculativeConfig::parse(*spec);
    c.output.speculative = true;
  }
  if (auto lora = root.find("lora")) c.lora = LoraConfig::parse(*lora);
  if (auto as = root.find("autoscaling")) {
    c.autoscaling = AutoscalingConfig::parse(*as);
    // The autoscaler adds and removes copies of one kind of replica, whole requests each.
    if (c.replicas.size() != 1 || c.disaggregated()) {
      as->fail(fmt::format(
          "autoscaling scales a fleet of one mixed replica group, this fleet has {} group(s){} "
          "(expected one group)",
          c.replicas.size(), c.disaggregated() ? " with prefill and decode roles" : ""));
    }
    if (c.replicas[0].node.has("count")) {
      c.replicas[0].node.at("count").fail(
          "an autoscaled group has no count: autoscaling.initial_replicas, min_replicas and "
          "max_replicas size it (expected no count)");
    }
    c.replicas[0].count = c.autoscaling->max_replicas;
  }
  if (auto off = root.find("kv_offload")) c.kv_offload = KvOffloadConfig::parse(*off);
  if (auto cat = root.find("catalog")) {
    const auto base = std::filesystem::path(root.base_dir());
    auto add = [&](const ConfigNode& n) {
      std::filesystem::path p(n.as_string());
      if (p.is_relative()) p = base / p;
      if (!is_folder(p)) n.fail(fmt::format("no such folder '{}'", p.string()));
      c.catalog_dirs.push_back(p.string());
    };
    if (cat->is_sequence()) {
      for (const auto& n : cat->items()) add(n);
    } else {
      add(*cat);
    }
  }
  return c;
}

}  // namespace servesim
