#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/config/config_node.hpp"

namespace servesim {

// Every registry's "unknown kind" error, in one shape: what was given, the closest known name
// when it is near enough to be a typo, and the valid values:
//   t.yaml:3:9: unknown scheduler 'sarathy' (did you mean 'sarathi'? known: edf, orca, sarathi)
[[noreturn]] void fail_unknown_kind(const ConfigNode& at, std::string_view what,
                                    std::string_view given, const std::vector<std::string>& known);

// Accepts every entry of a table.
struct AnyEntry {
  template <class Entry>
  bool operator()(const Entry&) const {
    return true;
  }
};

// The kinds of a registry table (entries with a `kind` name) that `keep` accepts, in table order.
template <class Entry, class Keep = AnyEntry>
std::vector<std::string> kinds_of(const std::vector<Entry>& table, Keep keep = {}) {
  std::vector<std::string> out;
  for (const Entry& e : table) {
    if (keep(e)) out.emplace_back(e.kind);
  }
  return out;
}

// The entry of `table` named by the string at `kind` among those `keep` accepts; any other name
// is fail_unknown_kind at `kind`, listing the accepted kinds as the valid values.
template <class Entry, class Keep = AnyEntry>
const Entry& lookup_kind(const std::vector<Entry>& table, const ConfigNode& kind,
                         std::string_view what, Keep keep = {}) {
  const std::string name = kind.as_string();
  for (const Entry& e : table) {
    if (e.kind == name && keep(e)) return e;
  }
  fail_unknown_kind(kind, what, name, kinds_of(table, keep));
}

}  // namespace servesim
