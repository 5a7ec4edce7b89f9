#include "common/output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/file.h"

namespace gf {
namespace {

namespace fs = std::filesystem;

Diagnostic output_error(const fs::path& at, const std::string& message,
                        const std::string& hint = "") {
  return Diagnostic::in_file(at.string(), "-o", message, hint);
}

/// Creates `dir` and its missing parents, remembering each folder made so that a failed run can
/// remove exactly those (deepest first) and nothing else.
bool make_dirs(const fs::path& dir, std::vector<fs::path>& made, std::error_code& ec) {
  std::vector<fs::path> missing;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (!fs::create_directory(*it, ec) && ec) return false;
    made.push_back(*it);
  }
  return fs::is_directory(dir, ec);
}

/// A name inside the output folder: relative, without "..", not empty.
bool safe_name(const std::string& name) {
  const fs::path p(name);
  if (name.empty() || p.is_absolute()) return false;
  for (const auto& part : p)
    if (part == ".." || part == ".") return false;
  return true;
}

/// Everything one call made, undone in reverse on failure.
struct Transaction {
  fs::path staging, backup;
  bool backup_made = false;
  std::vector<fs::path> made_dirs;                         ///< folders created, in order
  std::vector<std::pair<fs::path, fs::path>> moved_aside;  ///< existing file -> its backup
  std::vector<fs::path> placed;                            ///< final paths now holding new files

  void roll_back() {
    std::error_code ec;
    for (auto it = placed.rbegin(); it != placed.rend(); ++it) fs::remove(*it, ec);
    for (auto it = moved_aside.rbegin(); it != moved_aside.rend(); ++it)
      fs::rename(it->second, it->first, ec);
    finish();
    for (auto it = made_dirs.rbegin(); it != made_dirs.rend(); ++it) fs::remove(*it, ec);
  }
  // The staging and backup folders have names of this process and were made by it.
  void finish() {
    std::error_code ec;
    if (!staging.empty()) fs::remove_all(staging, ec);
    if (backup_made) fs::remove_all(backup, ec);
  }
};

}  // namespace

Result<std::vector<std::string>> write_outputs(const std::string& dir,
                                               const std::vector<OutputFile>& files) {
  for (const auto& [name, content] : files)
    if (!safe_name(name))
      return output_error(fs::path(dir) / name, "not a file name inside the output folder");
  Transaction t;
  std::error_code ec;
  if (!make_dirs(dir, t.made_dirs, ec)) {
    const std::string why = ec ? ec.message() : "a file of that name is in the way";
    t.roll_back();
    return output_error(dir, "cannot create the output folder: " + why, "choose a writable folder");
  }
  // Every file is written beside its target first (same file system, so the final renames are
  // atomic), and moved into place only once all were written.
  const std::string tag = fmt::format(".gpufabric-{}", getpid());
  t.staging = fs::path(dir) / (tag + "-new");
  t.backup = fs::path(dir) / (tag + "-old");
  if (!fs::create_directory(t.staging, ec)) {
    const std::string why = ec ? ec.message() : "it already exists";
    t.staging.clear();
    t.roll_back();
    return output_error(fs::path(dir) / (tag + "-new"), "cannot create a staging folder: " + why,
                        "choose a writable folder");
  }
  for (const auto& [name, content] : files) {
    const fs::path tmp = t.staging / name;
    fs::create_directories(tmp.parent_path(), ec);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      const std::string why = std::strerror(errno);
      t.roll_back();
      return output_error(fs::path(dir) / name, "cannot write the file: " + why,
                          "check free space and permissions");
    }
  }
  // Nothing is moved until every target is known to be replaceable.
  for (const auto& [name, content] : files) {
    const fs::path final_path = fs::path(dir) / name;
    const fs::path rel = fs::path(name).parent_path();
    fs::path at = fs::path(dir);
    for (const auto& part : rel) {
      at /= part;
      if (fs::exists(at, ec) && !fs::is_directory(at, ec)) {
        t.roll_back();
        return output_error(at, "a file is where a folder of outputs goes", "move it away");
      }
    }
    if (is_input_of_this_run(final_path.string())) {
      t.roll_back();
      return output_error(final_path, "is one of this command's inputs: it would be replaced",
                          "choose another -o folder");
    }
    const auto st = fs::symlink_status(final_path, ec);
    if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_symlink(st)) {
      t.roll_back();
      return output_error(final_path,
                          fs::is_directory(st) ? "a folder is where this output file goes"
                                               : "something that is not a file is in the way",
                          "move it away or choose another -o folder");
    }
  }
  for (const auto& [name, content] : files) {
    const fs::path final_path = fs::path(dir) / name;
    if (!make_dirs(final_path.parent_path(), t.made_dirs, ec)) {
      const std::string why = ec.message();
      t.roll_back();
      return output_error(final_path.parent_path(), "cannot create the folder: " + why);
    }
    if (fs::exists(fs::symlink_status(final_path, ec))) {
      if (!t.backup_made) {
        if (!fs::create_directory(t.backup, ec)) {
          const std::string why = ec ? ec.message() : "it already exists";
          t.roll_back();
          return output_error(t.backup, "cannot create a folder for the files replaced: " + why);
        }
        t.backup_made = true;
      }
      const fs::path aside = t.backup / name;
      fs::create_directories(aside.parent_path(), ec);
      fs::rename(final_path, aside, ec);
      if (ec) {
        const std::string why = ec.message();
        t.roll_back();
        return output_error(final_path, "cannot replace the file: " + why);
      }
      t.moved_aside.emplace_back(final_path, aside);
    }
    fs::rename(t.staging / name, final_path, ec);
    if (ec) {
      const std::string why = ec.message();
      t.roll_back();
      return output_error(final_path, "cannot move the file into place: " + why);
    }
    t.placed.push_back(final_path);
  }
  t.finish();
  std::vector<std::string> written;
  for (const auto& [name, content] : files) written.push_back((fs::path(dir) / name).string());
  return written;
}

std::optional<Diagnostic> output_file_problem(const std::string& path, const std::string& flag) {
  std::error_code ec;
  const fs::path target(path);
  auto error = [&](const std::string& message, const std::string& hint = "") {
    return Diagnostic::in_file(path, flag, message, hint);
  };
  if (path.empty() || target.filename().empty() || target.filename() == "." ||
      target.filename() == "..")
    return error("not a file name", "give a file, e.g. links.csv");
  // "-" is standard output to most tools; here the output is a file beside what the command
  // prints, so a file of that name would only surprise.
  if (path == "-")
    return error(
        "this output goes to a file, not standard output (which holds the command's "
        "own table)",
        "give a file, e.g. links.csv");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    return error("the folder does not exist", "create it first or choose another file");
  if (is_input_of_this_run(path))
    return error("is one of this command's inputs: it would be replaced", "give another file name");
  const auto st = fs::symlink_status(target, ec);
  if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_symlink(st))
    return error(fs::is_directory(st) ? "a folder is where this output file goes"
                                      : "something that is not a file is in the way",
                 "move it away or choose another file");
  return std::nullopt;
}

Result<std::string> write_output_file(const std::string& path, const std::string& flag,
                                      const std::function<void(std::ostream&)>& write) {
  if (auto problem = output_file_problem(path, flag)) return *problem;
  std::error_code ec;
  const fs::path target(path);
  auto error = [&](const std::string& message, const std::string& hint = "") {
    return Diagnostic::in_file(path, flag, message, hint);
  };
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path tmp =
      dir / fmt::format(".{}.gpufabric-{}.tmp", target.filename().string(), getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) write(out);
    out.close();
    if (!out) {
      const std::string why = std::strerror(errno);
      fs::remove(tmp, ec);
      return error("cannot write the file: " + why, "check free space and permissions");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    return error("cannot move the file into place: " + why);
  }
  return path;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<std::string> files_left_from_before(const std::string& dir,
                                                const std::vector<std::string>& folders,
                                                const std::vector<OutputFile>& files,
                                                std::size_t limit, std::size_t& count) {
  std::set<std::string> written;
  for (const auto& f : files) written.insert(f.first);
  std::vector<std::string> out;
  count = 0;
  // A bound on the entries looked at: a folder of a million files is not walked to the end.
  constexpr std::size_t kMaxEntries = 200000;
  std::size_t seen = 0;
  for (const auto& folder : folders) {
    std::error_code ec;
    const fs::path root = fs::path(dir) / folder;
    if (!fs::is_directory(root, ec)) continue;
    for (fs::recursive_directory_iterator
             it(root, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end && seen < kMaxEntries; it.increment(ec), ++seen) {
      if (!it->is_regular_file(ec)) continue;
      const std::string rel = fs::relative(it->path(), dir, ec).generic_string();
      if (ec || written.count(rel)) continue;
      ++count;
      if (out.size() < limit) out.push_back(rel);
    }
  }
  return out;
}

}  // namespace gf
