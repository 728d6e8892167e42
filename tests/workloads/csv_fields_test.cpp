#include "workloads/csv_fields.hpp"

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("decimal seconds become exact integer nanoseconds", "[workloads][fields]") {
  CHECK(parse_seconds_ns("0.0") == 0);
  CHECK(parse_seconds_ns("4.314579") == 4'314'579'000);
  CHECK(parse_seconds_ns("3501.721937") == 3'501'721'937'000);
  CHECK(parse_seconds_ns("12") == 12'000'000'000);
  CHECK(parse_seconds_ns("+0.5") == 500'000'000);
  CHECK(parse_seconds_ns(".25") == 250'000'000);
  CHECK(parse_seconds_ns("1.5e-3") == 1'500'000);
  CHECK(parse_seconds_ns("2E2") == 200'000'000'000);
  CHECK(parse_seconds_ns("0.000000001") == 1);
  // Digits past the nanosecond round half up: float noise in converted traces disappears.
  CHECK(parse_seconds_ns("5.8926549999999995") == 5'892'655'000);
  CHECK(parse_seconds_ns("0.0000000004") == 0);
  CHECK(parse_seconds_ns("0.0000000005") == 1);
}

TEST_CASE("non-finite, negative and malformed seconds are rejected", "[workloads][fields]") {
  for (const char* bad : {"", "nan", "NaN", "inf", "-inf", "-1", "-0.5", "1.2.3", "1e", "abc",
                          "1,5", "0x10", "1e30", " "}) {
    INFO(bad);
    CHECK_FALSE(parse_seconds_ns(bad).has_value());
  }
}

TEST_CASE("Azure timestamps parse exactly to nanoseconds since the epoch", "[workloads][fields]") {
  // 2023-11-16 18:17:03 UTC is 1700158623 s after the epoch (calendar.timegm).
  CHECK(parse_datetime_ns("2023-11-16 18:17:03.9799600") == 1'700'158'623'979'960'000);
  CHECK(parse_datetime_ns("1970-01-01 00:00:00") == 0);
  CHECK(parse_datetime_ns("1970-01-01T00:00:01.000000001") == 1'000'000'001);
  CHECK(parse_datetime_ns("2024-02-29 00:00:00.5") == 1'709'164'800'500'000'000);
  // Differences are exact: the first two rows of the Azure conversation trace.
  const auto a = parse_datetime_ns("2023-11-16 18:15:46.6805900");
  const auto b = parse_datetime_ns("2023-11-16 18:15:50.9951690");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*b - *a == 4'314'579'000);
  // Across midnight and a month end.
  CHECK(*parse_datetime_ns("2023-12-01 00:00:00.0000001") -
            *parse_datetime_ns("2023-11-30 23:59:59.9999999") ==
        200);
}

TEST_CASE("malformed timestamps are rejected", "[workloads][fields]") {
  for (const char* bad :
       {"", "nan", "2023-11-16", "2023-11-16 18:17", "2023-13-01 00:00:00", "2023-02-29 00:00:00",
        "2023-11-16 24:00:00", "2023-11-16 18:17:03.", "2023-11-16 18:17:03.1234567891",
        "2023-11-16 18:17:03,5", "2023/11/16 18:17:03"}) {
    INFO(bad);
    CHECK_FALSE(parse_datetime_ns(bad).has_value());
  }
}

TEST_CASE("token counts must be whole, non-negative and fit in int32", "[workloads][fields]") {
  CHECK(parse_token_count("374") == 374);
  CHECK(parse_token_count("0") == 0);
  CHECK(parse_token_count("374.0") == 374);
  CHECK(parse_token_count("2147483647") == 2147483647);
  for (const char* bad : {"", "-1", "3.5", "abc", "nan", "2147483648", "1e3", "12a"}) {
    INFO(bad);
    CHECK_FALSE(parse_token_count(bad).has_value());
  }
}

TEST_CASE("error flags accept 0, 1, true and false", "[workloads][fields]") {
  CHECK(parse_flag("0") == false);
  CHECK(parse_flag("1") == true);
  CHECK(parse_flag("True") == true);
  CHECK(parse_flag("FALSE") == false);
  CHECK_FALSE(parse_flag("2").has_value());
  CHECK_FALSE(parse_flag("").has_value());
}
