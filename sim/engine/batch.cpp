#include "sim/engine/batch.hpp"

namespace servesim {

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
