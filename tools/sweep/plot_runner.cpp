#include "tools/sweep/plot_runner.hpp"

#include <cstdlib>
#include <vector>

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace servesim::sweep {

std::string make_plots(const std::string& dir, const std::string& kind) {
  const char* env = std::getenv("SERVESIM_PYTHON");
  const std::string python = env && *env ? env : SERVESIM_PYTHON;
  const std::string script = SERVESIM_PLOT_SCRIPT;
  std::vector<std::string> args = {python, script, kind, dir};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    return fmt::format(
        "no plots: cannot start {} (expected Python 3 with python3-matplotlib; "
        "set SERVESIM_PYTHON)",
        python);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return fmt::format("no plots: {} {} {} {} failed (its message is above)", python, script, kind,
                       dir);
  }
  return "";
}

}  // namespace servesim::sweep
