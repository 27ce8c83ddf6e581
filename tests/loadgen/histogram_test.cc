#include "loadgen/histogram.h"

#include <gtest/gtest.h>

#include <cmath>

namespace anteroom::loadgen {
namespace {

TEST(Histogram, EmptyHasNoPercentiles) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(50), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
}

TEST(Histogram, SmallValuesAreExact) {
  Histogram h;
  for (uint64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.percentile(50), 50u);
  EXPECT_EQ(h.percentile(99), 99u);
  EXPECT_EQ(h.percentile(100), 100u);
  EXPECT_EQ(h.percentile(0), 1u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
}

TEST(Histogram, LargeValuesWithinBucketPrecision) {
  Histogram h;
  for (uint64_t v = 1; v <= 1000000; ++v) h.record(v);
  for (double p : {10.0, 50.0, 90.0, 99.0, 99.9}) {
    double want = p / 100.0 * 1e6;
    double got = static_cast<double>(h.percentile(p));
    EXPECT_NEAR(got, want, want * 0.016) << "p" << p;
  }
  EXPECT_EQ(h.max(), 1000000u);
  EXPECT_EQ(h.min(), 1u);
}

TEST(Histogram, ATailIsNotHiddenByTheBulk) {
  Histogram h;
  h.record(100, 9990);
  h.record(5'000'000, 10);  // 0.1% at 5 s
  EXPECT_EQ(h.percentile(99.8), 100u);
  EXPECT_NEAR(static_cast<double>(h.percentile(99.95)), 5e6, 5e6 * 0.016);
}

TEST(Histogram, BucketsCoverEveryValueOnce) {
  for (uint32_t i = 0; i + 1 < Histogram::kBuckets; ++i) {
    ASSERT_EQ(Histogram::bucket_high(i) + 1, Histogram::bucket_low(i + 1)) << i;
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_low(i)), i);
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_high(i)), i);
  }
  EXPECT_EQ(Histogram::bucket_of(UINT64_MAX), Histogram::kBuckets - 1);
}

TEST(Histogram, MergeAddsAndRoundTripsThroughBuckets) {
  Histogram a;
  Histogram b;
  for (uint64_t v = 0; v < 1000; ++v) a.record(v * 10);
  for (uint64_t v = 0; v < 1000; ++v) b.record(v * 10 + 20000);
  a.merge(b);
  EXPECT_EQ(a.count(), 2000u);
  EXPECT_EQ(a.max(), 29990u);
  Histogram c;
  for (auto [i, n] : a.nonzero()) c.add_bucket(i, n);
  c.set_exact(a.min(), a.max(), a.sum());
  EXPECT_EQ(c.count(), a.count());
  EXPECT_EQ(c.percentile(50), a.percentile(50));
  EXPECT_EQ(c.percentile(99.9), a.percentile(99.9));
  EXPECT_DOUBLE_EQ(c.mean(), a.mean());
}

}  // namespace
}  // namespace anteroom::loadgen
