#include "common/text.h"

#include <gtest/gtest.h>

namespace gf {

TEST(Text, Utf8LengthCountsCharactersOfWellFormedText) {
  EXPECT_EQ(utf8_length("GPU-é-☃-😀"), 9u);
  EXPECT_FALSE(utf8_length("\xff"));
  EXPECT_FALSE(utf8_length("\xc3"));              // cut short
  EXPECT_FALSE(utf8_length("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(utf8_length("\xed\xa0\x80"));      // a UTF-16 surrogate
  EXPECT_FALSE(utf8_length("\xf4\x90\x80\x80"));  // past U+10FFFF
}

TEST(Text, Utf8OrReplacementReplacesEachBadByte) {
  EXPECT_EQ(utf8_or_replacement("mlx5_0 é"), "mlx5_0 é");
  EXPECT_EQ(utf8_or_replacement(""), "");
  EXPECT_EQ(utf8_or_replacement("a\xff"
                                "b"),
            "a\uFFFD"
            "b");
  EXPECT_EQ(utf8_or_replacement("\xc3"), "\uFFFD");
  EXPECT_EQ(utf8_or_replacement("\xc0\xaf"), "\uFFFD\uFFFD");
  EXPECT_EQ(utf8_or_replacement("x\xe2\x98"), "x\uFFFD\uFFFD");
  EXPECT_TRUE(utf8_length(utf8_or_replacement("\xf4\x90\x80\x80\xed\xa0\x80\xfe")));
}

// A list's pieces keep their empty ones, so that "frr," is told from "frr"; a whole number is
// digits alone (no sign, no unit, not empty).
TEST(Text, SplitKeepsEmptyPiecesAndDigitsAreDigits) {
  EXPECT_EQ(split("frr,eos", ','), (std::vector<std::string>{"frr", "eos"}));
  EXPECT_EQ(split("frr,", ','), (std::vector<std::string>{"frr", ""}));
  EXPECT_EQ(split(",frr,,eos", ','), (std::vector<std::string>{"", "frr", "", "eos"}));
  EXPECT_EQ(split("", ','), (std::vector<std::string>{""}));
  EXPECT_TRUE(all_digits("0"));
  EXPECT_TRUE(all_digits("1024"));
  for (const char* not_a_count : {"", "1K", "-3", "3x", " 4", "1.5"})
    EXPECT_FALSE(all_digits(not_a_count)) << not_a_count;
}

}  // namespace gf
