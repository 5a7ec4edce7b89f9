#include "common/file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/text.h"

namespace gf {
namespace fs = std::filesystem;

TEST(ReadFileBounded, ReadsSmallFilesAndRefusesLargeOnesBeforeReading) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gf-file-test-{}", getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "small.txt") << "hello\n";
  auto small = read_file_bounded((dir / "small.txt").string(), 16);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(*small, "hello\n");
  // A sparse 1 GiB file is refused by its size: nothing is read.
  { std::ofstream(dir / "big.txt"); }
  fs::resize_file(dir / "big.txt", 1ull << 30);
  auto big = read_file_bounded((dir / "big.txt").string(), 4 * kMiB, "--flag", "spec file");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.errors()[0].key, "--flag");
  EXPECT_EQ(big.errors()[0].message, "spec file is 1 GiB; at most 4 MiB is read");
  auto folder = read_file_bounded(dir.string(), 16);
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.errors()[0].message, "is a folder, not a file");
  auto missing = read_file_bounded((dir / "none").string(), 16);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.errors()[0].message.find("No such file"), std::string::npos);
  fs::remove_all(dir);
}

TEST(ReadFileBounded, EndlessDevicesAndPipesStopAtTheLimit) {
  auto zero = read_file_bounded("/dev/zero", 1 * kMiB);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.errors()[0].message.find("goes on past the limit"), std::string::npos);
  // A FIFO without a writer is refused at once, not a wait without end nor an empty file.
  const fs::path fifo = fs::temp_directory_path() / fmt::format("gf-fifo-{}", getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto empty = read_file_bounded(fifo.string(), 16, "", "spec file");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.errors()[0].message, "the spec file is a FIFO that nothing was written into");
  // One whose writer holds it open and writes nothing is given up after the idle limit; one
  // that is written is read.
  auto writer = [&](const std::string& text, int hold_ms) {
    return std::thread([&fifo, text, hold_ms] {
      const int w = ::open(fifo.c_str(), O_WRONLY);
      if (w < 0) return;
      if (!text.empty()) {
        EXPECT_EQ(::write(w, text.data(), text.size()), ssize_t(text.size()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
      ::close(w);
    });
  };
  // A writer's open waits for a reader, and a read before it is there finds no writer: read
  // again until the writer is in.
  auto read_with_writer = [&](const std::string& text, int hold_ms) {
    std::thread t = writer(text, hold_ms);
    Result<std::string> r = Diagnostic::in_file("", "", "");
    for (int i = 0; i < 100; ++i) {
      r = read_file_bounded(fifo.string(), 16, "", "file", 1);
      if (r.ok() || r.errors()[0].message.find("nothing was written") == std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    t.join();
    return r;
  };
  auto silent = read_with_writer("", 3000);
  ASSERT_FALSE(silent.ok());
  EXPECT_NE(silent.errors()[0].message.find("brought no data for 1 s"), std::string::npos)
      << silent.errors()[0].message;
  auto written = read_with_writer("hello\n", 0);
  ASSERT_TRUE(written.ok()) << written.errors()[0].message;
  EXPECT_EQ(*written, "hello\n");
  // A streamed input (a trace) must be a file: a FIFO is refused, never opened and waited on.
  auto streamed = open_input_file(fifo.string(), "", "trace");
  ASSERT_FALSE(streamed.ok());
  EXPECT_NE(streamed.errors()[0].message.find("not a regular file"), std::string::npos);
  fs::remove(fifo);
}

// An output never replaces its own command's input: a file read in this run is refused as an
// output target, under its own name or another (a link).
TEST(ReadFileBounded, InputsOfThisRunAreKnownByTheirFile) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gf-input-test-{}", getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "spec.yaml") << "name: x\n";
  std::ofstream(dir / "other.yaml") << "name: y\n";
  fs::create_symlink(dir / "spec.yaml", dir / "link.yaml");
  EXPECT_FALSE(is_input_of_this_run((dir / "spec.yaml").string()));
  ASSERT_TRUE(read_file_bounded((dir / "spec.yaml").string(), 16).ok());
  EXPECT_TRUE(is_input_of_this_run((dir / "spec.yaml").string()));
  EXPECT_TRUE(is_input_of_this_run((dir / "link.yaml").string()));
  EXPECT_FALSE(is_input_of_this_run((dir / "other.yaml").string()));
  EXPECT_FALSE(is_input_of_this_run((dir / "none.yaml").string()));
  fs::remove_all(dir);
}

TEST(Text, Utf8LengthAndDisplayNames) {
  EXPECT_EQ(utf8_length("abc"), 3u);
  EXPECT_EQ(utf8_length("東京 α"), 4u);
  EXPECT_EQ(utf8_length("\xff"), std::nullopt);
  EXPECT_EQ(utf8_length("\xe6\x9d"), std::nullopt);      // cut short
  EXPECT_EQ(utf8_length("\xc0\xaf"), std::nullopt);      // overlong '/'
  EXPECT_EQ(utf8_length("\xed\xa0\x80"), std::nullopt);  // a UTF-16 surrogate
  EXPECT_EQ(display_name_problem("Cluster α", 128), "");
  EXPECT_NE(display_name_problem("a\nb", 128).find("control character"), std::string::npos);
  EXPECT_EQ(display_name_problem(std::string(129, 'x'), 128),
            "is 129 characters long; at most 128");
}

}  // namespace gf
