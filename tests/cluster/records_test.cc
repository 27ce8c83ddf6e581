// The bytes of records and snapshots: what is written reads back the same; anything else is
// refused with an error, never a crash.
#include "cluster/records.h"

#include <gtest/gtest.h>

namespace anteroom::cluster {
namespace {

Record sample_record() {
  Record r;
  r.origin = "node-1#0123456789abcdef";
  r.batch = 42;
  r.at_ms = 1'796'000'000'123;
  KeyHash key{};
  key[0] = 7;
  key[31] = 9;
  r.ops.emplace_back(op::Join{Tag{1, 2, 3}, "alice", key, std::nullopt});
  r.ops.emplace_back(op::Join{Tag{4, 5, 6}, "", std::nullopt, std::nullopt});
  r.ops.emplace_back(op::Join{Tag{7, 8, 9}, "", std::nullopt, std::nullopt, 2, 30});
  r.ops.emplace_back(op::Leave{17});
  r.ops.emplace_back(op::Activate{18});
  r.ops.emplace_back(op::Admit{100, 0, {}});
  r.ops.emplace_back(op::Expire{19, EndReason::kAbandoned});
  r.ops.emplace_back(op::Seen{{3, 5, 1000000, 1000001}});
  r.ops.emplace_back(op::Clear{});
  RoomConfig c;
  c.capacity = 77;
  c.trust_user = true;
  c.pow_difficulty = 20;
  c.lanes = {3, 1};
  c.gate = R"({"gate_admits":false})";
  c.passes.push_back({std::string(32, 'a'), "staff", 1'796'000'600'000, 5, true});
  c.passes_prune_before_ms = 1'796'000'000'000;
  c.parts = RoomConfig::kPasses;
  r.ops.emplace_back(op::PutRoom{c});
  r.ops.emplace_back(op::DeleteRoom{});
  return r;
}

TEST(Records, ARecordReadsBackAsWritten) {
  const Record r = sample_record();
  auto back = decode_record(encode_record(r));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->origin, r.origin);
  EXPECT_EQ(back->batch, r.batch);
  EXPECT_EQ(back->at_ms, r.at_ms);
  ASSERT_EQ(back->ops.size(), r.ops.size());
  const auto& j = std::get<op::Join>(back->ops[0]);
  EXPECT_EQ(j.tag, (Tag{1, 2, 3}));
  EXPECT_EQ(j.user, "alice");
  ASSERT_TRUE(j.key_hash.has_value());
  EXPECT_EQ((*j.key_hash)[31], 9);
  EXPECT_FALSE(std::get<op::Join>(back->ops[1]).key_hash.has_value());
  EXPECT_EQ(std::get<op::Join>(back->ops[1]).lane, JoinRequest::kLastLane);
  EXPECT_EQ(std::get<op::Join>(back->ops[2]).lane, 2u);
  EXPECT_EQ(std::get<op::Join>(back->ops[2]).probation_s, 30u);
  EXPECT_EQ(std::get<op::Leave>(back->ops[3]).seq, 17u);
  EXPECT_EQ(std::get<op::Activate>(back->ops[4]).seq, 18u);
  EXPECT_EQ(std::get<op::Admit>(back->ops[5]).count, 100u);
  EXPECT_EQ(std::get<op::Expire>(back->ops[6]).reason, EndReason::kAbandoned);
  EXPECT_EQ(std::get<op::Seen>(back->ops[7]).seqs, (std::vector<uint64_t>{3, 5, 1000000, 1000001}));
  EXPECT_TRUE(std::holds_alternative<op::Clear>(back->ops[8]));
  EXPECT_EQ(std::get<op::PutRoom>(back->ops[9]).config.capacity, 77u);
  EXPECT_TRUE(std::get<op::PutRoom>(back->ops[9]).config.trust_user);
  EXPECT_EQ(std::get<op::PutRoom>(back->ops[9]).config, std::get<op::PutRoom>(r.ops[9]).config);
  EXPECT_EQ(std::get<op::PutRoom>(back->ops[9]).config.pow_difficulty, 20);
  EXPECT_TRUE(std::holds_alternative<op::DeleteRoom>(back->ops[10]));
}

// A log's forms (tickets named by seq) share the codec but are no cluster's: a record that
// holds one is damage, so no replica applies what only a log may say.
TEST(Records, ALogsFormOfAnOpIsRefused) {
  const std::vector<Op> logs = {op::Join{{1, 2, 3}, "", std::nullopt, 7}, op::Admit{1, 0, {4}},
                                op::Clear{std::vector<uint64_t>{4}}, op::Draw{},
                                op::LaneTurn{1, 9}};
  for (const Op& op : logs) {
    SCOPED_TRACE(op_name(op));
    Record r = sample_record();
    r.ops.push_back(op);
    auto back = decode_record(encode_record(r));
    ASSERT_FALSE(back.is_ok());
    EXPECT_NE(back.status().message().find("naming tickets"), std::string::npos);
  }
}

TEST(Records, EveryTruncationAndStrayByteIsRefused) {
  const std::string bytes = encode_record(sample_record());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(decode_record(bytes.substr(0, n)).is_ok()) << n;
  }
  EXPECT_FALSE(decode_record(bytes + "x").is_ok());
  std::string other_version = bytes;
  other_version[0] = 3;  // a version after this build's
  EXPECT_FALSE(decode_record(other_version).is_ok());
}

TEST(Records, FlippedBytesNeverCrashTheDecoder) {
  const std::string bytes = encode_record(sample_record());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string b = bytes;
      b[i] = static_cast<char>(b[i] ^ (1 << bit));
      auto r = decode_record(b);  // may read as another valid record; must not crash
      if (r.is_ok()) {
        EXPECT_LE(r->ops.size(), b.size());
      }
    }
  }
}

Snapshot sample_snapshot() {
  Snapshot s;
  s.records = 1234;
  s.stream_id = "1796000000123-7";
  s.image.config.capacity = 3;
  s.image.epoch_ms = 1'796'000'000'000;
  s.image.next_seq = 10;
  s.image.counters.joined_total = 10;
  s.image.counters.admitted_total = 2;
  for (uint64_t seq : {2, 5, 9}) {
    RestoredTicket t;
    t.seq = seq;
    t.tag = {1, 2, static_cast<uint32_t>(seq)};
    t.user = seq == 5 ? "bob" : "";
    t.state = seq == 2 ? TicketState::kAllowed : TicketState::kWaiting;
    if (seq == 9) {  // ended, its memory still held: version 4 keeps it
      t.state = TicketState::kExpired;
      t.reason = EndReason::kAbandoned;
    }
    t.admitted_at_ms = seq == 2 ? 1000 : 0;
    t.seen_at_ms = 500 + static_cast<int64_t>(seq);
    t.lane = static_cast<uint8_t>(seq % 3);
    t.probation_s = seq == 2 ? 30 : 0;
    s.image.tickets.push_back(t);
  }
  s.image.config.event.prequeue_at_ms = 1'796'000'000'000;
  s.image.config.event.start_at_ms = 1'796'000'060'000;
  s.image.config.event.shuffle = true;
  s.image.config.event.nonce[0] = 7;
  s.image.config.event.phase = RoomEvent::Phase::kStarted;
  s.image.config.event.start_seq = 10;
  s.image.config.mode = RoomMode::kRandom;
  s.image.config.page = R"({"title":"Sale"})";
  DrawInfo d;
  d.seed = s.image.config.event.nonce;
  d.first_seq = 0;
  d.end_seq = 10;
  d.refs = {0xfedcba9876543210, 1, 0x8000000000000000};
  s.image.draw = d;
  s.image.lanes_turn = {true, 1, 12345};
  return s;
}

TEST(Records, ASnapshotReadsBackAsWritten) {
  const Snapshot s = sample_snapshot();
  auto back = decode_snapshot(encode_snapshot(s));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->records, 1234u);
  EXPECT_EQ(back->stream_id, s.stream_id);
  EXPECT_EQ(back->image.config, s.image.config);
  EXPECT_EQ(back->image.epoch_ms, s.image.epoch_ms);
  EXPECT_EQ(back->image.next_seq, 10u);
  EXPECT_EQ(back->image.counters.admitted_total, 2u);
  EXPECT_EQ(back->image.draw, s.image.draw);
  EXPECT_EQ(back->image.lanes_turn, s.image.lanes_turn);
  ASSERT_EQ(back->image.tickets.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const auto& a = back->image.tickets[i];
    const auto& b = s.image.tickets[i];
    EXPECT_EQ(a.seq, b.seq);
    EXPECT_EQ(a.tag, b.tag);
    EXPECT_EQ(a.user, b.user);
    EXPECT_EQ(a.state, b.state);
    EXPECT_EQ(a.reason, b.reason);
    EXPECT_EQ(a.admitted_at_ms, b.admitted_at_ms);
    EXPECT_EQ(a.seen_at_ms, b.seen_at_ms);
    EXPECT_EQ(a.lane, b.lane);
    EXPECT_EQ(a.probation_s, b.probation_s);
  }
}

TEST(Records, ASnapshotWithImpossibleContentIsRefused) {
  auto refused = [](const Snapshot& s) { return !decode_snapshot(encode_snapshot(s)).is_ok(); };
  Snapshot s = sample_snapshot();
  s.stream_id = "12-x";
  EXPECT_TRUE(refused(s));
  s = sample_snapshot();
  s.image.tickets[1].seq = 2;  // the same seq twice
  EXPECT_TRUE(refused(s));
  s = sample_snapshot();
  s.image.tickets[0].state = static_cast<TicketState>(0);  // unpublished: never live
  EXPECT_TRUE(refused(s));
  s = sample_snapshot();
  s.image.tickets[0].state = static_cast<TicketState>(6);  // no such state
  EXPECT_TRUE(refused(s));
  s = sample_snapshot();
  s.image.tickets[0].user = std::string("a\x01", 2);  // a control character
  EXPECT_TRUE(refused(s));
  const std::string bytes = encode_snapshot(sample_snapshot());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(decode_snapshot(bytes.substr(0, n)).is_ok()) << n;
  }
}

}  // namespace
}  // namespace anteroom::cluster
