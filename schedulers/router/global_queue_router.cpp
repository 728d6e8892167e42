#include "schedulers/router/global_queue_router.hpp"

#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace servesim {

namespace {

template <class E>
E one_of(const ConfigNode& node, std::string_view key, E fallback,
         std::initializer_list<std::pair<const char*, E>> names) {
  const auto n = node.find(key);
  if (!n) return fallback;
  const std::string v = n->as_string();
  std::vector<std::string> known;
  for (const auto& [name, e] : names) {
    if (v == name) return e;
    known.emplace_back(name);
  }
  n->fail(fmt::format("unknown {} '{}' (known: {})", key, v, fmt::join(known, ", ")));
}

}  // namespace

GlobalQueueRouter::Options GlobalQueueRouter::parse(const ConfigNode& node) {
  node.check_keys(
      {"kind", "order", "estimator", "admission", "native", "reanchor_s", "sustained_load"});
  Options o;
  o.order = one_of(node, "order", Order::kEdf, {{"edf", Order::kEdf}, {"fcfs", Order::kFcfs}});
  o.estimator = one_of(node, "estimator", Estimator::kNone,
                       {{"none", Estimator::kNone},
                        {"native", Estimator::kNative},
                        {"mechanism", Estimator::kMechanism}});
  o.admission = one_of(
      node, "admission", Admission::kKeep,
      {{"keep", Admission::kKeep}, {"reject", Admission::kReject}, {"demote", Admission::kDemote}});
  if (o.admission != Admission::kKeep && o.estimator == Estimator::kNone) {
    node.at("admission")
        .fail(fmt::format("admission {} acts on an estimated miss (expected estimator native or "
                          "mechanism, or admission keep)",
                          node.get_string("admission")));
  }
  if (auto n = node.find("native")) {
    n->require_map("the native estimator's constants {output_tokens, tokens_per_s}");
    n->check_keys({"output_tokens", "tokens_per_s"});
    o.native_output_tokens = n->get_positive("output_tokens", o.native_output_tokens);
    o.native_tokens_per_s = n->get_positive("tokens_per_s", 0);
  }
  if (o.estimator == Estimator::kNative && o.native_tokens_per_s <= 0) {
    (node.has("native") ? node.at("native") : node.at("estimator"))
        .fail(
            "the native estimator needs the model's token throughput (expected native: "
            "{tokens_per_s: …}; QLM's qlm/config.yaml gives 700 for Llama-3.1-8B-Instruct, 300 "
            "for Llama-3.1-70B-Instruct)");
  }
  o.reanchor_s = node.get_positive("reanchor_s", o.reanchor_s);
  o.sustained_load = node.get_bool("sustained_load", false);
  if (o.sustained_load && o.estimator != Estimator::kMechanism) {
    node.at("sustained_load")
        .fail(
            "sustained_load is the mechanism estimator's (expected "
            "estimator: mechanism)");
  }
  return o;
}

bool GlobalQueueRouter::Before::operator()(const Request* a, const Request* b) const {
  if (a->demoted != b->demoted) return b->demoted;
  // Demoted requests are served in arrival order; the others by deadline (edf) or arrival.
  const bool edf = o->order == Order::kEdf && !a->demoted;
  const SimTime ka = edf ? a->deadline : a->spec.arrival;
  const SimTime kb = edf ? b->deadline : b->spec.arrival;
  if (ka != kb) return ka < kb;
  if (a->spec.arrival != b->spec.arrival) return a->spec.arrival < b->spec.arrival;
  return a->id < b->id;
}

void GlobalQueueRouter::attach(const Fleet& fleet, const CostModel& cost_model) {
  if (options_.estimator == Estimator::kMechanism) {
    lookahead_ = std::make_unique<Lookahead>(fleet, cost_model, seconds_to_sim(options_.reanchor_s),
                                             options_.sustained_load);
  }
}

bool GlobalQueueRouter::estimate(Request& r, SimTime now, SimTime& judged) {
  if (options_.estimator == Estimator::kNone) return false;
  const auto pos = queue_.lower_bound(&r);  // where r will be queued
  switch (options_.estimator) {
    case Estimator::kNone:
      return false;
    case Estimator::kNative: {
      // QLM: the waiting time of a request group is its requests × the workload's tokens ÷ the
      // model's token throughput, summed over the groups up to and including its own.
      const auto ahead = static_cast<double>(std::distance(queue_.begin(), pos));
      r.est_wait = seconds_to_sim((ahead + 1) * options_.native_output_tokens /
                                  options_.native_tokens_per_s);
      judged = now + r.est_wait;
      return true;
    }
    case Estimator::kMechanism: {
      if (queue_.empty()) lookahead_->invalidate();  // anchoring at an empty queue is cheap
      const bool tail = pos == queue_.end() || (*pos)->demoted;
      const bool queued_ahead = pos != queue_.begin();
      const Lookahead::Estimate e =
          lookahead_->estimate(r, now, tail, queued_ahead, [&](auto& ahead) {
            for (auto it = queue_.begin(); it != pos; ++it) ahead.push_back(*it);
          });
      if (e.start < 0) return false;
      r.est_wait = e.start - now;
      judged = r.deadline_ttft ? e.first_token : e.finish;
      return true;
    }
  }
  return false;
}

ReplicaId GlobalQueueRouter::route(Request& r, const Fleet& /*fleet*/,
                                   const std::vector<ReplicaId>& /*eligible*/, SimTime now) {
  SimTime judged = 0;
  const bool estimated = estimate(r, now, judged);
  if (estimated) r.est_due = judged;
  if (estimated && r.deadline != kNoDeadline && judged > r.deadline) {
    if (options_.admission == Admission::kReject) {
      r.reject_reason = RejectReason::kAdmission;
      if (lookahead_) lookahead_->withdraw(r.id);
      return kRefused;
    }
    if (options_.admission == Admission::kDemote) {
      r.demoted = true;
      ++demoted_queued_;
      if (lookahead_) lookahead_->withdraw(r.id);
    }
  }
  queue_.insert(&r);
  return kQueued;
}

Request* GlobalQueueRouter::next_for(ReplicaId /*replica*/, SimTime now, SimTime cutoff,
                                     const std::function<bool(const Request&)>& fits) {
  if (options_.admission == Admission::kDemote) {
    // A request already past its deadline cannot make it: serve it behind those that can.
    while (!queue_.empty()) {
      Request* head = *queue_.begin();
      if (head->demoted || head->deadline >= now) break;
      queue_.erase(queue_.begin());
      head->demoted = true;
      ++demoted_queued_;
      queue_.insert(head);
      if (lookahead_) lookahead_->invalidate();
    }
  }
  for (Request* r : queue_) {
    if (r->spec.arrival <= cutoff && fits(*r)) return r;
  }
  return nullptr;
}

void GlobalQueueRouter::take(Request* r, ReplicaId /*replica*/, SimTime now) {
  if (lookahead_) {
    if (r != *queue_.begin()) lookahead_->invalidate();
    if (!r->demoted) lookahead_->observe_start(*r, now);
  }
  queue_.erase(r);
  if (r->demoted) --demoted_queued_;
}

}  // namespace servesim
