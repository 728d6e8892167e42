#include "run/prices.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"

namespace servesim::decide {

Prices::Prices(const std::string& file, const std::vector<std::string>& overrides,
               Catalog& catalog) {
  if (!file.empty()) {
    const ConfigNode doc = ConfigNode::load_file(file);
    doc.require_map("a price file {source, currency, usd_per_gpu_hour}");
    doc.check_keys({"source", "currency", "usd_per_gpu_hour"});
    // As given, or relative to the working folder when it lies inside it (the default file).
    source_ = display_path(file);
    if (doc.has("currency") && doc.get_string("currency") != "USD") {
      doc.at("currency").fail("expected USD (the planner compares one currency)");
    }
    const ConfigNode table = doc.at("usd_per_gpu_hour");
    table.require_map("usd_per_gpu_hour: {gpu: price}");
    for (const std::string& key : table.keys()) {
      const std::string gpu = catalog.gpu(key, table.at(key)).name;
      usd_[gpu] = table.get_positive(key);
    }
  }
  for (const std::string& o : overrides) {
    const auto eq = o.find('=');
    const std::string flag = "--price " + o;
    double v = 0;
    const std::string num = eq == std::string::npos ? "" : o.substr(eq + 1);
    const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (eq == std::string::npos || num.empty() || ec != std::errc() ||
        p != num.data() + num.size() || !std::isfinite(v) || v <= 0) {
      throw InputError(fmt::format("{}: expected GPU=USD_PER_HOUR with a price > 0", flag));
    }
    usd_[catalog.gpu(o.substr(0, eq), ConfigNode::flag(flag)).name] = v;
  }
  if (!overrides.empty()) source_ += source_.empty() ? "--price" : " and --price";
}

}  // namespace servesim::decide
