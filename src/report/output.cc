#include "report/output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gf {

Result<std::vector<std::string>> write_outputs(const std::string& dir,
                                               const std::vector<OutputFile>& files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    return Diagnostic{dir,
                      0,
                      0,
                      "-o",
                      fmt::format("cannot create output folder: {}", ec.message()),
                      "choose a writable folder"};
  std::vector<std::pair<fs::path, fs::path>> staged;
  auto cleanup = [&] {
    for (auto& [tmp, final_path] : staged) fs::remove(tmp, ec);
  };
  for (const auto& [name, content] : files) {
    const fs::path final_path = fs::path(dir) / name;
    fs::create_directories(final_path.parent_path(), ec);
    const fs::path tmp = final_path.string() + fmt::format(".tmp-{}", getpid());
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    staged.emplace_back(tmp, final_path);
    if (!out) {
      cleanup();
      return Diagnostic{final_path.string(), 0, 0, "-o", "cannot write file", "check free space"};
    }
  }
  std::vector<std::string> written;
  for (auto& [tmp, final_path] : staged) {
    fs::rename(tmp, final_path, ec);
    if (ec) {
      cleanup();
      return Diagnostic{
          final_path.string(), 0, 0, "-o", "cannot rename into place: " + ec.message(), ""};
    }
    written.push_back(final_path.string());
  }
  return written;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace gf
