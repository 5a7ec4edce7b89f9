// Reading small CSV files (calibration data): quoted fields, a header row, lookup by column.
#pragma once

#include <string>
#include <vector>

namespace gf {

/// Splits one CSV line; double quotes group a field that holds commas.
std::vector<std::string> split_csv(const std::string& line);

/// A CSV text read whole: its header and its rows with their line numbers.
class CsvTable {
 public:
  explicit CsvTable(const std::string& text);
  const std::vector<std::string>& header() const { return header_; }
  bool has(const std::string& column) const;
  size_t rows() const { return rows_.size(); }
  int line(size_t row) const { return lines_[row]; }
  /// The fields `row` has (more than the header's when the row is malformed).
  size_t fields(size_t row) const { return rows_[row].size(); }
  /// The field of `column` in `row`, or "" when the row is short or the column unknown.
  std::string at(size_t row, const std::string& column) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<int> lines_;
};

}  // namespace gf
