#include <string>

#include <catch2/catch.hpp>

#include "costmodels/analytical/calibration.hpp"
#include "costmodels/analytical/collective_model.hpp"
#include "sim/config/input_error.hpp"
#include "tests/costmodels/home_profiles.hpp"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("a PCIe all-reduce is slower than NVLink for the same bytes and GPUs",
          "[costmodels][analytical][pcie]") {
  for (const std::string name : {"a100-80gb", "h100-sxm"}) {
    const GpuSpec& gpu = testing::configs_gpu(name);
    const AnalyticalParams params = AnalyticalParams::for_gpu(gpu);
    for (const int p : {2, 4, 8}) {
      const TpTopology nvlink(p, "nvlink", gpu, params);
      const TpTopology pcie(p, "pcie", gpu, params);
      for (const double bytes : {4096.0, 1048576.0, 67108864.0}) {
        INFO(name << " p=" << p << " bytes=" << bytes);
        CHECK(pcie.all_reduce_ns(bytes) > nvlink.all_reduce_ns(bytes));
        CHECK(pcie.all_gather_ns(bytes) > nvlink.all_gather_ns(bytes));
      }
    }
  }
  // A bridged card: the bridge beats the host for a pair.
  const GpuSpec& a40 = testing::configs_gpu("a40");
  const AnalyticalParams params = AnalyticalParams::for_gpu(a40);
  CHECK(TpTopology(2, "pcie", a40, params).all_reduce_ns(1048576.0) >
        TpTopology(2, "pairwise_nvlink", a40, params).all_reduce_ns(1048576.0));
}

TEST_CASE("a ring over PCIe alone shares the host bridge and waits out PCIe's step latency",
          "[costmodels][analytical][pcie]") {
  const GpuSpec& l40s = testing::configs_gpu("l40s");
  const AnalyticalParams params = AnalyticalParams::for_gpu(l40s);
  REQUIRE(l40s.host_gb_per_s == 112);
  REQUIRE(l40s.pcie_gb_per_s == 32);
  const double link = l40s.pcie_gb_per_s * params.pcie_efficiency;  // bytes/ns
  const double hop = params.hop_latency_ns * 5.7 / 3.4;             // NCCL's PCI/NVLink ring
  // Two and four GPUs: each hop keeps its link (112/4 = 28 > 23.2 GB/s); eight share the host.
  CHECK(TpTopology(2, "pcie", l40s, params).ring_bottleneck_bytes_per_ns() == Approx(link));
  CHECK(TpTopology(4, "pcie", l40s, params).ring_bottleneck_bytes_per_ns() == Approx(link));
  const TpTopology eight(8, "pcie", l40s, params);
  CHECK(eight.ring_bottleneck_bytes_per_ns() == Approx(112.0 / 8));
  const double bytes = 16 * 1048576.0;
  CHECK(eight.algorithm(bytes) == TpTopology::Algorithm::kRing);
  CHECK(eight.all_reduce_ns(bytes) ==
        Approx(params.collective_floor_ns + 14 * hop + 14.0 / 8 * bytes / (112.0 / 8)));
  CHECK(eight.all_gather_ns(bytes) ==
        Approx(params.collective_floor_ns + 7 * hop + 7.0 / 8 * bytes / (112.0 / 8)));
  // A GPU built in code has no host limit: only the link counts.
  GpuSpec open = l40s;
  open.host_gb_per_s = 0;
  CHECK(TpTopology(8, "pcie", open, params).ring_bottleneck_bytes_per_ns() == Approx(link));
}

TEST_CASE("rings that keep NVLink hops keep their fitted law", "[costmodels][analytical][pcie]") {
  // The pairwise rings of the A100 fit (pairs on NVLink, PCIe between them) are what the
  // collective constants were fitted on: the host share and PCIe latency do not touch them.
  const GpuSpec& a100 = testing::configs_gpu("a100-80gb");
  const AnalyticalParams params = AnalyticalParams::for_gpu(a100);
  const TpTopology pairs(8, "pairwise_nvlink", a100, params);
  const double bytes = 4 * 1048576.0;
  const double link = a100.pcie_gb_per_s * params.pcie_efficiency;
  CHECK(pairs.ring_bottleneck_bytes_per_ns() == Approx(link));
  CHECK(pairs.all_reduce_ns(bytes) ==
        Approx(params.collective_floor_ns + 14 * params.hop_latency_ns + 14.0 / 8 * bytes / link));
}

TEST_CASE("every GPU of the catalog names its interconnect and reports it",
          "[costmodels][analytical][pcie]") {
  for (const auto& name : testing::configs_catalog().gpu_names()) {
    const GpuSpec& gpu = testing::configs_gpu(name);
    INFO(name);
    CHECK(!gpu.interconnect.empty());
    CHECK(gpu.pcie_gen >= 4);
    CHECK(gpu.host_gb_per_s > 0);
    CHECK_THAT(gpu.interconnect_summary(), Contains(gpu.interconnect));
  }
  // The SXM parts keep NVSwitch and their default topology; the PCIe cards have no NVLink.
  for (const std::string name : {"a100-80gb", "a100-40gb", "h100-sxm", "h200", "b200"}) {
    CHECK(testing::configs_gpu(name).interconnect == "nvswitch");
    CHECK(std::string(testing::configs_gpu(name).default_topology()) == "nvlink");
  }
  for (const std::string name : {"l40s", "rtx-4090", "rtx-5090", "rtx-pro-6000"}) {
    CHECK(testing::configs_gpu(name).interconnect == "pcie");
  }
  const GpuSpec& a40 = testing::configs_gpu("a40");
  CHECK(a40.interconnect_summary() ==
        "nvlink_bridge (default topology pairwise_nvlink): PCIe Gen4 x16 32 GB/s per direction, "
        "NVLink 112.5 GB/s bidirectional through a 2-GPU bridge, host bridge 112 GB/s per "
        "direction shared by a PCIe ring's hops");
  // The network check reports the wiring, and says it where the GPU has no network profile.
  const std::string network = std::string(SERVESIM_SOURCE_DIR) + "/data/vidur/profiling/network";
  const GpuSpec& a100 = testing::configs_gpu("a100-80gb");
  CHECK_THAT(validate_network(network, a100, AnalyticalParams::for_gpu(a100)).interconnect,
             Contains("nvswitch (default topology nvlink)"));
  CHECK_THROWS_WITH(validate_network(network, a40, AnalyticalParams::for_gpu(a40)),
                    Contains("no <gpu>_dgx") && Contains("its interconnect: nvlink_bridge"));
}

TEST_CASE(
    "a hardware file without its interconnect, or with one its NVLink contradicts, is refused",
    "[costmodels][pcie]") {
  const std::string base =
      "arch: ampere\nsms: 4\nboost_clock_mhz: 1\nbf16_tflops: 1\nmemory_gb: 1\n"
      "memory_bw_gb_per_s: 1\nl2_mb: 1\ntdp_w: 1\npcie_gb_per_s: 32\n";
  CHECK_THROWS_WITH(Catalog::load_gpu(ConfigNode::parse(base, "gddr.yaml")),
                    Contains("gddr.yaml") && Contains("missing key 'interconnect'"));
  const auto with = [&](const std::string& ic) {
    return Catalog::load_gpu(ConfigNode::parse(base + "interconnect: " + ic, "gddr.yaml"));
  };
  const GpuSpec ok = with("{kind: pcie, pcie_gen: 4, host_gb_per_s: 112, source: s}\n");
  CHECK(ok.interconnect == "pcie");
  CHECK(ok.pcie_gen == 4);
  CHECK(ok.host_gb_per_s == 112);
  CHECK_THROWS_WITH(with("{kind: pcie, pcie_gen: 4, source: s}\n"),
                    Contains("gddr.yaml") && Contains("missing key 'host_gb_per_s'"));
  CHECK_THROWS_WITH(with("{kind: pcie, pcie_gen: 4, host_gb_per_s: 112}\n"),
                    Contains("missing key 'source'"));
  CHECK_THROWS_WITH(with("{kind: mesh, pcie_gen: 4, host_gb_per_s: 112, source: s}\n"),
                    Contains("unknown interconnect kind 'mesh' (known: nvlink_bridge, nvswitch, "
                             "pcie)"));
  CHECK_THROWS_WITH(with("{kind: nvswitch, pcie_gen: 4, host_gb_per_s: 112, source: s}\n"),
                    Contains("nvswitch needs NVLink through a switch"));
  CHECK_THROWS_WITH(with("{kind: nvlink_bridge, pcie_gen: 4, host_gb_per_s: 112, source: s}\n"),
                    Contains("nvlink_bridge needs a card whose NVLink is a bridge"));
  CHECK_THROWS_WITH(with("{kind: pcie, pcie_gen: 3, host_gb_per_s: 112, source: s}\n"),
                    Contains("pcie_gb_per_s 32 exceeds a Gen3 x16 link (16 GB/s per direction)"));
}
