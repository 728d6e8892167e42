#pragma once

namespace servesim {

// std::visit over a variant with one lambda per alternative:
//   std::visit(Overloaded{[](const A&) {…}, [](const B&) {…}}, v);
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace servesim
