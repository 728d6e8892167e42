#include "sim/batch.hpp"

namespace servesim {

std::int64_t BatchShape::prefill_tokens() const {
  std::int64_t n = 0;
  for (const auto& p : prefills) n += p.tokens;
  return n;
}

std::int64_t BatchShape::decode_context_sum() const {
  std::int64_t n = 0;
  for (auto c : decode_contexts) n += c;
  return n;
}

void Batch::shape_into(BatchShape& shape) const {
  shape.clear();
  for (const auto& e : entries) {
    if (e.tokens == 1 && e.request->is_decode()) {
      shape.decode_contexts.push_back(e.request->computed);
    } else {
      shape.prefills.push_back(PrefillChunk{e.tokens, e.request->computed});
    }
  }
}

}  // namespace servesim
