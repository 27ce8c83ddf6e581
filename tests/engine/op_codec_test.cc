// The one codec of the record vocabulary (engine/op_codec.h): every op reads back as written,
// in both forms (a cluster's requests and a log's named tickets), and a cut op is refused.
#include <gtest/gtest.h>

#include "engine/op_codec.h"

namespace anteroom {
namespace {

std::vector<Op> every_op() {
  KeyHash key{};
  key[3] = 5;
  RoomConfig c;
  c.capacity = 9;
  DrawInfo part{{}, 4, 7, {11, 12, 13}};
  part.seed[0] = 1;
  return {op::Join{{1, 2, 3}, "alice", key, std::nullopt},
          op::Join{{4, 5, 6}, "", std::nullopt, 12},
          op::Join{{7, 8, 9}, "bob", key, 0},
          op::Join{{7, 8, 9}, "", std::nullopt, 3, 1, 45},
          op::Leave{3},
          op::Activate{4},
          op::Admit{10, 2, {}},
          op::Admit{2, 0, {5, 9}},
          op::Expire{6, EndReason::kSessionIdle},
          op::Seen{{9, 3, 7}},
          op::Clear{},
          op::Clear{std::vector<uint64_t>{1, 2, 40}},
          op::Clear{std::vector<uint64_t>{}},
          op::PutRoom{c},
          op::DeleteRoom{},
          op::EventPhase{RoomEvent::Phase::kStarted},
          op::Draw{part, 3},
          op::LaneTurn{2, 77}};
}

// The fields of an op as text, to compare two ops whatever their kind.
std::string text(const Op& op) {
  std::string out;
  codec::put_op(&out, op);
  return std::string(op_name(op)) + ":" + out;
}

TEST(OpCodec, EveryOpReadsBackAsWritten) {
  for (const Op& op : every_op()) {
    SCOPED_TRACE(op_name(op));
    std::string bytes;
    codec::put_op(&bytes, op);
    codec::Reader in(bytes);
    Op back;
    ASSERT_TRUE(codec::read_op(in, &back));
    EXPECT_TRUE(in.done());
    EXPECT_EQ(back.index(), op.index());
    EXPECT_EQ(text(back), text(op));
    EXPECT_EQ(names_tickets(back), names_tickets(op));
  }
  const auto j = std::get<op::Join>(every_op()[2]);
  std::string bytes;
  codec::put_op(&bytes, j);
  codec::Reader in(bytes);
  Op back;
  ASSERT_TRUE(codec::read_op(in, &back));
  EXPECT_EQ(std::get<op::Join>(back).seq, std::optional<uint64_t>(0));  // seq 0 is a seq
  EXPECT_EQ(std::get<op::Join>(back).user, "bob");
  EXPECT_EQ(std::get<op::Admit>(every_op()[7]).seqs.size(), 2u);
  const auto laned = std::get<op::Join>(every_op()[3]);  // a lane and a probation
  bytes.clear();
  codec::put_op(&bytes, laned);
  codec::Reader in2(bytes);
  ASSERT_TRUE(codec::read_op(in2, &back));
  EXPECT_EQ(std::get<op::Join>(back).lane, 1u);
  EXPECT_EQ(std::get<op::Join>(back).probation_s, 45u);
}

TEST(OpCodec, OnlyALogsFormsNameTickets) {
  std::vector<std::string> naming;
  for (const Op& op : every_op()) {
    if (names_tickets(op)) naming.emplace_back(op_name(op));
  }
  EXPECT_EQ(naming, (std::vector<std::string>{"join", "join", "join", "admit", "clear", "clear",
                                              "draw", "lane_turn"}));
}

TEST(OpCodec, EveryCutOpIsRefused) {
  for (const Op& op : every_op()) {
    std::string bytes;
    codec::put_op(&bytes, op);
    for (size_t n = 0; n < bytes.size(); ++n) {
      SCOPED_TRACE(std::string(op_name(op)) + " cut at " + std::to_string(n));
      codec::Reader in(std::string_view(bytes).substr(0, n));
      Op back;
      EXPECT_FALSE(codec::read_op(in, &back) && in.done());
    }
  }
  codec::Reader unknown("\x0e");  // type 14: none
  Op back;
  EXPECT_FALSE(codec::read_op(unknown, &back));
}

}  // namespace
}  // namespace anteroom
