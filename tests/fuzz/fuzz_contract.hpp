#pragma once

// The contract every fuzz target checks (README.md, "Bad input exits 1"): a parser given any bytes
// returns normally or throws InputError whose message says where — "file:LINE[:COL]: …" or the
// flag that gave the value ("--set …"). Any other exception escapes (libFuzzer reports it as a
// crash), and an InputError without a location aborts with its message.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sim/config/input_error.hpp"

namespace servesim::fuzz {

// Whether `message` holds "X:DIGITS:" or "X:DIGITS: " for a file X, or a "--set " flag.
inline bool has_location(std::string_view message) {
  if (message.find("--set ") != std::string_view::npos) return true;
  for (std::size_t i = 0; i + 2 < message.size(); ++i) {
    if (message[i] != ':' || i == 0) continue;
    std::size_t j = i + 1;
    while (j < message.size() && message[j] >= '0' && message[j] <= '9') ++j;
    if (j > i + 1 && j < message.size() && message[j] == ':') return true;
  }
  return false;
}

template <class Body>
void within_contract(Body&& body) {
  try {
    body();
  } catch (const InputError& e) {
    if (!has_location(e.what())) {
      std::fprintf(stderr, "contract: an InputError without a location: %s\n", e.what());
      std::abort();
    }
  }
}

// A file holding `bytes`, rewritten for each input: the readers under test take paths. One per
// process (the pid in its name), so replays running in parallel do not share it.
std::string write_input_file(std::string_view bytes, std::string_view extension);

// For the readers of files: the input's first byte selects what reads it, the rest is the file
// (named with `extension`); runs body(selector, path) within the contract. Empty input: nothing.
template <class Body>
int on_selected_file(const std::uint8_t* data, std::size_t size, std::string_view extension,
                     Body&& body) {
  if (size == 0) return 0;
  const std::string path =
      write_input_file({reinterpret_cast<const char*>(data) + 1, size - 1}, extension);
  within_contract([&] { body(data[0], path); });
  return 0;
}

}  // namespace servesim::fuzz
