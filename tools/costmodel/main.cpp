// costmodel: validate, ablate, fit and query the analytical step-cost model.
//   costmodel validate --profiles DIR --gpu GPU [--model M] [--json]
//   costmodel ablate   --profiles DIR --gpu GPU [--model M] [--json]
//   costmodel fit      --profiles DIR --gpu GPU [--network DIR] [--write FILE]
//   costmodel crossval --profiles DIR --gpu GPU [--json]
//   costmodel network  [--profiles DIR] --gpu GPU
//   costmodel predict  --gpu GPU --model M [--tp N] --tokens N [--decodes N --context N]
//   costmodel import-model CONFIG_JSON [--name ORG/NAME] [--out FILE]
//   costmodel transfer --profiles DIR --home a100 --target h100 [--model M] [--json]
//   costmodel ledger   --profiles DIR --home a100 --target h100 [--model M] [--json]
// Exit codes: 0 ok, 1 bad input, 2 usage.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "costmodels/rf/rf_cache.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/hf_config.hpp"
#include "tools/common/option_validators.hpp"
#include "tools/common/plot_runner.hpp"
#include "tools/common/tool_main.hpp"
#include "tools/costmodel/costmodel_args.hpp"
#include "tools/costmodel/rank.hpp"
#include "tools/costmodel/transfer_study.hpp"

int main(int argc, char** argv) {
  CLI::App app{"servesim cost-model tools: accuracy against Vidur profiles, ablation, fitting"};
  app.require_subcommand(1);
  servesim::CostmodelArgs args;

  // The options a subcommand reads (an option it would ignore is not offered).
  struct Common {
    bool profiles = true;
    bool profiles_required = true;
    bool model = true;
    bool json = true;
  };
  auto add_common = [&args](CLI::App* sub, Common with) {
    if (with.profiles) {
      sub->add_option("--profiles", args.profiles,
                      "Vidur profiling folder (…/profiling/compute or its GPU subfolder; for "
                      "network also …/profiling/network)")
          ->required(with.profiles_required);
    }
    sub->add_option("--gpu", args.gpu, "GPU name in the catalog (e.g. a100, h100)")->required();
    if (with.model) {
      auto* model =
          sub->add_option("--model", args.model,
                          with.profiles ? "only this model id (org/name)" : "model id (org/name)");
      if (!with.profiles) model->required();  // predict prices one model
    }
    if (with.json) sub->add_flag("--json", args.json, "machine-readable output");
    sub->add_option("--hardware", args.hardware_file,
                    "hardware YAML to read constants from instead of the catalog's")
        ->check(servesim::nonblank("FILE"));
  };
  auto add_engine = [&args](CLI::App* sub) {
    sub->add_option("--engine", args.engine,
                    "engine profile of the software stack that timed the profile (a name in "
                    "configs/engines, a YAML file or an inline {map}), applied over the hardware "
                    "file's constants")
        ->check(servesim::nonblank("NAME|FILE|{MAP}"));
  };
  auto* validate = app.add_subcommand("validate", "per-op and MLP-block MAPE against mlp.csv");
  add_common(validate, {});
  add_engine(validate);
  validate->add_flag("--per-tp", args.per_tp, "also print the per-op table of every TP degree");
  validate
      ->add_option("--rows", args.rows_file,
                   "write predicted vs measured per profile row and op to this CSV")
      ->check(servesim::nonblank("FILE"));
  std::string plot_file;
  validate
      ->add_option("--plot", plot_file,
                   "draw the error atlas (signed error per op over token count x TP) into this "
                   "PNG or SVG; the rows go to --rows, or FILE.rows.csv beside it")
      ->check(servesim::nonblank("FILE"));
  auto* ablate = app.add_subcommand("ablate", "additive ladder: MLP-block MAPE as terms turn on");
  add_common(ablate, {});
  add_engine(ablate);
  ablate
      ->add_option("--plot", plot_file,
                   "draw the ladder into this PNG or SVG (its JSON goes to FILE.json beside it)")
      ->check(servesim::nonblank("FILE"));
  auto* fit = app.add_subcommand("fit", "least-squares fit of the home-profile constants");
  add_common(fit, {.json = false});
  add_engine(fit);
  fit->add_option("--network", args.network, "Vidur network profile folder for this GPU")
      ->check(servesim::nonblank("DIR"));
  fit->add_option("--write", args.write_file, "write the fitted constants into this YAML file")
      ->check(servesim::nonblank("FILE"));
  auto* crossval = app.add_subcommand(
      "crossval",
      "leave-one-group-out: each model priced by a fit on the models sharing no GEMM shape");
  add_common(crossval, {.model = false});
  add_engine(crossval);
  auto* network = app.add_subcommand(
      "network", "all-reduce MAPE against all_reduce.csv (predictions alone without one)");
  add_common(network, {.profiles_required = false, .model = false});
  add_engine(network);
  auto* kv_transfer = app.add_subcommand(
      "kv-transfer", "one KV copy between two GPUs (P/D link model) against send_recv.csv");
  add_common(kv_transfer, {.model = false});
  // The cluster's NICs (ClusterSpec's defaults unless given): KV copies between nodes, and the
  // pipeline hand-offs of a replica larger than a node.
  const auto add_nics = [&](CLI::App* sub) {
    sub->add_option("--nic-gb-per-s", args.cluster.nic_gb_per_s,
                    "per-GPU NIC bandwidth, GB/s per direction (default 50: 400 Gb/s)")
        ->check(servesim::number_in(1e-3, 1e6));
    sub->add_option("--nic-latency-us", args.cluster.nic_latency_us,
                    "one-way NIC latency, µs (default 5)")
        ->check(servesim::number_in(0, 1e6));
  };
  add_nics(kv_transfer);
  auto* power = app.add_subcommand(
      "power", "the power model: clock, board power and TFLOP/s of one GEMM per cap and M");
  add_common(power, {.profiles = false, .model = false});
  power->add_option("--caps", args.caps, "board caps in W (default: the GPU's lowest and TDP)")
      ->delimiter(',')
      ->check(servesim::number_in(1.0, 1e6));
  power->add_option("--tokens", args.token_counts, "GEMM token counts M (default 64,…,16384)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  power->add_option("--gemm-k", args.gemm_k, "GEMM K (default 4096, Llama-3.1-8B's qkv)")
      ->check(CLI::Range(1, 1 << 20));
  power->add_option("--gemm-n", args.gemm_n, "GEMM N (default 6144)")
      ->check(CLI::Range(1, 1 << 20));
  auto* place = app.add_subcommand(
      "place", "power-aware vs cap-blind vs oracle placement of prefill chunks on capped GPUs");
  add_common(place, {.profiles = false});
  place->add_option("--caps", args.caps, "one GPU per cap, in W (e.g. 400,575)")
      ->delimiter(',')
      ->required()
      ->check(servesim::number_in(1.0, 1e6));
  place->add_option("--mix", args.mixes, "a mix of prefill chunks, e.g. 16384,64x8 (repeatable)")
      ->required();
  place->add_flag("--bands", args.bands,
                  "judge the placements again under draws of the GPU's measured cap sweep");
  place->add_option("--band-draws", args.band_draws, "draws of --bands (default 5)")
      ->check(CLI::Range(3, 50));
  place
      ->add_option("--cap-sweeps", args.cap_sweeps,
                   "measured cap sweeps of --bands (default data/measured/cap_sweeps.yaml)")
      ->check(CLI::ExistingFile);
  std::string import_path;
  std::string import_name;
  std::string import_out;
  auto* import_model = app.add_subcommand(
      "import-model",
      "write a model's catalog YAML (configs/models/<org>/<name>.yaml) from its Hugging Face "
      "config.json");
  import_model->add_option("config", import_path, "the model's config.json")
      ->required()
      ->check(CLI::ExistingFile);
  import_model->add_option("--name", import_name,
                           "the model's Hugging Face id (default: the file's _name_or_path)");
  import_model->add_option("--out", import_out, "write the YAML here instead of printing it");
  auto* predict = app.add_subcommand("predict", "price one batch and print its breakdown");
  add_common(predict, {.profiles = false});
  predict->add_option("--tp", args.tp, "tensor-parallel degree")
      ->check(servesim::whole_number_in(1, 4096));
  predict->add_option("--pp", args.pp, "pipeline-parallel degree")
      ->check(servesim::whole_number_in(1, 4096));
  predict
      ->add_option("--attention-dp", args.attention_dp,
                   "MoE models: attention data-parallel groups among the --tp GPUs (the batch is "
                   "the replica's, spread over them as simulate does)")
      ->check(servesim::whole_number_in(1, 4096));
  predict->add_option("--ep", args.ep, "MoE models: expert-parallel ranks among the --tp GPUs")
      ->check(servesim::whole_number_in(1, 4096));
  predict
      ->add_option("--gpus-per-node", args.cluster.gpus_per_node,
                   "GPUs a node holds (default 8): tp stays inside one, and a replica of more "
                   "hands its stages over the NICs where they cross nodes")
      ->check(servesim::whole_number_in(1, 4096));
  add_nics(predict);
  predict->add_option("--tokens", args.prefill_tokens, "prefill tokens (one chunk)")
      ->check(CLI::Range(0, 2147483647));
  predict->add_option("--context", args.context, "context before the chunk / per decode")
      ->check(CLI::Range(0, 2147483647));
  predict->add_option("--decodes", args.decodes, "decode requests in the batch")
      ->check(CLI::Range(0, 2147483647));
  predict->add_flag("--eager", args.eager, "no CUDA graphs");
  predict
      ->add_option("--topology", args.topology,
                   "links between the TP GPUs: nvlink, pairwise_nvlink or pcie (default: nvlink "
                   "on NVSwitch GPUs, pairwise_nvlink on bridged cards, else pcie)")
      ->check(CLI::IsMember({"nvlink", "pairwise_nvlink", "pcie"}));
  predict
      ->add_option("--power-cap-w", args.power_cap_w,
                   "board power cap in W (default: the TDP; analytical cost model only)")
      ->check(servesim::number_in(0.0, 1e6));
  predict
      ->add_option("--precision", args.precision,
                   "weights: bf16 (default), fp16, fp8, fp8_block, nvfp4, mxfp4 or int4")
      ->check(CLI::IsMember({"bf16", "fp16", "fp8", "fp8_block", "nvfp4", "mxfp4", "int4"}));
  predict
      ->add_option("--graph-mode", args.graph_mode,
                   "decode_only (vLLM V0) or piecewise (vLLM V1: steps with prefill in piecewise "
                   "graphs); default: the --cost-model engine's, else decode_only")
      ->check(CLI::IsMember({"decode_only", "piecewise"}));
  predict
      ->add_option("--graph-max-tokens", args.graph_max_tokens,
                   "steps with more tokens run eager (0: no limit; default with piecewise "
                   "graphs: vLLM V1's min(2 max_num_seqs, 512))")
      ->check(CLI::Range(0, 2147483647));
  predict
      ->add_option("--max-num-seqs", args.max_num_seqs,
                   "the engine's max_num_seqs, for the default capture size (default 128)")
      ->check(CLI::Range(1, 2147483647));
  predict->add_option("--cost-model", args.cost_model_yaml,
                      "cost model section as YAML (default: kind: analytical)");

  servesim::RfTransferArgs rf;
  rf.cache_dir = servesim::RfCache::default_dir();
  if (isatty(STDERR_FILENO) != 0) {
    // Training the forests takes a while: say which model × TP is done.
    rf.on_forests = [](const std::string& what) {
      std::cerr << fmt::format("\r\033[K  {}", what) << std::flush;
    };
  }
  auto add_rf = [&rf](CLI::App* sub) {
    sub->add_option("--profiles", rf.profiles,
                    "Vidur profiling/compute folder holding the home GPU's mlp.csv files")
        ->required();
    sub->add_option("--target-profiles", rf.target_profiles,
                    "folder with the target GPU's mlp.csv files (default: --profiles)");
    sub->add_option("--home", rf.home, "profiled GPU the forests are trained on")
        ->capture_default_str();
    sub->add_option("--target", rf.target, "GPU the forests are transferred to")
        ->capture_default_str();
    sub->add_option("--model", rf.model, "only this model id (org/name)");
    sub->add_flag("--json", rf.json, "machine-readable output");
    sub->add_option("--trees", rf.train.forest.trees, "trees per forest")
        ->check(servesim::whole_number_in(1, 100000))
        ->capture_default_str();
    sub->add_option("--seed", rf.train.forest.seed, "forest seed")
        ->check(servesim::whole_number_in(0, UINT64_MAX))
        ->capture_default_str();
    sub->add_option("--threads", rf.train.threads, "forests trained at once")
        ->check(servesim::whole_number_in(1, 4096))
        ->capture_default_str();
    sub->add_option("--cache-dir", rf.cache_dir, "trained-table cache")->capture_default_str();
    sub->add_flag("!--no-cache", rf.use_cache, "train every forest afresh");
  };
  auto* transfer =
      app.add_subcommand("transfer", "cross-GPU 2x2: RF verbatim / RF spec-scaled / analytical");
  add_rf(transfer);
  transfer
      ->add_option("--plot", plot_file,
                   "draw MAPE per predictor and GPU into this PNG or SVG (its JSON goes to "
                   "FILE.json beside it)")
      ->check(servesim::nonblank("FILE"));
  auto* ledger = app.add_subcommand(
      "ledger", "profiling rows, calibration time, coverage and MAPE per method");
  add_rf(ledger);

  servesim::decide::RankArgs rank_args;
  auto* rank = app.add_subcommand(
      "rank",
      "rank GPUs for a model from datasheets; a tie where the model cannot tell them apart");
  rank->add_option("--model", rank_args.model,
                   "model id (org/name); with --workload, the config's model by default");
  rank->add_option("--gpus", rank_args.gpus, "GPUs to rank (default a100-80gb,h100-sxm,h200,l40s)")
      ->delimiter(',');
  rank->add_option("--tp", rank_args.tp, "tensor-parallel degree")
      ->check(servesim::whole_number_in(1, 4096));
  rank->add_option("--tokens", rank_args.tokens,
                   "prefill chunk sizes to rank at (default 1,2,4,…,4096)")
      ->delimiter(',')
      ->check(CLI::Range(1, 2147483647));
  rank->add_option("--decodes", rank_args.decodes, "rank a decode step of N requests instead")
      ->check(CLI::Range(1, 2147483647));
  rank->add_option("--context", rank_args.context, "context before the chunk / per decode")
      ->check(CLI::Range(0, 2147483647));
  rank->add_option("--profiles", rank_args.profiles,
                   "folder of measured mlp.csv per GPU (Vidur's profiling/compute, "
                   "data/measured): score the tie rule against it (repeatable)");
  rank->add_option("--workload", rank_args.workload,
                   "rank by simulating this run config on each GPU instead")
      ->check(CLI::ExistingFile);
  rank->add_option("--metric", rank_args.metric,
                   "with --workload: the metric to rank by, higher is better (default "
                   "output_tok_s)");
  rank->add_flag("--json", rank_args.json, "machine-readable output");
  rank->add_flag("--bands", rank_args.bands,
                 "per shape, how often the order holds over the measured error's band draws");
  rank->add_option("--band-draws", rank_args.band_draws, "draws of --bands (default 5)")
      ->check(CLI::Range(3, 50));
  rank->add_option("--error-model", rank_args.error_model,
                   "error model of --bands (default data/measured/error_model.yaml)");

  return servesim::tool_main(app, argc, argv, std::cout, std::cerr, [&] {
    std::string out;
    if (*validate) {
      if (!plot_file.empty() && args.rows_file.empty()) {
        args.rows_file = std::filesystem::path(plot_file).replace_extension(".rows.csv").string();
      }
      out = servesim::run_validate(args);
      if (!plot_file.empty()) {
        const std::string note =
            servesim::run_plot_script({"atlas", args.rows_file, plot_file}, std::cout);
        std::cerr << (note.empty()
                          ? fmt::format("plot       {} (rows: {})\n", plot_file, args.rows_file)
                          : "note: " + note + "\n");
      }
    }
    if (*ablate) {
      out = servesim::run_ablate(args);
      if (!plot_file.empty()) {
        servesim::CostmodelArgs as_json = args;
        as_json.json = true;
        servesim::plot_beside(plot_file, "ablate", args.json ? out : servesim::run_ablate(as_json),
                              ".json", std::cout, std::cerr);
      }
    }
    if (*fit) out = servesim::run_fit(args);
    if (*crossval) out = servesim::run_crossval(args);
    if (*network) out = servesim::run_network(args);
    if (*kv_transfer) out = servesim::run_kv_transfer(args);
    if (*predict) out = servesim::run_predict(args);
    if (*import_model) {
      out = servesim::hf_config_yaml(import_path, import_name);
      if (!import_out.empty()) {
        std::ofstream f(import_out);
        if (!(f << out)) {
          throw servesim::InputError(fmt::format("{}: cannot write (--out)", import_out));
        }
        out = fmt::format("wrote {}\n", import_out);
      }
    }
    if (*power) out = servesim::run_power(args);
    if (*place) out = servesim::run_place(args);
    if (*transfer) {
      out = servesim::run_transfer(rf);
      if (!plot_file.empty()) {
        servesim::RfTransferArgs as_json = rf;
        as_json.json = true;
        servesim::plot_beside(plot_file, "transfer",
                              rf.json ? out : servesim::run_transfer(as_json), ".json", std::cout,
                              std::cerr);
      }
    }
    if (*ledger) out = servesim::run_ledger(rf);
    if (*rank) out = servesim::decide::run_rank(rank_args);
    if ((*transfer || *ledger) && rf.on_forests) std::cerr << "\r\033[K" << std::flush;
    std::cout << out;
    return 0;
  });
}
