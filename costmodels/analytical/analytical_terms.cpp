#include "costmodels/analytical/analytical_terms.hpp"

#include <string>
#include <vector>

namespace servesim {

bool& AnalyticalTerms::operator[](std::size_t i) {
  bool* fields[] = {&efficiency, &launch,   &wave,     &l2_law,    &split_k,     &knee,
                    &light,      &row_walk, &light_l2, &attention, &collectives, &host};
  return *fields[i];
}

AnalyticalTerms AnalyticalTerms::all_off() {
  AnalyticalTerms t;
  for (std::size_t i = 0; i < kNames.size(); ++i) t[i] = false;
  return t;
}

void AnalyticalTerms::apply(const ConfigNode& node) {
  node.require_map("a map of term names to true/false");
  node.check_keys(std::vector<std::string>(kNames.begin(), kNames.end()));
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    (*this)[i] = node.get_bool(kNames[i], (*this)[i]);
  }
}

}  // namespace servesim
