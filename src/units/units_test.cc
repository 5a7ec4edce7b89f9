#include "units/units.h"

#include <gtest/gtest.h>

namespace gf::units {

TEST(Units, SizesDecimalAndBinary) {
  EXPECT_DOUBLE_EQ(*parse_bytes("512B"), 512);
  EXPECT_DOUBLE_EQ(*parse_bytes("4KB"), 4e3);
  EXPECT_DOUBLE_EQ(*parse_bytes("4KiB"), 4096);
  EXPECT_DOUBLE_EQ(*parse_bytes("1.5GB"), 1.5e9);
  EXPECT_DOUBLE_EQ(*parse_bytes("2 GiB"), 2.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(*parse_bytes("8"), 8);
  // nccl-tests -b/-e: K M G are binary.
  EXPECT_DOUBLE_EQ(*parse_bytes("8G", SizeStyle::kNccl), 8.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(*parse_bytes("1M", SizeStyle::kNccl), 1 << 20);
  EXPECT_DOUBLE_EQ(*parse_bytes("1M", SizeStyle::kSpec), 1e6);
  // ... and k m g as well (parsesize); a spec's sizes keep the units' own case.
  EXPECT_DOUBLE_EQ(*parse_bytes("1g", SizeStyle::kNccl), 1 << 30);
  EXPECT_DOUBLE_EQ(*parse_bytes("4k", SizeStyle::kNccl), 4096);
  EXPECT_FALSE(parse_bytes("1g", SizeStyle::kSpec).ok());
  // nccl-tests reads the letter and ignores the B after it: its 1GB is 1 GiB (it had been 1e9
  // here, and -e 1GB lost the 1 GiB row check judges); a spec's GB is decimal.
  EXPECT_DOUBLE_EQ(*parse_bytes("1GB", SizeStyle::kNccl), 1 << 30);
  EXPECT_DOUBLE_EQ(*parse_bytes("64KB", SizeStyle::kNccl), 64 << 10);
  EXPECT_DOUBLE_EQ(*parse_bytes("1GB", SizeStyle::kSpec), 1e9);
  // A one-letter unit gets the list, not a guess.
  EXPECT_NE(parse_bytes("1P", SizeStyle::kNccl).errors().front().hint.find("units: B, KB"),
            std::string::npos);
  EXPECT_FALSE(parse_bytes("-1GB").ok());
  EXPECT_FALSE(parse_bytes("GB").ok());
  EXPECT_FALSE(parse_bytes("1XB").ok());
}

TEST(Units, BitRatesAndByteRates) {
  EXPECT_DOUBLE_EQ(*parse_bitrate("400G"), 400e9);
  EXPECT_DOUBLE_EQ(*parse_bitrate("400Gbps"), 400e9);
  EXPECT_DOUBLE_EQ(*parse_bitrate("400Gb/s"), 400e9);
  EXPECT_DOUBLE_EQ(*parse_bitrate("400 Gbit/s"), 400e9);
  EXPECT_DOUBLE_EQ(*parse_bitrate("50GB/s"), 400e9);  // bytes
  EXPECT_FALSE(parse_bitrate("400").ok());            // unit required
  EXPECT_FALSE(parse_bitrate("0G").ok());
  auto r = parse_bitrate("400Gbsp");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors()[0].hint.find("Gbps"), std::string::npos);
}

TEST(Units, Times) {
  EXPECT_DOUBLE_EQ(*parse_seconds("10s"), 10);
  EXPECT_DOUBLE_EQ(*parse_seconds("250ms"), 0.25);
  EXPECT_DOUBLE_EQ(*parse_seconds("3us"), 3e-6);
  EXPECT_DOUBLE_EQ(*parse_seconds("5ns"), 5e-9);
  EXPECT_DOUBLE_EQ(*parse_seconds("2min"), 120);
  EXPECT_DOUBLE_EQ(*parse_seconds("1.5h"), 5400);
  EXPECT_DOUBLE_EQ(*parse_seconds("3d"), 3 * 86400);
  EXPECT_FALSE(parse_seconds("10").ok());
  EXPECT_NE(parse_seconds("10").errors()[0].message.find("no unit"), std::string::npos);
}

TEST(Units, CountsRatiosMoney) {
  EXPECT_DOUBLE_EQ(*parse_count("70B"), 7e10);
  EXPECT_DOUBLE_EQ(*parse_count("15T"), 15e12);
  EXPECT_DOUBLE_EQ(*parse_count("100k"), 1e5);
  EXPECT_DOUBLE_EQ(*parse_count("1e9"), 1e9);
  EXPECT_DOUBLE_EQ(*parse_count("1024"), 1024);
  EXPECT_DOUBLE_EQ(*parse_ratio("2:1"), 2);
  EXPECT_DOUBLE_EQ(*parse_ratio("3:2"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_ratio("1.5"), 1.5);
  EXPECT_FALSE(parse_ratio("2:0").ok());
  EXPECT_FALSE(parse_ratio("x:1").ok());
  // "3-1" names the form a ratio takes, not an unknown unit among none ("units: ").
  const auto dash = parse_ratio("3-1");
  ASSERT_FALSE(dash.ok());
  EXPECT_EQ(dash.errors().front().message, "'3-1' is not a ratio such as 2, 1.5 or 2:1");
  EXPECT_EQ(dash.errors().front().hint.find("units:"), std::string::npos);
  EXPECT_DOUBLE_EQ(*parse_usd("$50M"), 50e6);
  EXPECT_DOUBLE_EQ(*parse_usd("250k"), 250e3);
  EXPECT_FALSE(parse_count("").ok());
  EXPECT_FALSE(parse_count("nan").ok());
  EXPECT_FALSE(parse_count("inf").ok());
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_bytes(2.8e11), "280 GB");
  EXPECT_EQ(format_bytes(3.5e11), "350 GB");
  EXPECT_EQ(format_bitrate(400e9), "400 Gbps");
  EXPECT_EQ(format_seconds(5.6), "5.6 s");
  EXPECT_EQ(format_seconds(35e-6), "35 us");
  // Days up to two years, then years (tokens: 1e18 had printed 19707232 d to train).
  EXPECT_EQ(format_seconds(5.4 * 86400), "5.4 d");
  // Before and after in one unit, the larger one's (what-if had printed "2.01 d -> 47.3 h").
  EXPECT_EQ(format_seconds_pair(2.01 * 86400, 47.3 * 3600), "2.01 -> 1.97 d");
  EXPECT_EQ(format_seconds_pair(90, 150), "1.5 -> 2.5 min");
  EXPECT_EQ(format_seconds(700 * 86400), "700 d");
  EXPECT_EQ(format_seconds(19707232.0 * 86400), "53955 years");
  EXPECT_EQ(format_usd(12.3e6), "$12.3M");
  EXPECT_EQ(format_count(7e10), "70B");
  EXPECT_EQ(format_power(1.4e6), "1.4 MW");
}

}  // namespace gf::units
