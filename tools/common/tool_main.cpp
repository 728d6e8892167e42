#include "tools/common/tool_main.hpp"

#include <cstdlib>
#include <exception>

#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

// Every tool and subcommand's --help ends with the exit codes.
void add_exit_codes(CLI::App& app) {
  app.footer(
      "Exit codes: 0 ok; 1 bad input (the message names file:line:col, the CSV line or the "
      "flag, and what was expected); 2 usage error; 3 internal error (a bug: please report it).");
  for (CLI::App* sub : app.get_subcommands({})) add_exit_codes(*sub);
}

// Ends a failed run with its documented exit code. The output writers have closed or removed their
// files while the error unwound; exit handlers are skipped because HDF5's crash (exit 139) when a
// file it failed to close, e.g. on a full disk, is still in its tables.
[[noreturn]] void fail_exit(int code, std::ostream& out, std::ostream& err) {
  out.flush();
  err.flush();
  std::_Exit(code);
}

}  // namespace

int tool_main(CLI::App& app, int argc, char** argv, std::ostream& out, std::ostream& err,
              const std::function<int()>& body) {
  add_exit_codes(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e, out, err) == 0 ? 0 : 2;
  }
  return guarded_main(out, err, body);
}

int guarded_main(std::ostream& out, std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    err << "error: " << e.what() << "\n";
    fail_exit(1, out, err);
  } catch (const std::exception& e) {
    err << "internal error: " << e.what() << "\n";
    fail_exit(3, out, err);
  }
}

}  // namespace servesim
