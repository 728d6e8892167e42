#include "tools/costmodel/rank.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/profile_validation.hpp"
#include "costmodels/profile/vidur_profile.hpp"
#include "costmodels/registry.hpp"
#include "run/run_builder.hpp"
#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/util/constants.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/costmodel/rank_flips.hpp"
#include "tools/costmodel/tie_rank.hpp"
#include "tools/sweep/point_metrics.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::decide {
namespace {

// The stated uncertainty of each GPU (a fraction): its validated MLP-block MAPE, or for a GPU
// nobody measured the largest validated one in the catalog.
struct Uncertainty {
  double of(const GpuSpec& g) const {
    return (g.block_mape_pct > 0 ? g.block_mape_pct : fallback_pct) / 100;
  }
  bool measured(const GpuSpec& g) const { return g.block_mape_pct > 0; }
  double fallback_pct = 0;
};

Uncertainty uncertainty_of(Catalog& catalog) {
  Uncertainty u;
  for (const std::string& name : catalog.gpu_names()) {
    u.fallback_pct =
        std::max(u.fallback_pct, catalog.gpu(name, ConfigNode::flag("--gpus")).block_mape_pct);
  }
  return u;
}

// "h200 = h100-sxm < a100-80gb": tiers fastest first, joined by `order` (" > " where the values
// ranked are a higher-is-better metric).
std::string ranking_text(const std::vector<Prediction>& p, const char* order = " < ") {
  std::vector<std::string> parts;
  for (const auto& tier : tiers(p)) {
    std::vector<std::string> names;
    names.reserve(tier.size());
    for (const std::size_t i : tier) names.push_back(p[i].gpu);
    parts.push_back(fmt::format("{}", fmt::join(names, " = ")));
  }
  return fmt::format("{}", fmt::join(parts, order));
}

nlohmann::json tiers_json(const std::vector<Prediction>& p) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& tier : tiers(p)) {
    nlohmann::json t = nlohmann::json::array();
    for (const std::size_t i : tier) t.push_back(p[i].gpu);
    out.push_back(t);
  }
  return out;
}

// One measured case: a model at a TP degree and token count, timed on several GPUs.
struct MeasuredCase {
  std::vector<std::size_t> gpus;  // indices into the ranked GPUs
  std::vector<double> predicted_ns, measured_ns;
};
using CaseKey = std::tuple<std::string, int, int>;  // model id (lower case), tp, tokens

// Predicted and measured MLP-block times (one layer) of every profile row, per GPU.
std::map<CaseKey, MeasuredCase> measured_cases(const RankArgs& a, Catalog& catalog,
                                               const std::vector<const GpuSpec*>& gpus) {
  std::map<CaseKey, MeasuredCase> cases;
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    std::vector<std::string> names = gpus[g]->names();
    for (const std::string& dir : a.profiles) {
      GpuProfiles found;
      try {
        found = find_gpu_profiles(dir, names, "--profiles");
      } catch (const InputError&) {
        continue;  // this folder has no rows of this GPU
      }
      for (const auto& [id, path] : found.files) {
        const ModelSpec* model = nullptr;
        for (const std::string& n : catalog.model_names()) {
          if (lowercase(n) == lowercase(id)) model = &catalog.model(n, ConfigNode::flag("--model"));
        }
        const ProfileValidation v =
            validate_profile(read_vidur_mlp(path), id, *gpus[g], model,
                             AnalyticalParams::for_gpu(*gpus[g]), AnalyticalTerms{}, true);
        // One block per profile row (the sum of its ops); a shape profiled on several rows
        // (Vidur's tables repeat some) takes their mean.
        std::map<std::tuple<int, int, int>, std::pair<double, double>> rows;  // tp, tokens, line
        for (const auto& r : v.residuals) {
          auto& b = rows[{r.tp, r.tokens, r.line}];
          b.first += r.predicted_ns;
          b.second += r.measured_ns;
        }
        std::map<std::pair<int, int>, std::pair<double, double>> block;  // (tp, tokens): means
        std::map<std::pair<int, int>, int> repeats;
        for (const auto& [k, b] : rows) {
          const std::pair<int, int> shape{std::get<0>(k), std::get<1>(k)};
          block[shape].first += b.first;
          block[shape].second += b.second;
          ++repeats[shape];
        }
        for (auto& [k, b] : block) {
          b.first /= repeats[k];
          b.second /= repeats[k];
          if (b.second <= 0) continue;
          MeasuredCase& c = cases[{lowercase(id), k.first, k.second}];
          if (std::find(c.gpus.begin(), c.gpus.end(), g) != c.gpus.end()) continue;  // 2nd dir
          c.gpus.push_back(g);
          c.predicted_ns.push_back(b.first);
          c.measured_ns.push_back(b.second);
        }
      }
    }
  }
  return cases;
}

// The power of two a token count falls under: (2^(k-1), 2^k] → 2^k.
int token_bin(int tokens) {
  int b = 1;
  while (b < tokens) b *= 2;
  return b;
}

// Scores the tie rule on every measured case that two or more GPUs share.
nlohmann::json score(const RankArgs& a, Catalog& catalog, const std::vector<const GpuSpec*>& gpus,
                     const Uncertainty& u) {
  const auto cases = measured_cases(a, catalog, gpus);
  CaseScore all;
  std::vector<double> rhos;
  std::map<std::string, CaseScore> by_model;
  std::map<std::pair<std::size_t, std::size_t>, std::map<int, PairScore>> by_pair;
  nlohmann::json wrong = nlohmann::json::array();  // every wrong call, to see where
  int n_cases = 0;
  std::set<std::string> models;
  for (const auto& [key, c] : cases) {
    if (c.gpus.size() < 2) continue;
    ++n_cases;
    models.insert(std::get<0>(key));
    std::vector<Prediction> p;
    for (std::size_t i = 0; i < c.gpus.size(); ++i) {
      p.push_back({gpus[c.gpus[i]]->name, c.predicted_ns[i], u.of(*gpus[c.gpus[i]])});
    }
    const CaseScore s = score_case(p, c.measured_ns);
    for (CaseScore* t : {&all, &by_model[std::get<0>(key)]}) {
      t->pairs.merge(s.pairs);
      t->top1_hits += s.top1_hits;
      t->top1_misses += s.top1_misses;
      t->top1_ties += s.top1_ties;
    }
    if (c.gpus.size() >= 3) rhos.push_back(spearman(c.predicted_ns, c.measured_ns));
    for (std::size_t i = 0; i < c.gpus.size(); ++i) {
      for (std::size_t j = i + 1; j < c.gpus.size(); ++j) {
        const auto lo = std::min(c.gpus[i], c.gpus[j]), hi = std::max(c.gpus[i], c.gpus[j]);
        const std::size_t first = c.gpus[i] == lo ? i : j, second = c.gpus[i] == lo ? j : i;
        const CaseScore one =
            score_case({p[first], p[second]}, {c.measured_ns[first], c.measured_ns[second]});
        by_pair[{lo, hi}][token_bin(std::get<2>(key))].merge(one.pairs);
        if (one.pairs.wrong > 0) {
          wrong.push_back({{"model", std::get<0>(key)},
                           {"tp", std::get<1>(key)},
                           {"tokens", std::get<2>(key)},
                           {"gpus", {p[first].gpu, p[second].gpu}},
                           {"predicted_ratio", p[first].time / p[second].time},
                           {"measured_ratio", c.measured_ns[first] / c.measured_ns[second]}});
        }
      }
    }
  }
  const auto pair_json = [](const PairScore& s) {
    return nlohmann::json{{"correct", s.correct},
                          {"wrong", s.wrong},
                          {"ties", s.ties},
                          {"tie_aware_accuracy", sweep::number_or_null(s.tie_aware_accuracy())},
                          {"decided_accuracy", sweep::number_or_null(s.decided_accuracy())}};
  };
  const auto case_json = [&](const CaseScore& s) {
    nlohmann::json j = pair_json(s.pairs);
    j["top1"] = {{"hits", s.top1_hits}, {"misses", s.top1_misses}, {"ties", s.top1_ties}};
    return j;
  };
  nlohmann::json j;
  j["cases"] = n_cases;
  j["models"] = models;
  j["all"] = case_json(all);
  const FiniteMean rho = mean_of_finite(rhos);
  j["spearman_mean"] = sweep::number_or_null(rho.mean);
  j["spearman_cases"] = rho.n;
  for (const auto& [m, s] : by_model) j["by_model"][m] = case_json(s);
  j["wrong_calls"] = wrong;
  j["pairs"] = nlohmann::json::array();
  for (const auto& [ab, by_tokens] : by_pair) {
    PairScore total;
    nlohmann::json per = nlohmann::json::array();
    for (const auto& [tokens, s] : by_tokens) {
      total.merge(s);
      nlohmann::json e = pair_json(s);
      e["tokens_up_to"] = tokens;
      per.push_back(e);
    }
    nlohmann::json pj = pair_json(total);
    pj["gpus"] = {gpus[ab.first]->name, gpus[ab.second]->name};
    pj["by_tokens"] = per;
    j["pairs"].push_back(pj);
  }
  return j;
}

std::string pct(const nlohmann::json& v) {
  return v.is_number() ? fmt::format("{:.1f}%", 100 * v.get<double>()) : std::string("n/a");
}

std::string score_text(const nlohmann::json& s) {
  std::string out = fmt::format(
      "\nScored against measured MLP-block times (one layer; {} cases: model x TP x tokens timed "
      "on two or more of these GPUs; models {}):\n",
      s["cases"].get<int>(), fmt::join(s["models"].get<std::vector<std::string>>(), ", "));
  const auto line = [&](const std::string& what, const nlohmann::json& p) {
    return fmt::format(
        "  {:<28} correct {:>5}  wrong {:>4}  ties {:>4}   tie-aware {:>6}  "
        "decided {:>6}\n",
        what, p["correct"].get<int>(), p["wrong"].get<int>(), p["ties"].get<int>(),
        pct(p["tie_aware_accuracy"]), pct(p["decided_accuracy"]));
  };
  out += line("all pairs", s["all"]);
  for (const auto& p : s["pairs"]) {
    out += line(
        fmt::format("{} vs {}", p["gpus"][0].get<std::string>(), p["gpus"][1].get<std::string>()),
        p);
  }
  const auto& t = s["all"]["top1"];
  out += fmt::format(
      "  top-1: {} hits, {} misses, {} ties;  Spearman (cases with 3+ GPUs, {}): {}\n",
      t["hits"].get<int>(), t["misses"].get<int>(), t["ties"].get<int>(),
      s["spearman_cases"].get<int>(),
      s["spearman_mean"].is_number() ? fmt::format("{:.3f}", s["spearman_mean"].get<double>())
                                     : std::string("n/a"));
  for (const auto& p : s["pairs"]) {
    out += fmt::format("  {} vs {}, correct/wrong/ties by tokens up to:",
                       p["gpus"][0].get<std::string>(), p["gpus"][1].get<std::string>());
    for (const auto& e : p["by_tokens"]) {
      out += fmt::format(" {}:{}/{}/{}", e["tokens_up_to"].get<int>(), e["correct"].get<int>(),
                         e["wrong"].get<int>(), e["ties"].get<int>());
    }
    out += "\n";
  }
  const auto& w = s["wrong_calls"];
  for (std::size_t i = 0; i < std::min<std::size_t>(w.size(), 12); ++i) {
    const auto& c = w[i];
    out += fmt::format("  wrong: {} TP{} {} tokens: predicted {}/{} = {:.3f}, measured {:.3f}\n",
                       c["model"].get<std::string>(), c["tp"].get<int>(), c["tokens"].get<int>(),
                       c["gpus"][0].get<std::string>(), c["gpus"][1].get<std::string>(),
                       c["predicted_ratio"].get<double>(), c["measured_ratio"].get<double>());
  }
  if (w.size() > 12) out += fmt::format("  ({} more wrong calls in --json)\n", w.size() - 12);
  return out;
}

}  // namespace

std::string run_rank(const RankArgs& a) {
  Catalog catalog(Catalog::default_dirs());
  const Uncertainty u = uncertainty_of(catalog);
  std::vector<const GpuSpec*> gpus;
  for (const auto& name : a.gpus) {
    const GpuSpec& g = catalog.gpu(name, ConfigNode::flag("--gpus"));
    if (std::find(gpus.begin(), gpus.end(), &g) != gpus.end()) {
      throw InputError(fmt::format("--gpus: {} is named twice", g.name));
    }
    gpus.push_back(&g);
  }
  if (gpus.size() < 2) throw InputError("--gpus: expected two or more GPUs to rank");
  std::string model_id = a.model;
  if (!a.workload.empty()) {
    const RunConfig w = load_run_config(a.workload, std::vector<std::string>{}, std::nullopt);
    if (model_id.empty()) model_id = w.replicas[0].model;
    if (lowercase(catalog.model(model_id, ConfigNode::flag("--model")).name) !=
        lowercase(catalog.model(w.replicas[0].model, ConfigNode::flag("--workload")).name)) {
      throw InputError(fmt::format("--model {}: {} serves {} (expected that model, or no --model)",
                                   model_id, a.workload, w.replicas[0].model));
    }
  }
  if (model_id.empty()) throw InputError("--model: expected a model id (org/name), or --workload");
  const ModelSpec& model = catalog.model(model_id, ConfigNode::flag("--model"));
  if (const std::string why = model.tp_problem(a.tp); !why.empty()) {
    throw InputError("--tp: " + why);
  }
  nlohmann::json doc;
  doc["model"] = model.name;
  doc["tp"] = a.tp;
  nlohmann::json unc = nlohmann::json::object();
  for (const GpuSpec* g : gpus) {
    unc[g->name] = {{"pct", 100 * u.of(*g)}, {"measured", u.measured(*g)}};
  }
  doc["uncertainty"] = unc;
  doc["tie_rule"] =
      "a tie when two predictions differ by no more than the larger stated uncertainty of the two";
  doc["shapes"] = nlohmann::json::array();
  std::string out;
  if (!a.workload.empty() && (a.bands || !a.error_model.empty())) {
    throw InputError("--bands: ranks step shapes only (expected no --workload)");
  }
  if (!a.workload.empty()) {
    // Each GPU serves the workload in place of the config's own: rank by a metric of the run.
    const auto metric = sweep::metric_index(a.metric);
    if (!metric) {
      throw InputError(fmt::format("--metric {}: unknown metric (known: {})", a.metric,
                                   fmt::join(sweep::metric_names(), ", ")));
    }
    std::vector<Prediction> p;
    nlohmann::json runs = nlohmann::json::array();
    for (const GpuSpec* g : gpus) {
      RunConfig base = load_run_config(a.workload, std::vector<std::string>{}, std::nullopt);
      std::vector<std::string> sets;
      for (std::size_t i = 0; i < base.replicas.size(); ++i) {
        sets.push_back(fmt::format("replicas.{}.gpu={}", i, g->name));
      }
      if (!base.root.at("replicas").is_sequence()) sets = {fmt::format("replicas.gpu={}", g->name)};
      Simulation sim(load_run_config(a.workload, sets, std::nullopt));
      RunOptions options;
      options.write_outputs = false;
      const auto m = sweep::flatten_summary(execute_run(sim, options));
      const double v = m[*metric];
      // Higher is better for a workload metric: rank its inverse as a time.
      p.push_back({g->name, v > 0 ? 1.0 / v : kNaN, u.of(*g)});
      runs.push_back({{"gpu", g->name}, {a.metric, sweep::number_or_null(v)}});
    }
    doc["workload"] = {
        {"config", a.workload}, {"metric", a.metric}, {"runs", runs}, {"ranking", tiers_json(p)}};
    out += fmt::format(
        "{} on each GPU in place of its replicas' own: {} (higher is better; best first, '=' a "
        "tie)\n",
        a.workload, a.metric);
    for (const auto& r : runs) {
      out += fmt::format("  {:<12} {}\n", r["gpu"].get<std::string>(),
                         r[a.metric].is_number() ? fmt::format("{:.4g}", r[a.metric].get<double>())
                                                 : std::string("n/a"));
    }
    out += fmt::format("  ranking: {}\n", ranking_text(p, " > "));
  } else {
    // One step per shape, priced as simulate prices it (analytical model, eager prefill).
    const auto cost = make_cost_model(ConfigNode::parse("{kind: analytical}", "rank"));
    std::optional<ErrorModel> errors;
    if (a.bands || !a.error_model.empty()) {
      errors = ErrorModel::load(a.error_model.empty() ? ErrorModel::default_path() : a.error_model);
    }
    out += fmt::format(
        "{} TP{}: predicted step time (ms), analytical model; {}; fastest first, '=' a tie\n",
        model.name, a.tp,
        a.decodes > 0 ? fmt::format("{} decodes at context {}", a.decodes, a.context)
                      : fmt::format("one prefill chunk at context {}", a.context));
    out += fmt::format("{:>7}", a.decodes > 0 ? "decodes" : "tokens");
    for (const GpuSpec* g : gpus) out += fmt::format(" {:>11}", g->name);
    out += "  ranking\n";
    const std::vector<int> shapes = a.decodes > 0 ? std::vector<int>{a.decodes} : a.tokens;
    for (const int n : shapes) {
      if (n <= 0) throw InputError(fmt::format("--tokens: {} is not a positive count", n));
      BatchShape b;
      if (a.decodes > 0) {
        b.decode_contexts.assign(static_cast<std::size_t>(n), std::max(1, a.context));
      } else {
        b.prefills.push_back({n, a.context});
      }
      std::vector<Prediction> p;
      out += fmt::format("{:>7}", n);
      nlohmann::json times = nlohmann::json::object();
      for (const GpuSpec* g : gpus) {
        ReplicaSpec r;
        r.gpu = g;
        r.model = &model;
        r.tp = a.tp;
        r.cuda_graphs = true;
        const double ms = static_cast<double>(cost->step(b, r).total_ns) / 1e6;
        p.push_back({g->name, ms, u.of(*g)});
        out += fmt::format(" {:>11.3f}", ms);
        times[g->name] = ms;
      }
      out += "  " + ranking_text(p) + "\n";
      doc["shapes"].push_back({{"n", n}, {"ms", times}, {"ranking", tiers_json(p)}});
      if (errors) {
        const auto flips = rank_flips(p, gpus, step_kind(b), "analytical", *errors, a.band_draws);
        doc["shapes"].back()["bands"] = flips;
        out += "         bands: " + rank_flips_text(flips) + "\n";
      }
    }
  }
  std::vector<std::string> notes;
  notes.reserve(gpus.size());
  for (const GpuSpec* g : gpus) {
    notes.push_back(
        fmt::format("{} {:.2f}%{}", g->name, 100 * u.of(*g),
                    u.measured(*g) ? "" : " (nothing measured: the catalog's largest)"));
  }
  out += fmt::format("stated uncertainty (validated MLP-block MAPE): {}\n", fmt::join(notes, ", "));
  if (!a.profiles.empty()) {
    doc["score"] = score(a, catalog, gpus, u);
    out += score_text(doc["score"]);
  }
  return a.json ? doc.dump(2) + "\n" : out;
}

}  // namespace servesim::decide
