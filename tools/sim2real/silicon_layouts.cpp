// plan --layouts: the deployments of one model on one system, simulated with the silicon replay's
// launches and client, and the frontier of output tokens/s per GPU against tokens/s per user.
#include "tools/sim2real/silicon_layouts.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"

namespace servesim::sim2real {
namespace {

// One server's layout: GPUs, attention-DP groups and EP ranks.
struct Server {
  std::int64_t gpus = 1;
  std::int64_t dp = 1;
  std::int64_t ep = 1;
};

// `server` written into a row's or a pool's layout columns (the two name them alike) in
// AIConfigurator's convention, which silicon_layout reads back: tp × attention_dp GPUs, the
// experts over moe_tp × moe_ep of them.
template <class Columns>
void write_layout(Columns& c, const Server& server, bool moe) {
  c.tp = server.gpus / server.dp;
  c.pp = 1;
  c.attention_dp = server.dp;
  c.attention_dp_stated = server.dp > 1;
  c.moe_ep = server.ep;
  c.moe_tp = moe ? server.gpus / server.ep : 1;
}

SiliconPool pool_of(const Server& server, std::int64_t workers, bool moe) {
  SiliconPool p;
  write_layout(p, server, moe);
  p.workers = workers;
  return p;
}

std::string server_name(const Server& s) {
  if (s.dp > 1) return fmt::format("DEP{}", s.gpus);
  if (s.ep > 1) return fmt::format("TEP{}", s.gpus);
  return fmt::format("TP{}", s.gpus);
}

Server server_of(const SiliconLayout& l) { return {l.gpus, l.attention_dp, l.ep}; }

}  // namespace

std::vector<SiliconRow> layout_candidates(const LayoutQuery& q, const SiliconOptions& options) {
  if (q.max_gpus < 1) throw InputError("the GPU budget must be at least 1");
  if (q.formats.empty()) throw InputError("no weight format to plan");
  Catalog catalog(Catalog::default_dirs());
  const int domain = silicon_nvlink_domain(silicon_system_gpu(q.system));
  std::vector<SiliconRow> out;
  std::vector<std::string> refused;  // layouts dropped, with the reason
  const auto base = [&](const std::string& engine, const LayoutQuery::Format& f) {
    SiliconRow r;
    r.source = "servesim plan --layouts";
    r.backend = engine;
    r.model_path = q.model;
    r.system = q.system;
    r.precision = f.precision;
    r.gemm_quant = f.gemm_quant;
    r.isl = q.isl;
    r.osl = q.osl;
    return r;
  };
  for (const std::string& engine : q.engines) {
    for (const LayoutQuery::Format& f : q.formats) {
      // What the catalog lacks (model, format, GPU) is an error; layouts the model cannot take
      // are dropped by probing one server of each at concurrency 1.
      const std::string model = silicon_catalog_model(q.model, catalog.model_names());
      if (model.empty()) {
        throw InputError(fmt::format("plan --layouts: model {} is not in the catalog", q.model));
      }
      const bool moe = catalog.model(model, ConfigNode::parse("{}", "plan --layouts")).is_moe();
      SiliconRow probe = base(engine, f);
      probe.mode = "agg";
      probe.concurrency = 1;
      probe.where = "plan --layouts";
      write_layout(probe, {}, moe);
      if (const SiliconPlan first = plan_silicon_row(probe, catalog, options);
          !first.not_run.empty() && !first.not_run.starts_with("layout") &&
          !first.not_run.starts_with("memory")) {
        throw InputError(fmt::format("plan --layouts {} {} {}: {}", q.model, engine,
                                     silicon_weight_format(probe), first.not_run));
      }
      std::vector<Server> servers;
      for (std::int64_t g = 1; g <= std::min<std::int64_t>(q.max_gpus, domain); g *= 2) {
        std::vector<Server> kinds{{g, 1, 1}};
        if (moe && g > 1) {
          kinds.push_back({g, 1, g});
          kinds.push_back({g, g, g});
        }
        for (const Server& s : kinds) {
          SiliconRow r = probe;
          write_layout(r, s, moe);
          const std::string why = plan_silicon_row(r, catalog, options).not_run;
          if (why.empty()) {
            servers.push_back(s);
          } else {
            refused.push_back(
                fmt::format("{} {} {}: {}", engine, silicon_weight_format(r), server_name(s), why));
          }
        }
      }
      if (q.aggregated) {
        for (const Server& s : servers) {
          for (const std::int64_t b : q.per_rank) {
            const std::int64_t c = b * s.dp;
            if (c > q.max_concurrency) continue;
            SiliconRow r = base(engine, f);
            r.mode = "agg";
            r.concurrency = c;
            write_layout(r, s, moe);
            out.push_back(std::move(r));
          }
        }
      }
      if (q.disaggregated && !servers.empty()) {
        // Prefill servers of the narrowest width that holds the model, with EP where the model
        // has experts: a prompt's pass is long enough that wider prefill servers buy little a
        // second narrow one does not.
        const std::int64_t narrow = servers.front().gpus;
        static constexpr std::int64_t kRatios[][2] = {{1, 4}, {1, 2}, {1, 1},
                                                      {2, 1}, {3, 1}, {4, 1}};
        for (const Server& p : servers) {
          if (p.gpus != narrow || (moe && p.ep == 1 && p.gpus > 1)) continue;
          for (const Server& d : servers) {
            for (const auto& ratio : kRatios) {
              const std::int64_t np = ratio[0];
              const std::int64_t nd = ratio[1];
              if (np * p.gpus + nd * d.gpus > q.max_gpus) continue;
              for (const std::int64_t b : q.per_rank) {
                const std::int64_t c = b * d.dp * nd;
                if (c > q.max_concurrency) continue;
                SiliconRow r = base(engine, f);
                r.mode = "disagg";
                r.concurrency = c;
                r.pools = true;
                r.prefill = pool_of(p, np, moe);
                r.decode = pool_of(d, nd, moe);
                out.push_back(std::move(r));
              }
            }
          }
        }
      }
    }
  }
  if (out.empty()) {
    std::string why;
    for (const std::string& r : refused) why += "\n  " + r;
    throw InputError(fmt::format("plan --layouts: no deployment of {} on {} within {} GPU{}:{}",
                                 q.model, q.system, q.max_gpus, q.max_gpus == 1 ? "" : "s", why));
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].id = layout_label(out[i]);
    out[i].where = fmt::format("plan --layouts candidate {}", i + 1);
  }
  return out;
}

std::vector<std::size_t> pareto_frontier(const std::vector<FrontierPoint>& points) {
  // Points without a speed (not simulated) are left out before sorting: NaN has no order.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (std::isfinite(points[i].tokens_per_s_per_user) &&
        std::isfinite(points[i].tokens_per_s_per_gpu)) {
      order.push_back(i);
    }
  }
  // Fastest per user first; ties by more tokens/s per GPU, then input order.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& pa = points[a];
    const auto& pb = points[b];
    if (pa.tokens_per_s_per_user != pb.tokens_per_s_per_user) {
      return pa.tokens_per_s_per_user > pb.tokens_per_s_per_user;
    }
    return pa.tokens_per_s_per_gpu > pb.tokens_per_s_per_gpu;
  });
  std::vector<std::size_t> front;
  double best_gpu = -std::numeric_limits<double>::infinity();
  for (const std::size_t i : order) {
    const auto& p = points[i];
    // Everything faster per user seen so far gives less per GPU than best_gpu: this point is on
    // the frontier when it gives more.
    if (p.tokens_per_s_per_gpu > best_gpu) {
      front.push_back(i);
      best_gpu = p.tokens_per_s_per_gpu;
    }
  }
  std::reverse(front.begin(), front.end());
  return front;
}

LayoutSearch search_layouts(const LayoutQuery& query, const SiliconOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  LayoutQuery q = query;
  std::sort(q.per_rank.begin(), q.per_rank.end());
  LayoutSearch s;
  s.rows = std::make_shared<const std::vector<SiliconRow>>(layout_candidates(q, options));
  const std::vector<SiliconRow>& rows = *s.rows;
  s.results.resize(rows.size());
  // A layout's candidates are consecutive, by rising concurrency: its family.
  std::vector<std::pair<std::size_t, std::size_t>> families;
  const auto family_of = [&](std::size_t i) {
    const std::string& id = rows[i].id;
    return id.substr(0, id.rfind(" c"));
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    s.results[i].run.row = &rows[i];
    s.results[i].point = {kNaN, kNaN};
    if (i == 0 || family_of(i) != family_of(i - 1)) families.emplace_back(i, i);
    families.back().second = i + 1;
  }
  // Waves: each live family's next concurrency, simulated together. A family stops once a point
  // is slower per user than the slowest speed asked for, or gives fewer tokens/s per GPU than
  // the concurrency below it (past its peak: the KV cache or the prefill pool is full, and more
  // clients only queue); its higher concurrencies are reported as pruned, not simulated.
  RunCache cache;  // the waves' runs share cost models and step tables
  std::vector<std::size_t> next(families.size());
  std::vector<bool> live(families.size(), true);
  for (std::size_t f = 0; f < families.size(); ++f) next[f] = families[f].first;
  for (;;) {
    std::vector<SiliconRow> wave;
    std::vector<std::size_t> at;
    for (std::size_t f = 0; f < families.size(); ++f) {
      if (!live[f]) continue;
      wave.push_back(rows[next[f]]);
      at.push_back(f);
    }
    if (wave.empty()) break;
    std::vector<SiliconResult> runs = replay_silicon_rows(wave, options, &cache);
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const std::size_t f = at[k];
      const std::size_t i = next[f];
      LayoutResult& l = s.results[i];
      l.run = std::move(runs[k]);
      l.run.row = &rows[i];
      bool stop = false;
      if (l.run.plan.not_run.empty()) {
        ++s.runs;
        if (std::isfinite(l.run.ttft_ms) && std::isfinite(l.run.tpot_ms) && l.run.tpot_ms > 0) {
          l.point = frontier_point(rows[i], l.run.plan.gpus, l.run.ttft_ms, l.run.tpot_ms);
        }
        const double below = i > families[f].first ? s.results[i - 1].point.tokens_per_s_per_gpu
                                                   : -std::numeric_limits<double>::infinity();
        stop = !std::isfinite(l.point.tokens_per_s_per_gpu) ||
               l.point.tokens_per_s_per_user < q.min_user_speed ||
               l.point.tokens_per_s_per_gpu < below;
      }
      if (++next[f] == families[f].second) {
        live[f] = false;
      } else if (stop) {
        live[f] = false;
        for (std::size_t j = next[f]; j < families[f].second; ++j) s.results[j].pruned = true;
      }
    }
  }
  std::vector<FrontierPoint> points;
  for (const LayoutResult& l : s.results) points.push_back(l.point);
  for (const std::size_t i : pareto_frontier(points)) s.results[i].on_frontier = true;
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

const LayoutResult* layout_pick(const LayoutSearch& search, double min_user_speed,
                                double max_ttft_ms) {
  const LayoutResult* pick = nullptr;
  for (const LayoutResult& r : search.results) {
    if (!std::isfinite(r.point.tokens_per_s_per_gpu)) continue;
    if (r.point.tokens_per_s_per_user < min_user_speed) continue;
    if (std::isfinite(max_ttft_ms) && r.run.ttft_ms > max_ttft_ms) continue;
    if (!pick || r.point.tokens_per_s_per_gpu > pick->point.tokens_per_s_per_gpu) pick = &r;
  }
  return pick;
}

std::string layout_label(const SiliconRow& row) {
  const std::string format = silicon_weight_format(row);
  if (row.mode == "disagg" && row.pools) {
    const SiliconLayout p = silicon_layout(pool_row(row, row.prefill));
    const SiliconLayout d = silicon_layout(pool_row(row, row.decode));
    return fmt::format("disagg {} {} prefill {} ×{} + decode {} ×{} c{}", row.backend, format,
                       server_name(server_of(p)), row.prefill.workers, server_name(server_of(d)),
                       row.decode.workers, row.concurrency);
  }
  return fmt::format("agg {} {} {} c{}", row.backend, format,
                     server_name(server_of(silicon_layout(row))), row.concurrency);
}

LayoutKey layout_key(const SiliconRow& row) {
  LayoutKey k;
  k.engine = row.backend;
  k.format = silicon_weight_format(row);
  k.mode = row.mode;
  const auto put = [&](int i, const SiliconLayout& l, std::int64_t workers) {
    k.gpus[i] = l.gpus * (i == 0 && row.mode == "agg" ? row.pp : 1);
    k.dp[i] = l.attention_dp;
    k.ep[i] = l.ep;
    k.workers[i] = workers;
  };
  if (row.mode == "disagg" && row.pools) {
    put(0, silicon_layout(pool_row(row, row.prefill)), row.prefill.workers);
    put(1, silicon_layout(pool_row(row, row.decode)), row.decode.workers);
  } else {
    put(0, silicon_layout(row), 1);
  }
  return k;
}

double layout_distance(const LayoutKey& a, const LayoutKey& b) {
  double d = 0;
  if (a.mode != b.mode) d += 100;
  if (a.engine != b.engine) d += 10;
  if (a.format != b.format) d += 10;
  const auto log2_ratio = [](std::int64_t x, std::int64_t y) {
    if (x <= 0 || y <= 0) return x == y ? 0.0 : 4.0;
    return std::abs(std::log2(static_cast<double>(x) / static_cast<double>(y)));
  };
  for (int i = 0; i < 2; ++i) {
    d += log2_ratio(a.gpus[i], b.gpus[i]);
    d += (a.dp[i] > 1) != (b.dp[i] > 1) ? 1 : 0;
    d += (a.ep[i] > 1) != (b.ep[i] > 1) ? 1 : 0;
  }
  if (a.mode == "disagg" && b.mode == "disagg") {
    d += std::abs(std::log2(static_cast<double>(a.workers[0]) / static_cast<double>(a.workers[1])) -
                  std::log2(static_cast<double>(b.workers[0]) / static_cast<double>(b.workers[1])));
  }
  return d;
}

nlohmann::json layout_search_json(const LayoutQuery& q, const LayoutSearch& s,
                                  const std::vector<double>& bounds, double max_ttft_ms) {
  nlohmann::json formats = nlohmann::json::array();
  for (const auto& f : q.formats) {
    SiliconRow r;
    r.precision = f.precision;
    r.gemm_quant = f.gemm_quant;
    formats.push_back(silicon_weight_format(r));
  }
  const auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nullptr; };
  nlohmann::json candidates = nlohmann::json::array();
  nlohmann::json frontier = nlohmann::json::array();
  std::map<std::string, std::int64_t> not_run;
  for (std::size_t i = 0; i < s.results.size(); ++i) {
    const LayoutResult& r = s.results[i];
    const SiliconRow& row = *r.run.row;
    nlohmann::json c = {{"label", row.id},
                        {"mode", row.mode},
                        {"engine", row.backend},
                        {"format", silicon_weight_format(row)},
                        {"concurrency", row.concurrency},
                        {"gpus", r.run.plan.gpus},
                        {"ttft_ms", number(r.run.ttft_ms)},
                        {"tpot_ms", number(r.run.tpot_ms)},
                        {"tokens_per_s_per_user", number(r.point.tokens_per_s_per_user)},
                        {"tokens_per_s_per_gpu", number(r.point.tokens_per_s_per_gpu)},
                        {"preemptions", r.run.preemptions},
                        {"wall_s", r.run.wall_s},
                        {"on_frontier", r.on_frontier}};
    if (r.pruned) {
      c["pruned"] = true;
    } else if (!r.run.plan.not_run.empty()) {
      c["not_run"] = r.run.plan.not_run;
      ++not_run[r.run.plan.not_run];
    }
    candidates.push_back(std::move(c));
  }
  std::vector<std::pair<double, std::size_t>> front;
  for (std::size_t i = 0; i < s.results.size(); ++i) {
    if (s.results[i].on_frontier) {
      front.emplace_back(s.results[i].point.tokens_per_s_per_user, i);
    }
  }
  std::sort(front.begin(), front.end());
  for (const auto& [speed, i] : front) frontier.push_back(i);
  nlohmann::json picks = nlohmann::json::array();
  for (const double bound : bounds) {
    const LayoutResult* p = layout_pick(s, bound, max_ttft_ms);
    picks.push_back({{"min_tokens_per_s_per_user", bound},
                     {"candidate", p ? nlohmann::json(p - s.results.data()) : nullptr}});
  }
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& [why, n] : not_run) reasons.push_back({{"reason", why}, {"count", n}});
  return {{"query",
           {{"model", q.model},
            {"system", q.system},
            {"engines", q.engines},
            {"formats", formats},
            {"isl", q.isl},
            {"osl", q.osl},
            {"max_gpus", q.max_gpus},
            {"aggregated", q.aggregated},
            {"disaggregated", q.disaggregated},
            {"max_ttft_ms", number(max_ttft_ms)}}},
          {"formula",
           "tokens/s/user = 1000 / TPOT; tokens/s/GPU = concurrency × L / (TTFT + (L − 1) × "
           "TPOT) / GPUs, L the client's mean output length"},
          {"candidates_total", s.results.size()},
          {"runs", s.runs},
          {"pruned", std::count_if(s.results.begin(), s.results.end(),
                                   [](const LayoutResult& r) { return r.pruned; })},
          {"wall_s", s.wall_s},
          {"candidates", candidates},
          {"frontier", frontier},
          {"picks", picks},
          {"not_run", reasons}};
}

std::string layout_search_table(const nlohmann::json& doc) {
  const auto& q = doc["query"];
  const auto& cands = doc["candidates"];
  std::string out = fmt::format(
      "plan --layouts {} on {} at {}/{}, up to {} GPUs: {} candidates, {} simulated in {:.1f} s\n",
      q["model"].get<std::string>(), q["system"].get<std::string>(), q["isl"].get<std::int64_t>(),
      q["osl"].get<std::int64_t>(), q["max_gpus"].get<std::int64_t>(),
      doc["candidates_total"].get<std::size_t>(), doc["runs"].get<std::size_t>(),
      doc["wall_s"].get<double>());
  out += "frontier (no other candidate gives more tokens/s per GPU at as many tokens/s per user)\n";
  // A deployment's 80% band (plan --layouts adds it from the silicon replay's errors).
  const auto band = [](const nlohmann::json& c, const char* key) {
    if (!c.contains("band")) return std::string();
    if (c["band"].is_string()) return std::string("unmeasured");
    const auto& b = c["band"][key];
    return fmt::format("{:.0f}–{:.0f}", b[0].get<double>(), b[1].get<double>());
  };
  out += fmt::format("  {:>10} {:>11} {:>9} {:>8} {:>5}  {:<15} {:<13}  {}\n", "tok/s/user",
                     "tok/s/GPU", "TTFT ms", "TPOT ms", "GPUs", "80% band: /GPU", "/user",
                     "deployment");
  for (const auto& i : doc["frontier"]) {
    const auto& c = cands[i.get<std::size_t>()];
    out += fmt::format("  {:>10.1f} {:>11.1f} {:>9.0f} {:>8.2f} {:>5}  {:<15} {:<13}  {}\n",
                       c["tokens_per_s_per_user"].get<double>(),
                       c["tokens_per_s_per_gpu"].get<double>(), c["ttft_ms"].get<double>(),
                       c["tpot_ms"].get<double>(), c["gpus"].get<std::int64_t>(),
                       band(c, "tokens_per_s_per_gpu"), band(c, "tokens_per_s_per_user"),
                       c["label"].get<std::string>());
  }
  out += "picks (most tokens/s per GPU at each per-user speed";
  out += q["max_ttft_ms"].is_null()
             ? std::string(")\n")
             : fmt::format(", TTFT ≤ {:.0f} ms)\n", q["max_ttft_ms"].get<double>());
  for (const auto& p : doc["picks"]) {
    const double bound = p["min_tokens_per_s_per_user"].get<double>();
    if (p["candidate"].is_null()) {
      out += fmt::format("  ≥ {:>5.0f} tok/s/user: no candidate is this fast\n", bound);
      continue;
    }
    const auto& c = cands[p["candidate"].get<std::size_t>()];
    const std::string b = band(c, "tokens_per_s_per_gpu");
    out += fmt::format("  ≥ {:>5.0f} tok/s/user: {:>8.1f} tok/s/GPU{}  {}\n", bound,
                       c["tokens_per_s_per_gpu"].get<double>(), b.empty() ? "" : " (" + b + ")",
                       c["label"].get<std::string>());
  }
  if (doc.contains("bands")) {
    out += fmt::format("80% bands: {} ({})\n", doc["bands"]["what"].get<std::string>(),
                       doc["bands"]["source"].get<std::string>());
  }
  for (const auto& r : doc["not_run"]) {
    out +=
        fmt::format("not simulated: {} candidate{}: {}\n", r["count"].get<std::int64_t>(),
                    r["count"].get<std::int64_t>() == 1 ? "" : "s", r["reason"].get<std::string>());
  }
  return out;
}

}  // namespace servesim::sim2real
