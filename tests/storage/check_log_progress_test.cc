// `anteroom check-log`'s progress line (storage/check_log_progress.h), from figures set
// here: no terminal, no clock.
#include "storage/check_log_progress.h"

#include <gtest/gtest.h>

namespace anteroom {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

TEST(CheckLogProgress, ReadingSaysBytesOfTheTotalAndThePercent) {
  EXPECT_EQ(log_progress_text(LogPass::kReading, 512 * kMiB, 2048 * kMiB, 0),
            "reading 512.0 of 2048.0 MiB (25%)");
}

TEST(CheckLogProgress, CheckingAddsTheRecords) {
  EXPECT_EQ(log_progress_text(LogPass::kChecking, 400 * kMiB, 2048 * kMiB, 1234567),
            "checking 400.0 of 2048.0 MiB (19%), 1234567 records");
}

TEST(CheckLogProgress, PercentRoundsDownAndStopsAtAHundred) {
  EXPECT_EQ(log_progress_text(LogPass::kReading, 999, 1000, 0), "reading 0.0 of 0.0 MiB (99%)");
  EXPECT_EQ(log_progress_text(LogPass::kReading, 1000, 1000, 0), "reading 0.0 of 0.0 MiB (100%)");
  EXPECT_EQ(log_progress_text(LogPass::kReading, 0, 0, 0), "reading 0.0 of 0.0 MiB (100%)");
}

TEST(CheckLogProgress, LineRewritesInPlace) {
  LogProgressLine line;
  EXPECT_EQ(line.end(), "");
  EXPECT_EQ(line.render("checking 10%"), "\rchecking 10%");
  EXPECT_EQ(line.render("done"), "\rdone        ");
  EXPECT_EQ(line.end(), "\n");
}

}  // namespace
}  // namespace anteroom
