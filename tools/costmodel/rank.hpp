#pragma once

#include <string>
#include <vector>

namespace servesim::decide {

// `costmodel rank`: which GPU runs a model fastest, from datasheets, with honest ties.
struct RankArgs {
  std::string model;  // Hugging Face id
  std::vector<std::string> gpus = {"a100-80gb", "h100-sxm", "h200", "l40s"};
  int tp = 1;
  std::vector<int> tokens = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  int decodes = 0;                      // > 0: rank decode steps of this many requests instead
  int context = 0;                      // tokens before each prefill chunk / per decode
  std::vector<std::string> profiles;    // folders with measured mlp.csv per GPU, for the score
  std::string workload;                 // a run config: rank by simulating it on each GPU instead
  std::string metric = "output_tok_s";  // what a workload is ranked by (higher is better)
  bool json = false;
  // --bands: per shape, how often the order holds over the error model's band draws.
  bool bands = false;
  int band_draws = 5;
  std::string error_model;  // "" = data/measured/error_model.yaml
};

// The ranking: per shape (or for the workload), each GPU's predicted step time and the GPUs in
// order, tied where the predictions differ by no more than the larger stated uncertainty of the two
// (a GPU's validated analytical MLP-block MAPE, its hardware file's provenance.block_mape_pct; a
// GPU nobody measured takes the largest such error in the catalog). With `profiles`, the same
// rule is scored against measured MLP-block times (one layer) for every model and TP degree two
// or more of the GPUs were profiled at: pairwise calls correct / wrong / tied (tie-aware
// accuracy, never rewarding a tie), top-1, Spearman, and each pair of GPUs per token count.
// Text, or JSON with args.json. Throws InputError for unknown GPUs or models and bad shapes.
std::string run_rank(const RankArgs& args);

}  // namespace servesim::decide
