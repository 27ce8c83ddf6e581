// The loadgen's live progress line (loadgen/progress_line.h), from figures set here: no
// terminal, no clock.
#include "loadgen/progress_line.h"

#include <gtest/gtest.h>

namespace anteroom::loadgen {
namespace {

ProgressFigures surge() {
  ProgressFigures f;
  f.phase = "surge";
  f.seconds = 12.04;
  f.joined = 500;
  f.admitted = 200;
  f.open = 300;
  f.waiting = 100;
  f.active = 50;
  f.finished = 150;
  f.visitors = 1000;
  f.requests_per_second = 1234.4;
  f.errors = 3;
  return f;
}

TEST(ProgressLine, TextCarriesEveryFigure) {
  EXPECT_EQ(progress_text(surge()),
            "[surge]   12.0s joined 500 admitted 200 open 300 (waiting 100 active 50) done "
            "150/1000 1234 req/s errors 3");
}

TEST(ProgressLine, NegativeCountsShowAsZero) {
  ProgressFigures f = surge();
  f.open = -2;  // a close counted before its open, across processes
  f.waiting = -1;
  f.requests_per_second = -5;
  const std::string text = progress_text(f);
  EXPECT_NE(text.find("open 0 (waiting 0 "), std::string::npos) << text;
  EXPECT_NE(text.find(" 0 req/s"), std::string::npos) << text;
}

TEST(ProgressLine, RequestsPerSecond) {
  EXPECT_DOUBLE_EQ(per_second(1000, 3000, 2.0), 1000.0);
  EXPECT_DOUBLE_EQ(per_second(1000, 1000, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(per_second(1000, 2000, 0.0), 0.0);  // no time: no rate, no division by 0
  EXPECT_DOUBLE_EQ(per_second(2000, 1000, 1.0), 0.0);
}

TEST(ProgressLine, RewritesInPlaceAndPadsOverALongerLine) {
  InPlaceLine line;
  EXPECT_EQ(line.finish(), "");  // nothing shown: nothing to end
  EXPECT_EQ(line.render("abcdef"), "\rabcdef");
  EXPECT_EQ(line.render("abc"), "\rabc   ");  // the three characters left over are blanked
  EXPECT_EQ(line.render("abcd"), "\rabcd");
  EXPECT_EQ(line.finish(), "\n");
}

}  // namespace
}  // namespace anteroom::loadgen
