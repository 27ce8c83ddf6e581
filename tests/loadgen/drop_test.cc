// drop's own checks, apart from any server: the draw's verification (on docs/fairness.md's
// worked example), order violations, the wait by arrival fifth, and its settings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <vector>

#include "loadgen/admission_order.h"
#include "loadgen/config.h"
#include "loadgen/draw_check.h"
#include "loadgen/visit.h"

namespace anteroom::loadgen {
namespace {

// docs/fairness.md: the seed 1, 2, ..., 32 and three refs, whose set commitment is kRefs.
constexpr const char* kRefs = "5dfef5d3e8a87df7aa166859c3cad06036ec4f8206ca2a69d5124b18294d674c";
Draw worked_example() {
  Draw d;
  d.seed = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20";
  d.seed_sha256 = "ae216c2ef5247a3782c135efa279a3e4cdc61094270f5d2be58c6204b7a612c9";
  d.order = {"1fd431db6127df13", "bd113838e0b4ef74", "3e3f8d483e1a6bd8"};
  d.refs_sha256 = kRefs;
  return d;
}

TEST(DrawCheck, TheWorkedExampleOfTheDocsVerifies) {
  const Draw d = worked_example();
  std::string seed;
  ASSERT_TRUE(from_hex(d.seed, &seed));
  EXPECT_EQ(sha256_hex(seed), d.seed_sha256);
  EXPECT_EQ(hmac_sha256_hex(seed, "1fd431db6127df13").substr(0, 16), "35468a837e40668d");
  EXPECT_EQ(hmac_sha256_hex(seed, "bd113838e0b4ef74").substr(0, 16), "c2aff63dc41ed26d");
  EXPECT_EQ(hmac_sha256_hex(seed, "3e3f8d483e1a6bd8").substr(0, 16), "c2d41bfea43bee5c");
  EXPECT_EQ(verify_draw(d, d.seed_sha256), "");
  EXPECT_EQ(verify_draw(d, d.seed_sha256, kRefs), "");
}

TEST(DrawCheck, AnyChangeFails) {
  const Draw good = worked_example();
  Draw d = good;
  std::swap(d.order[1], d.order[2]);  // someone moved
  EXPECT_NE(verify_draw(d, good.seed_sha256).find("place 2"), std::string::npos);
  d = good;
  d.seed[63] = '1';  // another seed than the one committed to
  EXPECT_NE(verify_draw(d, good.seed_sha256).find("commitment"), std::string::npos);
  d = good;
  EXPECT_NE(verify_draw(d, std::string(64, '0')), "");  // another commitment
  d.seed = "0102";
  EXPECT_NE(verify_draw(d, good.seed_sha256).find("32 bytes"), std::string::npos);
  d = good;
  d.order[0] = "1FD431DB6127DF13";  // refs are lowercase
  EXPECT_NE(verify_draw(d, good.seed_sha256).find("refs_sha256"), std::string::npos);
  // A ref added after the start (in HMAC order, with a refs_sha256 of its own to match): the
  // set committed at the start says it was not there.
  d = good;
  d.order.push_back("0000000000000001");
  std::vector<std::string> sorted = d.order;
  std::sort(sorted.begin(), sorted.end());
  std::string text;
  for (const auto& r : sorted) text += r + "\n";
  d.refs_sha256 = sha256_hex(text);
  EXPECT_NE(verify_draw(d, good.seed_sha256, kRefs).find("committed to"), std::string::npos);
}

TEST(DrawCheck, ParsesThePublishedDraw) {
  Draw d;
  ASSERT_TRUE(parse_draw(
      R"({"room":"r","seed":"00","seed_sha256":"11","order":["1fd431db6127df13","bd113838e0b4ef74"]})",
      &d));
  EXPECT_EQ(d.seed, "00");
  ASSERT_EQ(d.order.size(), 2u);
  EXPECT_EQ(ref_number(d.order[0]), 0x1fd431db6127df13u);
  EXPECT_FALSE(parse_draw(R"({"seed":"00","order":[]})", &d));
  EXPECT_FALSE(parse_draw(R"({"seed":"00","seed_sha256":"11","order":[1]})", &d));
  EXPECT_EQ(ref_number("1fd431db6127df1"), 0u);
}

TEST(DrawCheck, AVisitorReadsItsRefAndThePreQueue) {
  Message m;
  ASSERT_TRUE(
      parse_message(R"({"status":"WAITING","ref":"3e3f8d483e1a6bd8","seq":4,"position":null,)"
                    R"("opens_at":"2026-12-01T10:00:00.000Z","poll_after_ms":1000})",
                    &m));
  EXPECT_EQ(m.ref, 0x3e3f8d483e1a6bd8u);
  EXPECT_TRUE(m.position_null);
  EXPECT_TRUE(m.opens_at);
  EXPECT_EQ(m.position, -1);
  ASSERT_TRUE(parse_message(R"({"status":"WAITING","ref":"x","position":3})", &m));
  EXPECT_EQ(m.ref, 0u);
  EXPECT_FALSE(m.position_null);
  EXPECT_FALSE(m.opens_at);
}

// Visitors admitted 25 ms apart in line order, as SSE sees them.
std::vector<VisitorRecord> orderly(size_t n) {
  std::vector<VisitorRecord> rs(n);
  for (size_t i = 0; i < n; ++i) {
    rs[i].allowed_seen_us = 1'000'000 + 25'000 * static_cast<int64_t>(i);
    rs[i].last_waiting_sent_us = rs[i].allowed_seen_us - 600'000;  // a poll before
  }
  return rs;
}

std::vector<const VisitorRecord*> line(const std::vector<VisitorRecord>& rs) {
  std::vector<const VisitorRecord*> l;
  for (const VisitorRecord& r : rs) l.push_back(&r);
  return l;
}

TEST(AdmissionOrder, AnOrderlyLineHasNoViolations) {
  std::vector<VisitorRecord> rs = orderly(100);
  EXPECT_EQ(count_overtaken(line(rs), false, 250'000).visitors, 0u);
  EXPECT_EQ(count_overtaken(line(rs), true, 50'000).visitors, 0u);
  EXPECT_EQ(count_overtaken(line(rs), false, 250'000).worst_us, 0);
}

TEST(AdmissionOrder, OneLetInLateIsAViolationBeyondTheTolerance) {
  std::vector<VisitorRecord> rs = orderly(100);
  rs[10].allowed_seen_us += 200'000;  // seen after 8 behind it, by at most 200 ms: a push
  EXPECT_EQ(count_overtaken(line(rs), false, 250'000).visitors, 0u);
  EXPECT_EQ(count_overtaken(line(rs), false, 250'000).worst_us, 175'000);
  rs[10].allowed_seen_us += 200'000;  // now 375 ms after the one behind it
  EXPECT_EQ(count_overtaken(line(rs), false, 250'000).visitors, 1u);
  // A poller's evidence is its last WAITING answer's request, not when it saw ALLOWED.
  EXPECT_EQ(count_overtaken(line(rs), true, 50'000).visitors, 0u);
  rs[10].last_waiting_sent_us = rs[12].allowed_seen_us + 60'000;
  EXPECT_EQ(count_overtaken(line(rs), true, 50'000).visitors, 1u);
}

TEST(AdmissionOrder, TheWaitByArrivalFifth) {
  std::vector<double> rising;
  for (int i = 0; i < 100; ++i) rising.push_back(i / 20.0);
  rising.push_back(-1);  // never admitted: counted in its fifth, not in the means
  const auto fifths = fifths_of(rising);
  EXPECT_EQ(fifths[0].visitors, 20u);
  EXPECT_EQ(fifths[4].visitors, 21u);
  EXPECT_EQ(fifths[4].admitted, 20u);
  EXPECT_NEAR(fifths[0].mean_s, 0.475, 1e-9);
  EXPECT_NEAR(fifths[0].p50_s, 0.475, 1e-9);
  EXPECT_TRUE(waits_rise(fifths));
  EXPECT_FALSE(flatness(rising, 0.25).flat);
  std::vector<double> flat(100, 2.0);
  flat[3] = 2.4;
  EXPECT_FALSE(waits_rise(fifths_of(flat)));
  EXPECT_TRUE(flatness(flat, 0.25).flat);
}

TEST(AdmissionOrder, AFairDrawOfFewVisitorsIsNotCalledUneven) {
  // 200 visitors, 40 let in at the start and 40 a second after: fifths of 40 drawn at random
  // often differ by more than 1.5x by chance alone; none of these may fail.
  std::mt19937_64 rng(7);
  int by_chance = 0;
  for (int run = 0; run < 50; ++run) {
    std::vector<double> waits;
    for (int rank = 0; rank < 200; ++rank) waits.push_back(std::max(0, rank - 40) / 40.0 + 0.001);
    std::shuffle(waits.begin(), waits.end(), rng);
    const Flatness f = flatness(waits, 0.25);
    EXPECT_TRUE(f.flat) << "run " << run << ": " << f.ratio << " > " << f.chance;
    if (f.ratio > 1.5) ++by_chance;
  }
  EXPECT_GT(by_chance, 0);  // some were over 1.5x, and passed only by the chance allowance
}

TEST(DropConfig, DefaultsAndRefusals) {
  unsetenv("ANTEROOM_ADMIN_KEY");
  auto parse = [](std::vector<const char*> args, Config* c) {
    args.insert(args.begin(), "anteroom-loadgen");
    return parse_config(static_cast<int>(args.size()), args.data(), c);
  };
  Config c;
  ASSERT_EQ(parse({"drop", "--admin-key", "k", "--users", "500", "--prequeue-s", "4"}, &c), "");
  EXPECT_EQ(c.scenario, Scenario::kDrop);
  EXPECT_EQ(c.transport, Transport::kSse);
  EXPECT_TRUE(c.shuffle);
  EXPECT_EQ(c.admit_per_second, 100u);  // users / 5: about 5 s to let everyone in
  EXPECT_EQ(c.arrival_rate, 125);       // spread over the pre-queue
  EXPECT_EQ(c.capacity, 0u);
  EXPECT_EQ(c.abandon, 0);
  EXPECT_EQ(c.prequeue_s, 4);
  ASSERT_EQ(parse({"drop", "--admin-key", "k", "--no-shuffle", "--admit-per-second", "7",
                   "--transport", "poll"},
                  &c),
            "");
  EXPECT_FALSE(c.shuffle);
  EXPECT_EQ(c.admit_per_second, 7u);
  EXPECT_EQ(c.prequeue_s, 10);
  EXPECT_NE(parse({"drop", "--admin-key", "k", "--transport", "ws"}, &c), "");
  EXPECT_NE(parse({"drop", "--admin-key", "k", "--arrival-rate", "5"}, &c), "");
  EXPECT_NE(parse({"drop", "--admin-key", "k", "--prequeue-s", "0"}, &c), "");
  EXPECT_NE(parse({"drop"}, &c), "");  // it creates its room
}

}  // namespace
}  // namespace anteroom::loadgen
