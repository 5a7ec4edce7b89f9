// Writing result files: all or nothing, so bad input never leaves half-written output.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/diag.h"

namespace gf {

/// A file to write: name relative to the output folder, and its content.
using OutputFile = std::pair<std::string, std::string>;

/// Writes every file into `dir` (created if missing): each goes to a temporary name first and
/// all are renamed into place only once all were written. Returns the paths written.
Result<std::vector<std::string>> write_outputs(const std::string& dir,
                                               const std::vector<OutputFile>& files);

/// A CSV field, quoted when it holds a comma, a quote or a newline (RFC 4180).
std::string csv_field(const std::string& s);

}  // namespace gf
