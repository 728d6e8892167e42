#include "sim/cost_model.hpp"

namespace servesim {

std::string_view cost_component_name(CostComponent c) {
  switch (c) {
    case CostComponent::kGemm:
      return "gemm";
    case CostComponent::kAttention:
      return "attention";
    case CostComponent::kLight:
      return "light";
    case CostComponent::kCollective:
      return "collective";
    case CostComponent::kEmbedding:
      return "embedding";
    case CostComponent::kHost:
      return "host";
    case CostComponent::kCount:
      break;
  }
  return "?";
}

}  // namespace servesim
