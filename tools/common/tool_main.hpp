#pragma once

#include <functional>
#include <ostream>

#include <CLI/CLI.hpp>

namespace servesim {

// Runs `body` as a tool's main: InputError → "error: …" on `err`, exit 1; other exceptions →
// "internal error: …", exit 3. The streams are the command's own (CLI11's App::exit takes its
// streams the same way), so that the library never names the process's stdout or stderr.
int guarded_main(std::ostream& out, std::ostream& err, const std::function<int()>& body);

// A tool's main: parses the command line (--help exits 0, a usage error exits 2 with CLI11's
// message), then runs `body` under guarded_main.
int tool_main(CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err,
              const std::function<int()>& body);

}  // namespace servesim
