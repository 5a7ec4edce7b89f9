#include "verify/trace_readers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

namespace gf {
namespace {

/// A problem found while reading: unwinds to the reader's entry, which turns it into a value.
struct ReadError {
  int line;
  std::string key, message, hint;
  int column = 0;  ///< where the JSON reader was on the line (a Kineto trace is one line)
};

/// Blocks of an istream, a byte at a time, counting lines and bytes.
class Bytes {
 public:
  Bytes(std::istream& in, std::size_t max_bytes) : in_(in), max_(max_bytes), buf_(kBlock) {}
  int peek() {
    if (pos_ == end_ && !refill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  int get() {
    if (pos_ == end_ && !refill()) return -1;
    const char c = buf_[pos_++];
    if (c == '\n') {
      ++line_;
      line_start_ = consumed();
    }
    return static_cast<unsigned char>(c);
  }
  int line() const { return line_; }
  /// 1-based: the next byte's place on its line.
  int column() const {
    return static_cast<int>(
        std::min<std::size_t>(consumed() - line_start_ + 1, std::numeric_limits<int>::max()));
  }
  /// The bytes up to the next '"' or '\\' (none of them a newline in valid JSON), appended.
  void take_plain(std::string& out, std::size_t limit) {
    for (;;) {
      if (pos_ == end_ && !refill()) return;
      std::size_t i = pos_;
      while (i < end_ && buf_[i] != '"' && buf_[i] != '\\' && buf_[i] != '\n') ++i;
      if (out.size() + (i - pos_) > limit)
        throw ReadError{line_, "", fmt::format("a string longer than {}", human_bytes(limit)),
                        "this is not a trace Kineto wrote"};
      out.append(&buf_[pos_], i - pos_);
      pos_ = i;
      if (i < end_) return;
    }
  }
  /// Skips the bytes up to the next '"' or '\\' or newline.
  void skip_plain() {
    for (;;) {
      if (pos_ == end_ && !refill()) return;
      std::size_t i = pos_;
      while (i < end_ && buf_[i] != '"' && buf_[i] != '\\' && buf_[i] != '\n') ++i;
      pos_ = i;
      if (i < end_) return;
    }
  }
  std::size_t consumed() const { return total_ - (end_ - pos_); }

 private:
  static constexpr std::size_t kBlock = 1 << 20;
  bool refill() {
    in_.read(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    end_ = static_cast<std::size_t>(in_.gcount());
    pos_ = 0;
    total_ += end_;
    if (total_ > max_)
      throw ReadError{line_, "", fmt::format("the file goes on past {}", human_bytes(max_)),
                      "check that this is the file you meant"};
    return end_ > 0;
  }
  std::istream& in_;
  std::size_t max_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0, total_ = 0;
  std::size_t line_start_ = 0;  ///< the offset of the current line's first byte
  int line_ = 1;
};

// --- JSON, streamed -------------------------------------------------------------------------

/// A scalar JSON value: a string, a number, true/false/null, or a compound that was skipped.
struct Scalar {
  enum Kind { kNone, kString, kNumber, kOther } kind = kNone;
  std::string text;  ///< the string's content
  double number = 0;
  std::vector<double> numbers;  ///< an array of numbers, if it was one
};

class Json {
 public:
  explicit Json(Bytes& b) : b_(b) {}
  Bytes& bytes() { return b_; }

  [[noreturn]] void fail(const std::string& what, const std::string& hint = "") {
    throw ReadError{b_.line(), "", what, hint, b_.column()};
  }
  void ws() {
    for (;;) {
      const int c = b_.peek();
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
        b_.get();
      else
        return;
    }
  }
  int peek_ns() {
    ws();
    return b_.peek();
  }
  void expect(char c) {
    ws();
    const int g = b_.get();
    if (g == c) return;
    if (g < 0)
      fail(fmt::format("the file ends where '{}' was expected", c),
           "the trace is truncated: was the profiler stopped before it finished writing?");
    fail(fmt::format("expected '{}', found {}", c, shown(g)));
  }
  static std::string shown(int c) {
    if (c < 0) return "the end of the file";
    if (c >= 32 && c < 127) return fmt::format("'{}'", static_cast<char>(c));
    return fmt::format("byte 0x{:02x}", c);
  }
  /// A string (after its opening quote was seen by peek), into `out`.
  void string(std::string& out, std::size_t limit = kMaxTraceEventBytes) {
    expect('"');
    out.clear();
    for (;;) {
      b_.take_plain(out, limit);
      const int c = b_.get();
      if (c == '"') return;
      if (c < 0) fail("the file ends inside a string", "the trace is truncated");
      if (c == '\n') fail("a newline inside a string");
      // An escape: \" \\ \/ \b \f \n \r \t \uXXXX (kept as '?' beyond ASCII: names are ASCII).
      const int e = b_.get();
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          int v = 0;
          for (int i = 0; i < 4; ++i) {
            const int h = b_.get();
            const int d =
                std::isxdigit(h) ? (std::isdigit(h) ? h - '0' : (std::tolower(h) - 'a' + 10)) : -1;
            if (d < 0) fail("a bad \\u escape in a string");
            v = v * 16 + d;
          }
          out += v < 128 ? static_cast<char>(v) : '?';
          break;
        }
        default:
          fail(fmt::format("a bad escape \\{} in a string", shown(e).substr(0, 3)));
      }
    }
  }
  void skip_string() {
    expect('"');
    for (;;) {
      b_.skip_plain();
      const int c = b_.get();
      if (c == '"') return;
      if (c < 0) fail("the file ends inside a string", "the trace is truncated");
      if (c == '\n') fail("a newline inside a string");
      if (b_.get() < 0) fail("the file ends inside a string", "the trace is truncated");
    }
  }
  double number() {
    ws();
    char tmp[64];
    std::size_t n = 0;
    for (;;) {
      const int c = b_.peek();
      if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
        if (n + 1 >= sizeof tmp) fail("a number too long");
        tmp[n++] = static_cast<char>(b_.get());
      } else {
        break;
      }
    }
    fractional_ = std::memchr(tmp, '.', n) != nullptr;
    double v = 0;
    auto [p, ec] = std::from_chars(tmp, tmp + n, v);
    if (n == 0 || ec != std::errc() || p != tmp + n) fail("a malformed number");
    return v;
  }
  void literal(const char* word) {
    ws();
    for (const char* p = word; *p; ++p)
      if (b_.get() != *p) fail(fmt::format("expected '{}'", word));
  }
  /// Any value, skipped; depth-bounded.
  void skip(int depth) {
    if (depth > kMaxTraceJsonDepth) fail("values nested too deep");
    const int c = peek_ns();
    if (c == '"') return skip_string();
    if (c == '{') {
      b_.get();
      if (peek_ns() == '}') return (void)b_.get();
      for (;;) {
        skip_string();
        expect(':');
        skip(depth + 1);
        const int d = peek_ns();
        b_.get();
        if (d == '}') return;
        if (d != ',') fail(fmt::format("expected ',' or '}}' in an object, found {}", shown(d)));
      }
    }
    if (c == '[') {
      b_.get();
      if (peek_ns() == ']') return (void)b_.get();
      for (;;) {
        skip(depth + 1);
        const int d = peek_ns();
        b_.get();
        if (d == ']') return;
        if (d != ',') fail(fmt::format("expected ',' or ']' in an array, found {}", shown(d)));
      }
    }
    if (c == 't') return literal("true");
    if (c == 'f') return literal("false");
    if (c == 'n') return literal("null");
    if (c == '-' || (c >= '0' && c <= '9')) return (void)number();
    if (c < 0) fail("the file ends where a value was expected", "the trace is truncated");
    fail(fmt::format("expected a value, found {}", shown(c)));
  }
  /// A value as a Scalar: strings and numbers kept, arrays of numbers kept, the rest skipped.
  void scalar(Scalar& s, int depth) {
    const int c = peek_ns();
    s.numbers.clear();
    if (c == '"') {
      s.kind = Scalar::kString;
      string(s.text);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      s.kind = Scalar::kNumber;
      s.number = number();
    } else if (c == '[') {
      s.kind = Scalar::kOther;
      b_.get();
      if (peek_ns() == ']') return (void)b_.get();
      bool all_numbers = true;
      for (;;) {
        const int e = peek_ns();
        if (all_numbers && (e == '-' || (e >= '0' && e <= '9')) && s.numbers.size() < 1 << 20) {
          s.numbers.push_back(number());
        } else {
          all_numbers = false;
          skip(depth + 1);
        }
        const int d = peek_ns();
        b_.get();
        if (d == ']') break;
        if (d != ',') fail(fmt::format("expected ',' or ']' in an array, found {}", shown(d)));
      }
      if (!all_numbers) s.numbers.clear();
    } else {
      s.kind = Scalar::kOther;
      skip(depth);
    }
  }
  /// Walks an object: `on_key(key)` reads or skips the value after the ':'.
  template <typename F>
  void object(F on_key) {
    expect('{');
    if (peek_ns() == '}') return (void)b_.get();
    std::string key;
    for (;;) {
      if (peek_ns() != '"') fail(fmt::format("expected a key, found {}", shown(b_.peek())));
      string(key, 4096);
      expect(':');
      on_key(key);
      const int d = peek_ns();
      b_.get();
      if (d == '}') return;
      if (d < 0) fail("the file ends inside an object", "the trace is truncated");
      if (d != ',') fail(fmt::format("expected ',' or '}}' in an object, found {}", shown(d)));
    }
  }

  /// Whether the last number read had a fraction ("5000.123" as Kineto writes times since 2023).
  bool fractional() const { return fractional_; }

 private:
  Bytes& b_;
  bool fractional_ = false;
};

// --- Kineto ---------------------------------------------------------------------------------

/// The fields of one trace event that the replay reads.
struct Event {
  int line = 0;
  std::string ph, cat, name;
  double ts = std::nan(""), dur = std::nan("");
  bool ts_fraction = false;  ///< "ts" written with a fraction of a microsecond
  double pid = -1, tid = -1;
  // args
  double external_id = -1, stream = -1;
  bool has_coll = false;
  std::string coll_name, dtype, pg_name, pg_desc;
  std::vector<int> pg_ranks;
  double in_nelems = -1, out_nelems = -1, group_size = -1, rank = -1;
  void clear() { *this = Event(); }
};

/// "[0, 1, 2, ...]" as PyTorch writes a group's ranks (fmt::join, cut after 30 with "...").
std::vector<int> ranks_of_text(const std::string& t) {
  std::vector<int> out;
  const char* p = t.c_str();
  const char* e = p + t.size();
  while (p < e) {
    while (p < e && !(*p >= '0' && *p <= '9')) {
      if (*p == '.') return out;  // "..." : the rest was cut
      ++p;
    }
    int v = 0;
    auto [q, ec] = std::from_chars(p, e, v);
    if (ec != std::errc()) return out;
    out.push_back(v);
    p = q;
    if (out.size() > (1u << 24)) return out;
  }
  return out;
}

std::vector<int> ranks_of(const Scalar& s) {
  if (s.kind == Scalar::kString) return ranks_of_text(s.text);
  std::vector<int> out;
  for (double d : s.numbers)
    if (d >= 0 && d < 1 << 30) out.push_back(static_cast<int>(d));
  return out;
}

void read_args(Json& j, Event& ev) {
  Scalar s;
  j.object([&](const std::string& k) {
    // Key names: PyTorch torch/csrc/profiler/util.h (kCommsName ... kGroupRanks) and Kineto
    // libkineto/src/output_json.cpp, which copies them onto the NCCL kernel.
    if (k == "External id" || k == "external id") {  // the latter: Kineto of 2021
      j.scalar(s, 3);
      if (s.kind == Scalar::kNumber) ev.external_id = s.number;
    } else if (k == "stream") {
      j.scalar(s, 3);
      if (s.kind == Scalar::kNumber) ev.stream = s.number;
    } else if (k == "Collective name") {
      j.scalar(s, 3);
      ev.coll_name = s.text;
      ev.has_coll = true;
    } else if (k == "dtype") {
      j.scalar(s, 3);
      ev.dtype = s.text;
    } else if (k == "In msg nelems" || k == "Out msg nelems") {
      j.scalar(s, 3);
      if (s.kind == Scalar::kNumber) {
        // Elements of at most 8 bytes: past the bound, no rank sent them.
        if (s.number < 0 || s.number > kMaxTracedCollectiveBytes)
          throw ReadError{ev.line, k,
                          fmt::format("{:g} elements: not a message a rank sent", s.number),
                          "give the trace as the profiler wrote it"};
        (k == "In msg nelems" ? ev.in_nelems : ev.out_nelems) = s.number;
      }
      ev.has_coll = true;
    } else if (k == "Group size") {
      j.scalar(s, 3);
      if (s.kind == Scalar::kNumber) ev.group_size = s.number;
      ev.has_coll = true;
    } else if (k == "Process Group Name") {
      j.scalar(s, 3);
      ev.pg_name = s.kind == Scalar::kNumber ? fmt::format("{:g}", s.number) : s.text;
    } else if (k == "Process Group Description") {
      j.scalar(s, 3);
      ev.pg_desc = s.text;
    } else if (k == "Process Group Ranks") {
      j.scalar(s, 3);
      ev.pg_ranks = ranks_of(s);
    } else if (k == "Rank") {
      j.scalar(s, 3);
      if (s.kind == Scalar::kNumber) ev.rank = s.number;
    } else {
      j.skip(3);
    }
  });
}

void read_event(Json& j, Event& ev) {
  ev.clear();
  ev.line = j.bytes().line();
  Scalar s;
  j.object([&](const std::string& k) {
    if (k == "ph" || k == "cat" || k == "name") {
      j.scalar(s, 2);
      (k == "ph" ? ev.ph : k == "cat" ? ev.cat : ev.name) = s.text;
    } else if (k == "ts" || k == "dur" || k == "pid" || k == "tid") {
      j.scalar(s, 2);
      const double v = s.kind == Scalar::kNumber ? s.number : -1;
      if (k == "ts") ev.ts = s.kind == Scalar::kNumber ? v : std::nan("");
      if (k == "ts" && s.kind == Scalar::kNumber) ev.ts_fraction = j.fractional();
      if (k == "dur") ev.dur = s.kind == Scalar::kNumber ? v : std::nan("");
      if (k == "pid") ev.pid = v;
      if (k == "tid") ev.tid = v;
    } else if (k == "args") {
      if (j.peek_ns() == '{')
        read_args(j, ev);
      else
        j.skip(2);
    } else {
      j.skip(2);
    }
  });
}

bool is_nccl_kernel(const std::string& name) {
  return name.rfind("ncclDevKernel_", 0) == 0 || name.rfind("ncclKernel_", 0) == 0;
}

/// Strings and rank lists seen many times (every call of a group repeats them), kept once.
template <typename T>
class Interned {
 public:
  Interned() { id(T()); }
  int32_t id(const T& x) {
    auto [it, fresh] = ids_.try_emplace(x, static_cast<int32_t>(all_.size()));
    if (fresh) all_.push_back(x);
    return it->second;
  }
  const T& operator[](int32_t i) const { return all_[static_cast<size_t>(i)]; }

 private:
  std::map<T, int32_t> ids_;
  std::vector<T> all_;
};

/// A collective's metadata: from a record_param_comms op or an NCCL kernel's own args; strings
/// and ranks as ids into the reader's tables (0: none).
struct CommInfo {
  int32_t name = 0, dtype = 0, pg_name = 0, pg_desc = 0, ranks = 0;
  double in = -1, out = -1, size = -1;
  int line = 0;
};

struct Tables {
  Interned<std::string> text;
  Interned<std::vector<int>> ranks;
  CommInfo info_of(const Event& e) {
    return {text.id(e.coll_name), text.id(e.dtype),     text.id(e.pg_name),
            text.id(e.pg_desc),   ranks.id(e.pg_ranks), e.in_nelems,
            e.out_nelems,         e.group_size,         e.line};
  }
};

struct PendingKernel {
  int32_t kernel;  ///< index into rank.kernels
  double external_id;
  int32_t name;  ///< the kernel's name, for its operation when nothing else says
  std::optional<CommInfo> info;
  int line;
};

}  // namespace

TraceKind detect_trace_kind(const std::string& head) {
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b)
    return TraceKind::kGzip;
  for (char c : head) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '{' || c == '[') return TraceKind::kKineto;
    break;
  }
  if (head.find("NCCL INFO") != std::string::npos || head.find("NCCL WARN") != std::string::npos ||
      head.find("NCCL version") != std::string::npos)
    return TraceKind::kNcclLog;
  return TraceKind::kUnknown;
}

Result<TracedRank> read_kineto_trace(std::istream& in, const std::string& file,
                                     std::size_t max_bytes) {
  TracedRank r;
  r.file = file;
  r.format = "kineto";
  Bytes bytes(in, max_bytes);
  Json j(bytes);
  Tables tables;
  std::unordered_map<long long, CommInfo> param_comms;  // External id -> record_param_comms
  struct NcclOp {
    double ext, tid, ts, dur;
  };
  std::vector<NcclOp> nccl_ops;  // nccl:* ops, to find the record_param_comms around them
  struct Rpc {
    double tid, ts, dur;
    CommInfo info;
  };
  std::vector<Rpc> rpcs;
  std::vector<PendingKernel> nccl_kernels;
  std::map<std::pair<double, double>, int32_t> streams;  // (pid, stream) -> id
  std::vector<TracedStep> cpu_steps, gpu_steps;
  std::map<std::string, TracedGroup> pg_config;  // distributedInfo's groups
  bool saw_events = false;
  bool ts_integer = true;  // older Kineto wrote whole microseconds
  int rank_arg = -1;
  try {
    if (j.peek_ns() < 0)
      throw ReadError{1, "", "the file is empty", "give the trace torch.profiler wrote"};
    if (j.peek_ns() != '{')
      throw ReadError{bytes.line(), "", "expected a JSON object (a Chrome trace) at the start",
                      "give the .json the profiler wrote (export_chrome_trace or "
                      "tensorboard_trace_handler), unzipped"};
    Event ev;
    j.object([&](const std::string& key) {
      if (key == "traceEvents") {
        saw_events = true;
        j.expect('[');
        if (j.peek_ns() == ']') return (void)bytes.get();
        for (;;) {
          if (j.peek_ns() != '{') {
            j.skip(1);
          } else {
            read_event(j, ev);
            if (!std::isnan(ev.ts) && ev.ts_fraction) ts_integer = false;
            const bool complete = ev.ph == "X";
            if (complete && (std::isnan(ev.ts) || std::isnan(ev.dur)) &&
                (ev.cat == "kernel" || ev.cat == "Kernel"))
              throw ReadError{ev.line, std::isnan(ev.ts) ? "ts" : "dur",
                              std::isnan(ev.ts) ? "a kernel event without a numeric ts"
                                                : "a kernel event without a numeric dur",
                              "give the trace as the profiler wrote it"};
            if (complete && !std::isnan(ev.dur) && ev.dur < 0)
              throw ReadError{ev.line, "dur", fmt::format("a negative duration {}", ev.dur), ""};
            if (complete && !std::isnan(ev.dur) && ev.dur > kMaxTracedKernelUs)
              throw ReadError{ev.line, "dur",
                              fmt::format("a duration of {:g} us, more than a day: not an event a "
                                          "profiler recorded",
                                          ev.dur),
                              "give the trace as the profiler wrote it"};
            const bool gpu = ev.cat == "kernel" || ev.cat == "Kernel" || ev.cat == "gpu_memcpy" ||
                             ev.cat == "gpu_memset";
            if (complete && gpu) {
              const double st = ev.stream >= 0 ? ev.stream : ev.tid;
              auto [it, fresh] =
                  streams.emplace(std::make_pair(ev.pid, st), static_cast<int32_t>(streams.size()));
              TracedKernel k{ev.ts, ev.dur, it->second, -1};
              if (is_nccl_kernel(ev.name)) {
                PendingKernel p{static_cast<int32_t>(r.kernels.size()), ev.external_id,
                                tables.text.id(ev.name), std::nullopt, ev.line};
                if (ev.has_coll) p.info = tables.info_of(ev);
                nccl_kernels.push_back(std::move(p));
              }
              r.kernels.push_back(k);
            } else if (complete && ev.name == "record_param_comms") {
              if (ev.has_coll) {
                if (ev.external_id >= 0)
                  param_comms[static_cast<long long>(ev.external_id)] = tables.info_of(ev);
                rpcs.push_back({ev.tid, ev.ts, ev.dur, tables.info_of(ev)});
              }
              if (ev.rank >= 0) rank_arg = static_cast<int>(ev.rank);
            } else if (complete && ev.name.rfind("nccl:", 0) == 0) {
              nccl_ops.push_back({ev.external_id, ev.tid, ev.ts, ev.dur});
            } else if (complete && ev.name.rfind("ProfilerStep#", 0) == 0) {
              (ev.cat == "gpu_user_annotation" ? gpu_steps : cpu_steps)
                  .push_back({ev.name, ev.ts, ev.ts + ev.dur});
            }
          }
          const int d = j.peek_ns();
          bytes.get();
          if (d == ']') break;
          if (d < 0)
            throw ReadError{bytes.line(), "traceEvents",
                            "the file ends inside the traceEvents array",
                            "the trace is truncated: was the profiler stopped before it finished "
                            "writing?"};
          if (d != ',')
            throw ReadError{
                bytes.line(), "traceEvents",
                fmt::format("expected ',' or ']' between events, found {}", Json::shown(d)), ""};
        }
      } else if (key == "distributedInfo" && j.peek_ns() == '{') {
        // {"backend": "nccl", "rank": 0, "world_size": 16, "pg_config": [{"pg_name": ...}]}
        Scalar s;
        j.object([&](const std::string& k) {
          if (k == "rank" || k == "world_size") {
            j.scalar(s, 2);
            // torch.distributed's rank (0 to world - 1) and world size: whole numbers within a
            // cluster's GPUs (a spec's bound, kMaxSpecGpus). Anything else was not written so.
            const double lo = k == "rank" ? 0 : 1;
            if (s.kind == Scalar::kNumber) {
              if (!(s.number >= lo && s.number < static_cast<double>(kMaxSpecGpus)) ||
                  std::floor(s.number) != s.number)
                throw ReadError{
                    bytes.line(), "distributedInfo." + k,
                    fmt::format("{} {:g} is not a whole number from {:g} to 2^24", k, s.number, lo),
                    "give the trace as torch.profiler wrote it"};
              (k == "rank" ? r.rank : r.world) = static_cast<int>(s.number);
            }
          } else if (k == "pg_config" && j.peek_ns() == '[') {
            bytes.get();
            if (j.peek_ns() == ']') return (void)bytes.get();
            for (;;) {
              TracedGroup g;
              if (j.peek_ns() == '{') {
                j.object([&](const std::string& pk) {
                  j.scalar(s, 4);
                  if (pk == "pg_name")
                    g.name = s.kind == Scalar::kNumber ? fmt::format("{:g}", s.number) : s.text;
                  else if (pk == "pg_desc")
                    g.desc = s.text;
                  else if (pk == "pg_size" && s.kind == Scalar::kNumber)
                    g.size = static_cast<int>(std::clamp(s.number, 0.0, 1e9));
                  else if (pk == "ranks")
                    g.ranks = ranks_of(s);
                });
                if (!g.name.empty()) pg_config[g.name] = g;
              } else {
                j.skip(3);
              }
              const int d = j.peek_ns();
              bytes.get();
              if (d == ']') break;
              if (d != ',')
                throw ReadError{bytes.line(), "distributedInfo.pg_config",
                                fmt::format("expected ',' or ']', found {}", Json::shown(d)), ""};
            }
          } else {
            j.skip(2);
          }
        });
      } else {
        j.skip(1);
      }
    });
    if (j.peek_ns() >= 0)
      throw ReadError{bytes.line(), "", "more after the end of the trace's JSON object", ""};
  } catch (const ReadError& e) {
    return Diagnostic::at(file, e.line, e.column, e.key, e.message, e.hint);
  }
  if (!saw_events)
    return Diagnostic::in_file(file, "traceEvents", "no traceEvents array",
                               "give a Chrome trace written by torch.profiler");
  // Older Kineto wrote whole microseconds ("ts": {}), newer "{}.{:03}" of nanoseconds.
  r.format = ts_integer ? "kineto (whole-microsecond timestamps: older Kineto)"
                        : "kineto (nanosecond timestamps: newer Kineto)";
  if (r.world > 0 && r.rank >= r.world)
    return Diagnostic::in_file(file, "distributedInfo.rank",
                               fmt::format("rank {} of a world of {}: ranks run from 0 to {}",
                                           r.rank, r.world, r.world - 1),
                               "give the trace as torch.profiler wrote it");
  if (r.rank < 0) r.rank = rank_arg;

  // Groups: distributedInfo's, then every collective's own.
  std::map<std::string, int> group_index;
  const auto& T = tables.text;
  auto group_of = [&](const CommInfo& c) {
    std::string name = T[c.pg_name];
    if (name.empty() && c.size > 0)  // PyTorch before 2.2 names no group: its size stands for it
      name = fmt::format("size-{:g}", c.size);
    if (name.empty()) return -1;
    auto it = group_index.find(name);
    if (it != group_index.end()) {
      auto& g = r.groups[static_cast<size_t>(it->second)];
      if (g.ranks.empty()) g.ranks = tables.ranks[c.ranks];
      if (g.desc.empty()) g.desc = T[c.pg_desc];
      if (g.size <= 0 && c.size > 0) g.size = static_cast<int>(std::min(c.size, 1e9));
      return it->second;
    }
    TracedGroup g;
    auto pc = pg_config.find(name);
    if (pc != pg_config.end()) g = pc->second;
    g.name = name;
    if (g.desc.empty()) g.desc = T[c.pg_desc];
    if (g.ranks.empty()) g.ranks = tables.ranks[c.ranks];
    if (g.size <= 0) g.size = c.size > 0 ? static_cast<int>(std::min(c.size, 1e9)) : 0;
    if (g.size <= 0) g.size = static_cast<int>(g.ranks.size());
    group_index[name] = static_cast<int>(r.groups.size());
    r.groups.push_back(std::move(g));
    return group_index[name];
  };

  // Each NCCL kernel's collective: its own args, its op's by External id, the record_param_comms
  // around its nccl:* op, or, failing all, the operation its name says without a size.
  std::sort(rpcs.begin(), rpcs.end(), [](const Rpc& a, const Rpc& b) {
    return std::make_pair(a.tid, a.ts) < std::make_pair(b.tid, b.ts);
  });
  std::unordered_map<long long, const NcclOp*> op_by_ext;
  for (const auto& o : nccl_ops)
    if (o.ext >= 0) op_by_ext[static_cast<long long>(o.ext)] = &o;
  std::set<std::string> missing;
  for (auto& p : nccl_kernels) {
    std::optional<CommInfo> info = p.info;
    // Kineto of 2023 copied the sizes and dtype onto the kernel but not the name or the group:
    // those come from the record_param_comms op with the same External id.
    const bool partial = info && (info->name == 0 || info->pg_name == 0);
    if ((!info || partial) && p.external_id >= 0) {
      auto it = param_comms.find(static_cast<long long>(p.external_id));
      if (it != param_comms.end()) {
        if (!info) {
          info = it->second;
        } else {
          if (info->name == 0) info->name = it->second.name;
          if (info->pg_name == 0) {
            info->pg_name = it->second.pg_name;
            info->pg_desc = it->second.pg_desc;
            info->ranks = it->second.ranks;
          }
        }
      }
    }
    if (!info && p.external_id >= 0) {
      auto it = op_by_ext.find(static_cast<long long>(p.external_id));
      if (it != op_by_ext.end()) {
        // The record_param_comms of the same thread that began last before it, if it spans it.
        const NcclOp& o = *it->second;
        auto at = std::upper_bound(rpcs.begin(), rpcs.end(), std::make_pair(o.tid, o.ts),
                                   [](const std::pair<double, double>& k, const Rpc& x) {
                                     return k < std::make_pair(x.tid, x.ts);
                                   });
        if (at != rpcs.begin()) {
          --at;
          if (at->tid == o.tid && at->ts + at->dur >= o.ts + o.dur) info = at->info;
        }
      }
    }
    TracedCollective c;
    const std::string& kname = T[p.name];
    if (info && info->name == 0) info->name = tables.text.id(kname.substr(0, kname.find('(')));
    if (info) {
      c.name = T[info->name];
      c.op = collective_op(c.name);
      const double el = torch_dtype_bytes(T[info->dtype]);
      if (el == 0 && info->dtype != 0)
        missing.insert(fmt::format("dtype '{}' (line {})", T[info->dtype], info->line));
      // nccl-tests size: the larger buffer (all_gather's output, reduce_scatter's input).
      c.bytes = std::max(info->in, info->out) * el;
      if (!std::isfinite(c.bytes) || c.bytes < 0) c.bytes = 0;
      c.group = group_of(*info);
    } else {
      c.name = kname.substr(0, kname.find('('));
      c.op = collective_op(kname);
      missing.insert(
          "collective metadata of NCCL kernels (record with torch >= 2.1, "
          "record_shapes=True)");
    }
    r.kernels[static_cast<size_t>(p.kernel)].collective =
        static_cast<int32_t>(r.collectives.size());
    r.collectives.push_back(std::move(c));
  }
  for (const auto& m : missing) r.notes.push_back("no " + m);
  for (const auto& [name, g] : pg_config)
    if (!group_index.count(name)) {
      group_index[name] = static_cast<int>(r.groups.size());
      r.groups.push_back(g);
    }
  std::stable_sort(
      r.kernels.begin(), r.kernels.end(),
      [](const TracedKernel& a, const TracedKernel& b) { return a.start_us < b.start_us; });
  r.steps = gpu_steps.empty() ? cpu_steps : gpu_steps;
  std::sort(r.steps.begin(), r.steps.end(),
            [](const TracedStep& a, const TracedStep& b) { return a.start_us < b.start_us; });
  if (r.kernels.empty())
    return Diagnostic::in_file(file, "traceEvents", "the trace has no GPU kernels",
                               "profile with activities=[ProfilerActivity.CPU, "
                               "ProfilerActivity.CUDA]");
  return r;
}

// --- NCCL logs ------------------------------------------------------------------------------

double nccl_datatype_bytes(int t) {
  // ncclDataType_t (src/nccl.h.in, v2.18.6-1: 0..9; v2.29.7-1 adds 10, 11 = fp8 e4m3, e5m2).
  static const double kBytes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return t >= 0 && t < 12 ? kBytes[t] : 0;
}

namespace {

/// "key value" pairs of a message: the value after `key ` up to the next space.
std::optional<std::string_view> after(std::string_view s, std::string_view key) {
  size_t at = 0;
  for (;;) {
    at = s.find(key, at);
    if (at == std::string_view::npos) return std::nullopt;
    const bool start = at == 0 || s[at - 1] == ' ';
    const size_t v = at + key.size();
    if (start && v < s.size() && s[v] == ' ') {
      const size_t e = s.find(' ', v + 1);
      return s.substr(v + 1, e == std::string_view::npos ? std::string_view::npos : e - v - 1);
    }
    at = v;
  }
}

std::optional<long long> integer(std::optional<std::string_view> v, int base = 10) {
  if (!v) return std::nullopt;
  std::string_view t = *v;
  if (base == 16 && t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) t.remove_prefix(2);
  long long x = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), x, base);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return x;
}

struct Comm {
  int rank = -1, nranks = 0, cuda_dev = -1;
  std::string key;         ///< commId, or the split's parent key and color
  std::string parent_ptr;  ///< ncclCommSplit: the parent comm's pointer in this process
  long long color = 0;
  int line = 0;
};

struct Proc {
  std::string host;
  int dev = -1;
  std::map<std::string, Comm> comms;  // comm pointer -> its init
  struct Call {
    std::string op_name, comm, stream;
    long long count = 0, nranks = 0;
    int datatype = 0, line = 0;
  };
  std::vector<Call> calls;
};

}  // namespace

Result<std::vector<TracedRank>> read_nccl_coll_log(std::istream& in, const std::string& file,
                                                   std::size_t max_bytes) {
  Bytes b(in, max_bytes);
  std::map<std::string, Proc> procs;  // "host:pid" -> what its lines say
  std::vector<std::string> order;
  std::string line, version;
  bool any_nccl = false, v229_init = false, v218_init = false;
  std::vector<Diagnostic> errs;
  try {
    for (;;) {
      line.clear();
      int c;
      const int at = b.line();
      while ((c = b.get()) >= 0 && c != '\n') {
        if (line.size() >= kMaxNcclLogLineBytes)
          throw ReadError{at, "",
                          fmt::format("a line longer than {}", human_bytes(kMaxNcclLogLineBytes)),
                          "NCCL writes lines of at most 1,023 bytes: this is not an NCCL log"};
        line += static_cast<char>(c);
      }
      if (c < 0 && line.empty()) break;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::string_view s(line);
      if (auto v = s.find("NCCL version "); v != std::string_view::npos && version.empty()) {
        version = std::string(s.substr(v + 13, s.find(' ', v + 13) - v - 13));
        any_nccl = true;
      }
      const size_t info = s.find(" NCCL INFO ");
      if (info == std::string_view::npos) {
        if (s.find(" NCCL WARN ") != std::string_view::npos) any_nccl = true;
        continue;
      }
      any_nccl = true;
      // Prefix: [timestamp] host:pid:tid [dev]  (src/debug.cc)
      std::string_view prefix = s.substr(0, info);
      const size_t lb = prefix.rfind(" [");
      if (lb == std::string_view::npos) continue;
      std::string_view who = prefix.substr(0, lb);
      if (auto sp = who.rfind(' '); sp != std::string_view::npos) who = who.substr(sp + 1);
      const size_t c1 = who.find(':');
      const size_t c2 = c1 == std::string_view::npos ? c1 : who.find(':', c1 + 1);
      if (c2 == std::string_view::npos) continue;
      const std::string proc_key(who.substr(0, c2));
      auto dev = integer(prefix.substr(lb + 2, prefix.size() - lb - 3));
      const std::string_view msg = s.substr(info + 11);
      auto [pit, fresh] = procs.try_emplace(proc_key);
      Proc& p = pit->second;
      if (fresh) {
        order.push_back(proc_key);
        p.host = std::string(who.substr(0, c1));
      }
      if (dev) p.dev = static_cast<int>(*dev);

      if (msg.find(" - Init COMPLETE") != std::string_view::npos) {
        // v2.18.6-1 init.cc:1375 "comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx
        //   commId 0x%llx - Init COMPLETE"; v2.29.7-1 init.cc:1722/1727 the same after the
        //   function's name, or with "parent %p childCount %d color %d key %d" for a split.
        auto comm = after(msg, "comm");
        auto rank = integer(after(msg, "rank"));
        auto nranks = integer(after(msg, "nranks"));
        auto cuda = integer(after(msg, "cudaDev"));
        if (!comm || !rank || !nranks || *nranks < 1 || *nranks > (1 << 24) || *rank < 0 ||
            *rank >= *nranks)
          throw ReadError{at, "Init COMPLETE",
                          "an Init COMPLETE line without comm, rank and nranks", ""};
        Comm cm;
        cm.rank = static_cast<int>(*rank);
        cm.nranks = static_cast<int>(*nranks);
        cm.cuda_dev = cuda ? static_cast<int>(*cuda) : -1;
        cm.line = at;
        if (auto id = after(msg, "commId")) {
          cm.key = std::string(*id);
        } else if (auto parent = after(msg, "parent")) {
          cm.parent_ptr = std::string(*parent);
          cm.color = integer(after(msg, "color")).value_or(0);
        } else {
          throw ReadError{at, "Init COMPLETE", "an Init COMPLETE line without commId or parent",
                          ""};
        }
        (msg.rfind("comm ", 0) == 0 ? v218_init : v229_init) = true;
        p.comms[std::string(*comm)] = cm;
        continue;
      }
      // v2.18.6-1 enqueue.cc:1584, v2.29.7-1 enqueue.cc:3006: "%s: opCount %lx sendbuff %p
      //   recvbuff %p count %zi datatype %d op %d root %d comm %p [nranks=%d] stream %p"
      const size_t colon = msg.find(": opCount ");
      if (colon == std::string_view::npos) continue;
      Proc::Call call;
      call.op_name = std::string(msg.substr(0, colon));
      auto count = integer(after(msg, "count"));
      auto dt = integer(after(msg, "datatype"));
      auto comm = after(msg, "comm");
      auto stream = after(msg, "stream");
      const size_t nr = msg.find("[nranks=");
      std::optional<long long> nranks;
      if (nr != std::string_view::npos)
        nranks = integer(msg.substr(nr + 8, msg.find(']', nr) - nr - 8));
      if (after(msg, "count") && !count)
        throw ReadError{at, "count",
                        fmt::format("count '{}' is not a number NCCL prints", *after(msg, "count")),
                        "give the log as NCCL wrote it"};
      if (!count || !dt || !comm || !nranks || *count < 0 || *nranks < 1)
        throw ReadError{at, "opCount", "a COLL line without count, datatype, comm and [nranks=N]",
                        "the line is cut short or not one NCCL wrote"};
      const double element =
          nccl_datatype_bytes(static_cast<int>(std::clamp(*dt, -1LL, 1LL << 20)));
      if (element == 0)
        throw ReadError{at, "datatype",
                        fmt::format("datatype {} is none of NCCL's (ncclDataType_t 0 to 11)", *dt),
                        "give the log as NCCL wrote it"};
      if (static_cast<double>(*count) * element > kMaxTracedCollectiveBytes)
        throw ReadError{
            at, "count",
            fmt::format("count {} of {} B elements: more than any GPU holds", *count, element),
            "give the log as NCCL wrote it"};
      call.count = *count;
      call.datatype = static_cast<int>(*dt);
      call.comm = std::string(*comm);
      call.stream = stream ? std::string(*stream) : "";
      call.nranks = *nranks;
      call.line = at;
      if (p.calls.size() >= (1u << 26))
        throw ReadError{at, "", "more than 67M collectives in one process's log", ""};
      p.calls.push_back(std::move(call));
    }
  } catch (const ReadError& e) {
    return Diagnostic::at(file, e.line, e.column, e.key, e.message, e.hint);
  }
  if (!any_nccl)
    return Diagnostic::in_file(file, "",
                               "not a PyTorch profiler trace (it does not start with '{') nor an "
                               "NCCL log (no 'NCCL INFO' line)",
                               "give the profiler's .json, or a log of NCCL_DEBUG=INFO "
                               "NCCL_DEBUG_SUBSYS=INIT,COLL");
  std::vector<TracedRank> out;
  // Each process's world rank: its rank in its largest communicator.
  std::map<std::string, std::pair<int, int>> world_of;  // proc -> (rank, nranks)
  for (const auto& [key, p] : procs) {
    std::pair<int, int> w{-1, 0};
    for (const auto& [ptr, c] : p.comms)
      if (c.nranks > w.second) w = {c.rank, c.nranks};
    world_of[key] = w;
  }
  // Split communicators: keyed by the parent's key and the color.
  for (auto& [key, p] : procs)
    for (auto& [ptr, c] : p.comms)
      if (c.key.empty()) {
        auto par = p.comms.find(c.parent_ptr);
        c.key = fmt::format(
            "split({}, color {})",
            par != p.comms.end() && !par->second.key.empty() ? par->second.key : c.parent_ptr,
            c.color);
      }
  // A communicator's global ranks, when every member's log is here.
  std::map<std::string, std::map<int, int>> members;  // key -> rank in comm -> world rank
  for (const auto& [key, p] : procs)
    for (const auto& [ptr, c] : p.comms)
      if (world_of[key].first >= 0) members[c.key][c.rank] = world_of[key].first;
  for (const auto& key : order) {
    const Proc& p = procs[key];
    if (p.calls.empty() && p.comms.empty()) continue;
    TracedRank r;
    r.file = file;
    r.format = fmt::format("nccl-log{}{}", version.empty() ? "" : " " + version,
                           v229_init   ? " (2.19+ init lines)"
                           : v218_init ? " (2.18 init lines)"
                                       : "");
    r.timed = false;
    r.host = p.host;
    r.cuda_dev = p.dev;
    r.rank = world_of[key].first;
    r.world = world_of[key].second;
    std::map<std::string, int> gi;
    auto group_for = [&](const std::string& ptr, long long nranks) {
      auto c = p.comms.find(ptr);
      const std::string name = c != p.comms.end() ? c->second.key : "comm " + ptr;
      auto it = gi.find(name);
      if (it != gi.end()) return it->second;
      TracedGroup g;
      g.name = name;
      g.size = static_cast<int>(nranks);
      auto m = members.find(name);
      if (m != members.end() && static_cast<long long>(m->second.size()) == nranks)
        for (const auto& [cr, wr] : m->second) g.ranks.push_back(wr);
      gi[name] = static_cast<int>(r.groups.size());
      r.groups.push_back(std::move(g));
      return gi[name];
    };
    for (const auto& [ptr, c] : p.comms) group_for(ptr, c.nranks);
    std::map<std::string, int32_t> stream_id;
    for (const auto& call : p.calls) {
      TracedCollective c;
      c.name = call.op_name;
      c.op = collective_op(call.op_name);
      const double el = nccl_datatype_bytes(call.datatype);  // a known type: checked when read
      // nccl-tests sizes: all_gather's count is per rank (sendcount), reduce_scatter's the
      // result per rank (recvcount), alltoall's per peer: each times the ranks.
      const bool per_rank = c.op && (*c.op == Op::kAllGather || *c.op == Op::kReduceScatter ||
                                     *c.op == Op::kAlltoall);
      c.bytes = static_cast<double>(call.count) * el * (per_rank ? call.nranks : 1);
      c.group = group_for(call.comm, call.nranks);
      c.line = call.line;
      auto [sit, f] = stream_id.emplace(call.stream, static_cast<int32_t>(stream_id.size()));
      r.kernels.push_back({0, 0, sit->second, static_cast<int32_t>(r.collectives.size())});
      r.collectives.push_back(std::move(c));
    }
    out.push_back(std::move(r));
  }
  if (out.empty() || std::all_of(out.begin(), out.end(),
                                 [](const TracedRank& r) { return r.collectives.empty(); }))
    return Diagnostic::in_file(file, "COLL", "no collective calls in the NCCL log",
                               "run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL");
  // Processes without calls (a log of init only) add nothing to replay.
  out.erase(std::remove_if(out.begin(), out.end(),
                           [](const TracedRank& r) { return r.collectives.empty(); }),
            out.end());
  return out;
}

Result<std::vector<TracedRank>> read_trace_files(const std::vector<std::string>& paths,
                                                 const std::string& key) {
  std::vector<TracedRank> out;
  std::vector<Diagnostic> errs;
  for (const auto& path : paths) {
    auto in = open_input_file(path, key, "trace");
    if (!in) {
      errs.insert(errs.end(), in.errors().begin(), in.errors().end());
      continue;
    }
    std::istream& s = **in;
    while (s.peek() == ' ' || s.peek() == '\n' || s.peek() == '\r' || s.peek() == '\t') s.get();
    const int first = s.peek();
    if (first == 0x1f) {
      errs.push_back(
          Diagnostic::in_file(path, key, "a gzip file", "unzip it first: gunzip -k " + path));
      continue;
    }
    if (first == '{') {
      auto r = read_kineto_trace(s, path);
      if (r)
        out.push_back(std::move(*r));
      else
        errs.insert(errs.end(), r.errors().begin(), r.errors().end());
      continue;
    }
    auto r = read_nccl_coll_log(s, path);
    if (r)
      for (auto& x : *r) out.push_back(std::move(x));
    else
      errs.insert(errs.end(), r.errors().begin(), r.errors().end());
  }
  // A rank traced twice (a file given twice, or two files of one rank) would count its step
  // twice as two of the run's ranks.
  std::map<int, const TracedRank*> by_rank;
  for (const auto& t : out) {
    if (t.rank < 0) continue;
    if (auto [it, fresh] = by_rank.emplace(t.rank, &t); !fresh)
      errs.push_back(Diagnostic::in_file(
          t.file, key,
          it->second->file == t.file
              ? fmt::format("rank {} is read twice from this file (given twice?)", t.rank)
              : fmt::format("rank {} is traced in {} too", t.rank, it->second->file),
          "give each rank's trace once"));
  }
  if (!errs.empty()) return errs;
  return out;
}

Result<std::vector<std::vector<TracedRank>>> read_job_traces(const Spec& spec) {
  std::vector<std::vector<TracedRank>> out(spec.jobs.size());
  std::vector<Diagnostic> errs;
  for (size_t j = 0; j < spec.jobs.size(); ++j) {
    const JobSpec& js = spec.jobs[j];
    for (size_t k = 0; k < js.trace_paths.size(); ++k) {
      const std::string& path = js.trace_paths[k];
      const std::string key =
          js.trace_paths.size() > 1 ? fmt::format("{}.trace[{}]", js.key, k) : js.key + ".trace";
      // Opening first, so that a missing file points at the spec's line.
      if (auto in = open_input_file(path, key, "trace"); !in) {
        const auto& why = in.errors().front();
        errs.push_back(
            spec.at(key, fmt::format("job '{}': trace '{}': {}", js.name, path, why.message),
                    why.hint.empty() ? "paths are relative to the spec's folder" : why.hint));
        continue;
      }
      auto r = read_trace_files({path}, key);
      if (!r) {
        // The trace's own place first (its file, line and column); the hint says which job and
        // which line of the spec named it, so that a spec of several traced jobs points at one.
        const Diagnostic where = spec.at(key, "");
        const std::string named = where.file.empty() || where.line <= 0
                                      ? fmt::format("job '{}' names this trace at {}", js.name, key)
                                      : fmt::format("job '{}' names this trace at {}:{}, {}",
                                                    js.name, where.file, where.line, key);
        for (Diagnostic e : r.errors()) {
          e.hint = e.hint.empty() ? named : named + "; " + e.hint;
          errs.push_back(std::move(e));
        }
        continue;
      }
      for (auto& x : *r) out[j].push_back(std::move(x));
    }
  }
  if (!errs.empty()) return errs;
  return out;
}

}  // namespace gf
