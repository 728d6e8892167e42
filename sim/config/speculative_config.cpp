#include "sim/config/speculative_config.hpp"

#include <fmt/format.h>

namespace servesim {

const char* speculative_method_name(SpeculativeMethod m) {
  switch (m) {
    case SpeculativeMethod::kDraft:
      return "draft";
    case SpeculativeMethod::kMtp:
      return "mtp";
    case SpeculativeMethod::kEagle:
      return "eagle";
  }
  return "draft";
}

SpeculativeConfig SpeculativeConfig::parse(const ConfigNode& node) {
  node.require_map("the speculative section {method, num_speculative_tokens, acceptance_rate}");
  node.check_keys({"method", "draft_model", "num_speculative_tokens", "acceptance_rate",
                   "acceptance_rates", "draft_layers"});
  SpeculativeConfig c;
  c.node = node;
  const ConfigNode method = node.at("method");
  const std::string m = method.as_string();
  if (m == "draft") {
    c.method = SpeculativeMethod::kDraft;
  } else if (m == "mtp") {
    c.method = SpeculativeMethod::kMtp;
  } else if (m == "eagle") {
    c.method = SpeculativeMethod::kEagle;
  } else {
    method.fail(fmt::format("unknown speculative method '{}' (known: draft, eagle, mtp)", m));
  }
  if (c.method == SpeculativeMethod::kDraft) {
    c.draft_model = node.get_string("draft_model");
    if (c.draft_model.empty()) node.at("draft_model").fail("expected a catalog model id");
    if (node.has("draft_layers")) {
      node.at("draft_layers").fail("only mtp and eagle heads have draft_layers (method is draft)");
    }
  } else {
    if (node.has("draft_model")) {
      node.at("draft_model")
          .fail(fmt::format("method {} drafts with heads on the target (expected no draft_model, "
                            "or method: draft)",
                            m));
    }
    c.draft_layers = node.get_positive("draft_layers", 1.0);
    if (c.draft_layers > 16) node.at("draft_layers").fail("expected at most 16 target layers");
  }
  const ConfigNode k = node.at("num_speculative_tokens");
  const std::int64_t tokens = k.as_int();
  if (tokens < 1 || tokens > kMaxSpeculativeTokens) {
    k.fail(fmt::format("expected an integer from 1 to {}, got {}", kMaxSpeculativeTokens, tokens));
  }
  c.num_speculative_tokens = static_cast<std::int32_t>(tokens);
  const bool one = node.has("acceptance_rate");
  const bool list = node.has("acceptance_rates");
  if (one == list) {
    node.fail(
        "expected exactly one of acceptance_rate (one per-token rate) and acceptance_rates (one "
        "rate per draft position)");
  }
  if (one) {
    const double alpha = node.get_fraction("acceptance_rate", 0);
    double p = 1;
    for (std::int32_t j = 0; j < c.num_speculative_tokens; ++j) c.acceptance.push_back(p *= alpha);
  } else {
    const ConfigNode rates = node.at("acceptance_rates");
    if (!rates.is_sequence()) rates.fail("expected a list of rates, one per draft position");
    const std::vector<ConfigNode> items = rates.items();
    if (static_cast<std::int64_t>(items.size()) != tokens) {
      rates.fail(
          fmt::format("expected {} rates (num_speculative_tokens), got {}", tokens, items.size()));
    }
    for (const ConfigNode& r : items) {
      const double v = r.as_double();
      if (!(v >= 0 && v <= 1)) r.fail(fmt::format("expected a rate in [0, 1], got {}", v));
      if (!c.acceptance.empty() && v > c.acceptance.back()) {
        r.fail(fmt::format(
            "expected rates that do not increase with the position (a position is accepted only "
            "when every earlier one is), got {} after {}",
            v, c.acceptance.back()));
      }
      c.acceptance.push_back(v);
    }
  }
  return c;
}

double SpeculativeConfig::expected_accepted(std::int32_t drafts) const {
  double sum = 0;
  for (std::int32_t j = 0; j < drafts && j < num_speculative_tokens; ++j) {
    sum += acceptance[static_cast<std::size_t>(j)];
  }
  return sum;
}

}  // namespace servesim
