#include "common/output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

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

/// A file's record in kOutputRecord: what gpufabric wrote there, so that a later run replaces it
/// only while it still holds that (a file edited since is the user's work).
struct Recorded {
  std::uint64_t bytes = 0;
  std::uint64_t hash = 0;  ///< FNV-1a, 64 bits, of the content
};

/// FNV-1a 64 (Fowler, Noll, Vo; the offset basis and prime of its reference): not a defence
/// against anyone, only a check that a file still holds what gpufabric wrote.
constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;
std::uint64_t fnv1a(std::uint64_t h, const char* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= kFnvPrime;
  }
  return h;
}

/// The record is read with a bound of its own (131,072 nodes' host files are ~40 MB of names).
constexpr std::uintmax_t kMaxRecordBytes = 256 * kMiB;

/// What the record says of each file: every content gpufabric wrote there that a later run may
/// replace (two while a run is being written: the one before and its own, so that a run cut
/// short leaves each file replaceable, whichever of the two it holds).
using Record = std::map<std::string, std::vector<Recorded>>;

/// The record in `dir`: an empty one where there is none; a diagnostic where a file of that
/// name is not one (gpufabric then replaces nothing in the folder).
Result<Record> read_record(const fs::path& dir) {
  Record out;
  const fs::path at = dir / kOutputRecord;
  std::error_code ec;
  const auto st = fs::symlink_status(at, ec);
  if (!fs::exists(st)) return out;
  auto not_a_record = [&](std::size_t line, const std::string& why) {
    Diagnostic d = Diagnostic::in_file(at.string(), "-o",
                                       "is not gpufabric's record of the files it wrote here (" +
                                           why + "), so no file in this folder may be replaced",
                                       "move it away, or choose another -o folder");
    d.line = static_cast<int>(line);
    return d;
  };
  if (!fs::is_regular_file(st)) return not_a_record(0, "not a regular file");
  if (fs::file_size(at, ec) > kMaxRecordBytes) return not_a_record(0, "larger than 256 MiB");
  std::ifstream in(at, std::ios::binary);
  if (!in) return not_a_record(0, std::string("it cannot be read: ") + std::strerror(errno));
  std::string text;
  std::size_t line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (!text.empty() && text.back() == '\r') text.pop_back();  // saved with CRLF endings
    if (text.empty() || text[0] == '#') continue;
    std::istringstream fields(text);
    std::string hash, bytes;
    if (!(fields >> hash >> bytes) || hash.size() != 16 ||
        hash.find_first_not_of("0123456789abcdef") != std::string::npos ||
        bytes.find_first_not_of("0123456789") != std::string::npos || bytes.size() > 19)
      return not_a_record(line_no, "expected the content's hash, its bytes and the file's name");
    std::string name;
    std::getline(fields >> std::ws, name);
    if (!safe_name(name)) return not_a_record(line_no, "no file name inside the folder");
    out[name].push_back(Recorded{std::stoull(bytes), std::stoull(hash, nullptr, 16)});
  }
  return out;
}

/// Whether the file at `path` holds one of the contents gpufabric recorded for it: its size
/// first, so that no large file is read to tell.
bool holds_what_was_written(const fs::path& path, const std::vector<Recorded>& recs) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(path, ec))) return false;
  const auto size = fs::file_size(path, ec);
  if (ec ||
      std::none_of(recs.begin(), recs.end(), [&](const Recorded& r) { return r.bytes == size; }))
    return false;
  std::ifstream in(path, std::ios::binary);
  std::uint64_t h = kFnvOffset;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0)
    h = fnv1a(h, buf, static_cast<std::size_t>(in.gcount()));
  return std::any_of(recs.begin(), recs.end(),
                     [&](const Recorded& r) { return r.bytes == size && r.hash == h; });
}

std::string record_text(const Record& rec) {
  std::string out =
      "# gpufabric: the files it wrote in this folder: the FNV-1a 64 hash of each one's content, "
      "its bytes, its name.\n# A later run replaces only a file listed here that still holds "
      "what was written; any other file in its way is refused, never deleted.\n";
  for (const auto& [name, recs] : rec)
    for (const auto& r : recs) out += fmt::format("{:016x} {} {}\n", r.hash, r.bytes, name);
  return out;
}

/// An exclusive lock on the output folder for one run (flock(2) on the folder itself, so no
/// file is left behind): two commands writing one folder at once take turns, and neither
/// loses the other's entries of the record.
struct FolderLock {
  int fd = -1;
  explicit FolderLock(const fs::path& dir) {
    fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~FolderLock() {
    if (fd >= 0) ::close(fd);  // closing releases the lock
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
};

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
    for (auto it = moved_aside.rbegin(); it != moved_aside.rend(); ++it) {
      fs::rename(it->second, it->first, ec);
      // A file that cannot be put back stays in the backup folder, which is then kept.
      if (ec) backup_made = false;
    }
    finish();
    for (auto it = made_dirs.rbegin(); it != made_dirs.rend(); ++it) fs::remove(*it, ec);
  }
  // Moves `at` (`name` in the folder) into the backup folder, made on first use, and checks it
  // there, where nobody writes to it any more, against what gpufabric wrote (`recs`; null for
  // the record itself): an edit saved since the first check is put back, not deleted. On
  // failure everything is rolled back and the diagnostic returned; `cannot` says what failed.
  std::optional<Diagnostic> set_aside(const fs::path& at, const std::string& name,
                                      const std::vector<Recorded>* recs, const std::string& cannot,
                                      const std::string& hint = "") {
    std::error_code ec;
    if (!backup_made) {
      if (!fs::create_directory(backup, ec)) {
        const std::string why = ec ? ec.message() : "it already exists";
        roll_back();
        return output_error(backup, "cannot create a folder for the files replaced: " + why);
      }
      backup_made = true;
    }
    const fs::path aside = backup / name;
    fs::create_directories(aside.parent_path(), ec);
    fs::rename(at, aside, ec);
    if (ec) {
      const std::string why = ec.message();
      roll_back();
      return output_error(at, cannot + ": " + why, hint);
    }
    moved_aside.emplace_back(at, aside);
    if (recs && !holds_what_was_written(aside, *recs)) {
      roll_back();
      return output_error(at,
                          "was changed while gpufabric wrote this folder: it is left as it is "
                          "now, and nothing was written",
                          "run again once it is no longer being edited");
    }
    return std::nullopt;
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
                                               const std::vector<OutputFile>& files,
                                               const std::vector<std::string>& whole_folders,
                                               std::vector<std::string>* retired) {
  for (const auto& [name, content] : files) {
    if (!safe_name(name))
      return output_error(fs::path(dir) / name, "not a file name inside the output folder");
    if (name == kOutputRecord)
      return output_error(fs::path(dir) / name, "is the name of gpufabric's record of its outputs");
  }
  // A system folder (plan -o /, configs -o /etc) is no output folder: its files would sit among
  // the system's own, and a later run's retiring of this one's files would act there.
  std::string where;
  if (const auto why = system_folder_reason(dir, &where))
    return output_error(dir,
                        fmt::format("{} is {}; gpufabric writes its outputs in a folder of "
                                    "their own",
                                    where, *why),
                        "give a folder of its own, e.g. out/");
  Transaction t;
  std::error_code ec;
  if (!make_dirs(dir, t.made_dirs, ec)) {
    const std::string why = ec ? ec.message() : "a file of that name is in the way";
    t.roll_back();
    return output_error(dir, "cannot create the output folder: " + why, "choose a writable folder");
  }
  const FolderLock lock(dir);
  // What earlier runs wrote here (read under the lock, so that a run finishing meanwhile is
  // seen), and what this one writes.
  auto recorded = read_record(dir);
  if (!recorded) {
    t.roll_back();
    return recorded.errors();
  }
  const std::string record_path = (fs::path(dir) / kOutputRecord).string();
  const bool had_record = fs::exists(fs::symlink_status(record_path, ec));
  // The record is written twice. First, before any file moves, with both contents for each
  // name this run replaces, the one there and its own: a run cut short (a signal, a full disk,
  // a power loss) leaves every file replaceable by the next. Last, with this run's alone.
  Record during, after;
  for (const auto& [name, recs] : *recorded)
    if (fs::exists(fs::symlink_status(fs::path(dir) / name, ec))) during[name] = after[name] = recs;
  for (const auto& [name, content] : files) {
    const Recorded mine{content.size(), fnv1a(kFnvOffset, content.data(), content.size())};
    after[name] = {mine};
    during[name].push_back(mine);
  }
  // An earlier run's files in the folders this run writes whole, unchanged and not written
  // again: removed with this run, and so left out of its record.
  std::vector<std::string> retiring;
  std::set<std::string> writing;
  for (const auto& f : files) writing.insert(f.first);
  for (const auto& [name, recs] : *recorded) {
    const std::string top = fs::path(name).begin()->string();
    if (writing.count(name) || fs::path(name).parent_path().empty() ||
        std::find(whole_folders.begin(), whole_folders.end(), top) == whole_folders.end() ||
        !holds_what_was_written(fs::path(dir) / name, recs))
      continue;
    retiring.push_back(name);
    after.erase(name);
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
  // The record first, so that it is in place before any file it describes.
  std::vector<OutputFile> all;
  all.reserve(files.size() + 1);
  all.emplace_back(kOutputRecord, record_text(during));
  all.insert(all.end(), files.begin(), files.end());
  const std::string final_record_name = std::string(kOutputRecord) + ".final";
  all.emplace_back(final_record_name, record_text(after));
  for (const auto& [name, content] : all) {
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
  all.pop_back();  // the final record is moved in last, over the first
  // Nothing is moved until every target is known to be replaceable; every file in the way is
  // named (up to kMaxNamed), not the first alone.
  constexpr std::size_t kMaxNamed = 10;
  std::vector<Diagnostic> in_the_way;
  std::size_t blocked = 0;
  auto refuse = [&](const fs::path& at, const std::string& message, const std::string& hint) {
    if (++blocked <= kMaxNamed) in_the_way.push_back(output_error(at, message, hint));
  };
  for (const auto& [name, content] : files) {
    const fs::path final_path = fs::path(dir) / name;
    const fs::path rel = fs::path(name).parent_path();
    fs::path at = fs::path(dir);
    bool folder_blocked = false;
    for (const auto& part : rel) {
      at /= part;
      if (fs::exists(at, ec) && !fs::is_directory(at, ec)) {
        refuse(at, "a file is where a folder of outputs goes", "move it away");
        folder_blocked = true;
        break;
      }
    }
    if (folder_blocked) continue;
    if (is_input_of_this_run(final_path.string())) {
      refuse(final_path, "is one of this command's inputs: it would be replaced",
             "choose another -o folder");
      continue;
    }
    const auto st = fs::symlink_status(final_path, ec);
    if (!fs::exists(st)) continue;
    if (!fs::is_regular_file(st) && !fs::is_symlink(st)) {
      refuse(final_path,
             fs::is_directory(st) ? "a folder is where this output file goes"
                                  : "something that is not a file is in the way",
             "move it away or choose another -o folder");
      continue;
    }
    // Only what gpufabric wrote, unchanged since, is replaced: a file of the user's (or one
    // they edited) in the way is refused, never deleted.
    const auto it = recorded->find(name);
    if (it == recorded->end())
      refuse(final_path,
             had_record ? "is in the way of this output, and the folder's record of what "
                          "gpufabric wrote (" +
                              record_path + ") does not list it"
                        : "is in the way of this output, and the folder has no record of what "
                          "gpufabric wrote there (" +
                              record_path + ")",
             "move it away, or choose another -o folder; if gpufabric wrote it, delete it "
             "yourself: gpufabric replaces only the files its record lists");
    else if (!holds_what_was_written(final_path, it->second))
      refuse(final_path,
             fs::is_symlink(st) ? "is a link now, where gpufabric wrote a file: replacing it "
                                  "would lose it"
                                : "was changed since gpufabric wrote it: replacing it would "
                                  "lose the changes",
             "move it away to keep the changes, or delete it, then run again; or choose "
             "another -o folder");
  }
  if (blocked > 0) {
    if (blocked > kMaxNamed)
      in_the_way.push_back(output_error(
          dir,
          fmt::format("{} more files are in the way of this run's outputs", blocked - kMaxNamed),
          "nothing was written"));
    t.roll_back();
    return in_the_way;
  }
  for (const auto& [name, content] : all) {
    const fs::path final_path = fs::path(dir) / name;
    if (!make_dirs(final_path.parent_path(), t.made_dirs, ec)) {
      const std::string why = ec.message();
      t.roll_back();
      return output_error(final_path.parent_path(), "cannot create the folder: " + why);
    }
    if (fs::exists(fs::symlink_status(final_path, ec))) {
      // Every name but the record's was found in the record above.
      const auto it = recorded->find(name);
      static const std::vector<Recorded> kNone;
      const std::vector<Recorded>* recs = name == kOutputRecord   ? nullptr
                                          : it == recorded->end() ? &kNone
                                                                  : &it->second;
      if (auto bad = t.set_aside(final_path, name, recs, "cannot replace the file")) return *bad;
    }
    fs::rename(t.staging / name, final_path, ec);
    if (ec) {
      const std::string why = ec.message();
      t.roll_back();
      return output_error(final_path, "cannot move the file into place: " + why);
    }
    t.placed.push_back(final_path);
  }
  // The earlier run's files this one retires, moved aside (put back should anything fail) and
  // checked again there: one edited meanwhile is put back, and nothing is written.
  std::vector<std::string> gone;
  for (const auto& name : retiring) {
    if (auto bad =
            t.set_aside(fs::path(dir) / name, name, &recorded->at(name),
                        "cannot remove this earlier run's file", "check the folder's permissions"))
      return *bad;
    gone.push_back(name);
  }
  // Every file is in place: the record keeps this run's contents alone. Should this rename
  // fail, the first record still names every file's content.
  fs::rename(t.staging / final_record_name, fs::path(dir) / kOutputRecord, ec);
  t.finish();
  // The folders the retired files leave empty (fs::remove takes a folder only when empty).
  for (const auto& name : gone)
    for (fs::path rel = fs::path(name).parent_path();
         !rel.empty() && fs::remove(fs::path(dir) / rel, ec); rel = rel.parent_path()) {
    }
  if (retired) *retired = gone;
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

FilesLeft files_left_from_before(const std::string& dir, const std::vector<std::string>& folders,
                                 const std::vector<OutputFile>& files, std::size_t limit) {
  std::set<std::string> written;
  for (const auto& f : files) written.insert(f.first);
  auto recorded = read_record(dir);
  FilesLeft out;
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
      // Lexically: fs::relative would follow a link to wherever it points.
      const std::string rel = it->path().lexically_relative(dir).generic_string();
      if (written.count(rel)) continue;
      ++out.count;
      (recorded && recorded->count(rel) ? out.earlier_runs : out.not_gpufabrics).push_back(rel);
    }
  }
  // Named in order, an earlier run's first, whatever order the file system lists them in.
  std::sort(out.earlier_runs.begin(), out.earlier_runs.end());
  std::sort(out.not_gpufabrics.begin(), out.not_gpufabrics.end());
  out.earlier_runs.resize(std::min(out.earlier_runs.size(), limit));
  out.not_gpufabrics.resize(std::min(out.not_gpufabrics.size(), limit));
  return out;
}

}  // namespace gf
