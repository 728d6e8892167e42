#include "sim/util/csv_reader.hpp"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/config/input_error.hpp"

using servesim::CsvReader;
using servesim::InputError;

namespace {

std::vector<std::vector<std::string>> all_rows(CsvReader csv, std::vector<std::int64_t>* lines) {
  std::vector<std::vector<std::string>> rows;
  while (csv.next_row()) {
    auto& row = rows.emplace_back();
    for (std::size_t i = 0; i < csv.size(); ++i) row.emplace_back(csv.field(i));
    if (lines) lines->push_back(csv.line());
  }
  return rows;
}

}  // namespace

TEST_CASE("plain fields are trimmed and blank lines skipped", "[csv]") {
  std::vector<std::int64_t> lines;
  const auto rows = all_rows(CsvReader::from_text("\xEF\xBB\xBF"
                                                  "a, b ,c\r\n1,2 , 3\r\n\n  \n4,5,6",
                                                  "t.csv"),
                             &lines);
  REQUIRE(rows == std::vector<std::vector<std::string>>{{"1", "2", "3"}, {"4", "5", "6"}});
  CHECK(lines == std::vector<std::int64_t>{2, 5});
  CHECK(CsvReader::from_text("a, b ,c\n", "t.csv").header() ==
        std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("quoted fields keep commas, doubled quotes, inner spaces and line breaks", "[csv]") {
  std::vector<std::int64_t> lines;
  const auto rows = all_rows(CsvReader::from_text("name,text,n\n"
                                                  " \"x, y\" ,\"say \"\"hi\"\" \",1\n"
                                                  "z,\"two\r\nlines\",2\n"
                                                  "w,\"\",3\n",
                                                  "q.csv"),
                             &lines);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == std::vector<std::string>{"x, y", "say \"hi\" ", "1"});
  CHECK(rows[1] == std::vector<std::string>{"z", "two\nlines", "2"});
  CHECK(rows[2] == std::vector<std::string>{"w", "", "3"});
  // A record's line is the one it starts on, whatever its quoted line breaks.
  CHECK(lines == std::vector<std::int64_t>{2, 3, 5});
}

TEST_CASE("a malformed CSV names the file, the line and what was expected", "[csv]") {
  using Catch::Contains;
  CHECK_THROWS_WITH(CsvReader::from_text("", "e.csv"), Contains("e.csv:1: empty file"));
  CHECK_THROWS_WITH(CsvReader::from_text("a,b,a\n", "d.csv"),
                    Contains("d.csv:1: column 'a' appears twice"));
  CHECK_THROWS_WITH(all_rows(CsvReader::from_text("a,b\n1,2\n3\n", "f.csv"), nullptr),
                    Contains("f.csv:3: 1 fields (expected 2 as in the header)"));
  CHECK_THROWS_WITH(all_rows(CsvReader::from_text("a,b\n1,\"open\n2,3\n", "o.csv"), nullptr),
                    Contains("o.csv:2: a quoted field is not closed"));
  CHECK_THROWS_WITH(CsvReader::from_text("a\n", "m.csv").column("b", "a, b"),
                    Contains("m.csv:1: missing column 'b' (expected columns: a, b)"));
  CHECK_THROWS_AS(CsvReader("/nonexistent/x.csv"), InputError);
}
