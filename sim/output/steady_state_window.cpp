#include "sim/output/steady_state_window.hpp"

#include <algorithm>

#include "sim/util/sample_stats.hpp"

namespace servesim {

void SteadyStateWindow::on_step(const StepRecord& s, const BatchShape&, const StepCost&) {
  steps_.push_back({s.start_ns, s.duration_ns, s.energy_j, s.running});
}

void SteadyStateWindow::on_tokens(std::span<const TokenEvent> tokens, SimTime now) {
  for (const TokenEvent& t : tokens) {
    tokens_.push_back({now, t.gap_ns, t.tokens});
    if (t.gap_ns < 0) first_tokens_.push_back(now);
  }
}

void SteadyStateWindow::on_request_done(const Request& r, bool rejected) {
  if (!rejected && r.finished >= 0) finishes_.push_back(r.finished);
  preemptions_ += r.preemptions;
  prompt_tokens_ += r.spec.prompt_tokens;
  cached_tokens_ += r.cached_prefix;
}

SteadyStateWindow::Metrics SteadyStateWindow::metrics() const {
  Metrics m;
  std::vector<SimTime> firsts = first_tokens_;
  std::vector<SimTime> ends = finishes_;
  std::sort(firsts.begin(), firsts.end());
  std::sort(ends.begin(), ends.end());
  const auto n = static_cast<std::int64_t>(ends.size());
  const std::int64_t closing = n - seats_ - 1;  // the finish that closes the window (1-based)
  if (seats_ < 1 || static_cast<std::int64_t>(firsts.size()) < seats_ || closing < 1) return m;
  const SimTime t0 = firsts[static_cast<std::size_t>(seats_ - 1)];
  const SimTime t1 = ends[static_cast<std::size_t>(closing - 1)];
  if (t1 <= t0) return m;
  std::vector<double> gaps;
  double tokens = 0;
  for (const auto& [t, gap, count] : tokens_) {
    if (t < t0 || t > t1) continue;
    tokens += count;  // a speculative chunk carries its accepted drafts too
    if (gap >= 0) gaps.push_back(static_cast<double>(gap) / 1e6);
  }
  double energy = 0;
  double busy = 0;
  double seat_time = 0;
  for (const Step& s : steps_) {
    const auto lo = static_cast<double>(std::max(s.start, t0));
    const auto hi = static_cast<double>(std::min(s.start + s.duration, t1));
    if (hi <= lo || s.duration <= 0) continue;
    energy += s.energy_j * (hi - lo) / static_cast<double>(s.duration);
    busy += hi - lo;
    seat_time += s.running * (hi - lo);
  }
  m.window_s = static_cast<double>(t1 - t0) / 1e9;
  m.output_tok_s = tokens / m.window_s;
  if (!gaps.empty()) {
    m.itl_p50_ms = quantile(gaps, 0.5);
    m.itl_p90_ms = quantile(gaps, 0.9);
  }
  if (energy > 0 && tokens > 0) {
    m.power_w = energy / m.window_s;
    m.j_per_token = energy / tokens;
  }
  if (busy > 0) m.avg_batch = seat_time / busy;
  return m;
}

nlohmann::json SteadyStateWindow::summary() const {
  const Metrics m = metrics();
  auto v = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  return {{"seats", seats_},
          {"window_s", m.window_s},
          {"output_tok_s", v(m.output_tok_s)},
          {"itl_p50_ms", v(m.itl_p50_ms)},
          {"itl_p90_ms", v(m.itl_p90_ms)},
          {"power_w", v(m.power_w)},
          {"j_per_token", v(m.j_per_token)},
          {"avg_batch", v(m.avg_batch)}};
}

}  // namespace servesim
