#include "sim/config/suggest.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace servesim {
namespace {

// Optimal string alignment distance (Levenshtein with adjacent transpositions), case-folded.
std::size_t distance(std::string_view a, std::string_view b) {
  const auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest_name(std::string_view name, const std::vector<std::string>& known) {
  const std::size_t limit = name.size() <= 4 ? 1 : name.size() <= 8 ? 2 : 3;
  std::string best;
  std::size_t best_d = limit + 1;
  for (const auto& k : known) {
    const std::size_t dk = distance(name, k);
    if (dk < best_d) {
      best_d = dk;
      best = k;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& known) {
  const std::string c = closest_name(name, known);
  return c.empty() ? "" : fmt::format("did you mean '{}'? ", c);
}

}  // namespace servesim
