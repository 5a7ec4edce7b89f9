#include "common/file.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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
  // A FIFO without a writer is empty, not a wait without end.
  const fs::path fifo = fs::temp_directory_path() / fmt::format("gf-fifo-{}", getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto empty = read_file_bounded(fifo.string(), 16);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
  fs::remove(fifo);
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
