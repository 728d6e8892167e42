#pragma once

#include <iostream>
#include <string>
#include <vector>

namespace servesim {

// Runs the project's plot script as `plot.py ARGS…` (tools/plot.py: matplotlib and h5py) with the
// Python that has Debian's python3-matplotlib (SERVESIM_PYTHON, default /usr/bin/python3; the
// environment variable of that name overrides it). Returns "" when it made its pictures, else
// what went wrong, for a note: a tool's results stand without their pictures. The script's own
// messages go to the process's stderr; `out` (the command's stdout) is flushed first, so that what
// the tool printed comes before them.
std::string run_plot_script(const std::vector<std::string>& args, std::ostream& out);

// A tool's --plot FILE: writes `data` (the tool's JSON or CSV) to FILE's name with `data_ext`
// for its extension (out/x.png → out/x.json), draws `plot.py MODE that-file FILE`, and writes
// where both went to `err`, or a note when the picture could not be made. Throws InputError when
// the data file cannot be written.
void plot_beside(const std::string& file, const std::string& mode, const std::string& data,
                 const std::string& data_ext, std::ostream& out, std::ostream& err);

}  // namespace servesim
