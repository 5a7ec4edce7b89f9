#include "common/csv.h"

#include <algorithm>
#include <sstream>

namespace gf {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

CsvTable::CsvTable(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (header_.empty()) {
      header_ = split_csv(line);
      continue;
    }
    rows_.push_back(split_csv(line));
    lines_.push_back(n);
  }
}

bool CsvTable::has(const std::string& column) const {
  return std::find(header_.begin(), header_.end(), column) != header_.end();
}

std::string CsvTable::at(size_t row, const std::string& column) const {
  for (size_t i = 0; i < header_.size() && i < rows_[row].size(); ++i)
    if (header_[i] == column) return rows_[row][i];
  return "";
}

}  // namespace gf
