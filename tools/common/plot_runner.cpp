#include "tools/common/plot_runner.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/wait.h>

#include "sim/config/input_error.hpp"

extern char** environ;

namespace servesim {

std::string run_plot_script(const std::vector<std::string>& args, std::ostream& out) {
  const char* env = std::getenv("SERVESIM_PYTHON");
  const std::string python = env && *env ? env : SERVESIM_PYTHON;
  std::vector<std::string> words = {python, SERVESIM_PLOT_SCRIPT};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  out.flush();  // what the tool printed comes before the script's messages
  pid_t pid = 0;
  if (posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    return fmt::format(
        "no plots: cannot start {} (expected Python 3 with python3-matplotlib and python3-h5py; "
        "set SERVESIM_PYTHON)",
        python);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return fmt::format("no plots: {} failed (its message is above)", fmt::join(words, " "));
  }
  return "";
}

void plot_beside(const std::string& file, const std::string& mode, const std::string& data,
                 const std::string& data_ext, std::ostream& out, std::ostream& err) {
  const std::string data_file = std::filesystem::path(file).replace_extension(data_ext).string();
  std::ofstream data_out(data_file);
  data_out << data;
  if (!data_out) throw InputError(fmt::format("--plot {}: cannot write {}", file, data_file));
  data_out.close();
  const std::string note = run_plot_script({mode, data_file, file}, out);
  if (note.empty()) {
    err << fmt::format("plot       {} (data: {})\n", file, data_file);
  } else {
    err << "note: " << note << "\n";
  }
}

}  // namespace servesim
