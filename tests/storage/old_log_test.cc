// A log the previous release wrote (format version 3, tests/storage/data/log-v3: its
// make.sh says how) read by this build: every room, ticket, state, reason and draw as that
// release read them back; what this build appends to it is version 4 and loads again.
#include <gtest/gtest.h>

#include "storage/log_format.h"
#include "storage/log_records.h"
#include "storage/persistent_engine.h"
#include "tests/storage/storage_fixture.h"

namespace anteroom {
namespace {

struct Expected {
  const char* room;
  const char* ticket;
  TicketState state;
  EndReason reason;
  uint64_t position;
};

// What the release that wrote the log answered for each ticket after reading it back.
const Expected kTickets[] = {
    {"live", "s09CqWwLQ0jRLLl1_BfcqWJNv-Q", TicketState::kActive, EndReason::kNone, 0},
    {"live", "tkt-rqtljPsH8JMfvjD61eV8tV0", TicketState::kAllowed, EndReason::kNone, 0},
    {"live", "DY_-OOSplXHSEERc9hKLEoTjUxI", TicketState::kWaiting, EndReason::kNone, 1},
    {"live", "jeiHLk0cfIwRTsS3jwSiUDnS1fo", TicketState::kLeft, EndReason::kLeft, 0},
    {"manual", "Znvng4BOXVuuyB5hkgZUlTzVvGQ", TicketState::kAllowed, EndReason::kNone, 0},
    {"manual", "8wk40Z54pDyKxqLTs3uM5GPHwIo", TicketState::kLeft, EndReason::kCleared, 0},
    {"manual", "eyW8x-D3XBZp0s6hFLtjnS5EDEM", TicketState::kLeft, EndReason::kCleared, 0},
    {"manual", "5Cw2XYQLbuEwTeVRanE4n9hmOC8", TicketState::kLeft, EndReason::kCleared, 0},
    {"manual", "lL7llWIaKzwmhRwBR4MZIjLSqiA", TicketState::kWaiting, EndReason::kNone, 1},
    {"sale", "JPBMibum-UmgwkLYZ8z7zYlmif4", TicketState::kWaiting, EndReason::kNone, 1},
    {"sale", "L3pyyBjKilRe2FvWwhDLqjwChRk", TicketState::kAllowed, EndReason::kNone, 0},
    {"sale", "WKj_E_2q1yTd2vSxaQotbHEGY0I", TicketState::kWaiting, EndReason::kNone, 2},
    {"shop", "iG3fWCt4Tq7wRW9Yd5nLTgF1F6w", TicketState::kExpired, EndReason::kAllowedUnused, 0},
    {"shop", "ybsPgVkFYrUMmQrCETtCqdayRtg", TicketState::kExpired, EndReason::kAllowedUnused, 0},
    {"shop", "xsbNbhb22E1Da7YBwl-7EAAAnPU", TicketState::kExpired, EndReason::kAllowedUnused, 0},
    {"shop", "R59X0UZK90LQgxcc9JorwuEzHQU", TicketState::kExpired, EndReason::kAllowedUnused, 0},
    {"shop", "enuCHANNCEl5zjsjD_4lhTel3C0", TicketState::kExpired, EndReason::kAllowedUnused, 0},
    {"shop", "Wd9cFcLq_Aor73AyjGOk5ZKUNwk", TicketState::kExpired, EndReason::kAllowedUnused, 0},
};

class OldLog : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir("anteroom-oldlog-");
    fs::create_directories(dir_);
    fs::copy_file(fs::path(ANTEROOM_SOURCE_DIR) / "tests/storage/data/log-v3/anteroom.log",
                  dir_ / "anteroom.log");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::unique_ptr<Engine> open() {
    auto e =
        open_persistent_engine({dir_.string(), LogWriter::Sync::kAlways}, EngineOptions{}, nullptr);
    EXPECT_TRUE(e.is_ok()) << e.status().message();
    return e.is_ok() ? std::move(e).value() : nullptr;
  }
  // The version of the log's first record, and the types of all of them.
  std::pair<uint32_t, std::vector<uint8_t>> versions() const {
    const std::string data = read_file(dir_ / "anteroom.log");
    logfmt::Reader r(data);
    logfmt::Record rec;
    uint32_t version = 0;
    std::vector<uint8_t> types;
    while (r.next(&rec)) {
      types.push_back(rec.type);
      auto any = logrec::decode(rec);
      EXPECT_TRUE(any.is_ok()) << any.status().message();
      if (const auto* m = any.is_ok() ? std::get_if<logrec::Meta>(&any.value()) : nullptr) {
        if (version == 0) version = m->version;
      }
    }
    return {version, types};
  }
  void expect_as_written(Engine& e) {
    std::vector<std::string> names;
    for (const RoomInfo& r : e.rooms()) names.push_back(r.name);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names,
              (std::vector<std::string>{"live", "manual", "sale", "shop"}));  // gone: deleted
    for (const Expected& t : kTickets) {
      SCOPED_TRACE(std::string(t.room) + " " + t.ticket);
      auto v = e.peek(t.room, t.ticket);
      ASSERT_TRUE(v.is_ok()) << v.status().message();
      EXPECT_EQ(v->state, t.state);
      EXPECT_EQ(v->reason, t.reason);
      EXPECT_EQ(v->position, t.position);
    }
    auto draw = e.draw("sale");
    ASSERT_TRUE(draw.is_ok()) << draw.status().message();
    EXPECT_EQ(draw->first_seq, 0u);
    EXPECT_EQ(draw->end_seq, 3u);
    EXPECT_EQ(draw->refs.size(), 3u);
  }
  fs::path dir_;
};

TEST_F(OldLog, AVersion3LogLoadsAsThePreviousReleaseReadIt) {
  auto [version, types] = versions();
  EXPECT_EQ(version, 3u);
  for (int type : {2, 3, 4, 5, 7, 8, 9, 10}) {  // the fixture holds every kind it wrote
    EXPECT_NE(std::find(types.begin(), types.end(), type), types.end()) << type;
  }
  auto e = open();
  ASSERT_NE(e, nullptr);
  expect_as_written(*e);
}

TEST_F(OldLog, WhatThisBuildAppendsIsVersion4AndLoadsWithTheRest) {
  std::string joined;
  {
    auto e = open();
    ASSERT_NE(e, nullptr);
    auto j = e->join("manual", JoinRequest{"late", std::nullopt});
    ASSERT_TRUE(j.is_ok()) << j.status().message();
    joined = std::string(j->ticket.id.data(), j->ticket.id.size());
    ASSERT_TRUE(e->admit("manual", 1).is_ok());  // the WAITING one before it
  }
  auto [version, types] = versions();
  EXPECT_EQ(types.back(), 11);  // an op record
  auto e = open();
  ASSERT_NE(e, nullptr);
  auto v = e->peek("manual", joined);
  ASSERT_TRUE(v.is_ok()) << v.status().message();
  EXPECT_EQ(v->state, TicketState::kWaiting);
  EXPECT_EQ(v->position, 1u);
  EXPECT_EQ(e->peek("manual", "lL7llWIaKzwmhRwBR4MZIjLSqiA")->state, TicketState::kAllowed);

  // A snapshot rewrites the whole log in this build's format, and reads back the same.
  ASSERT_TRUE(e->snapshot().is_ok());
  e.reset();
  auto [after, after_types] = versions();
  EXPECT_EQ(after, logrec::kVersion);
  for (uint8_t type : after_types) EXPECT_TRUE(type == 1 || type == 7 || type == 8 || type == 11);
  e = open();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->peek("manual", joined)->position, 1u);
  EXPECT_EQ(e->draw("sale")->refs.size(), 3u);
  EXPECT_EQ(e->peek("live", "s09CqWwLQ0jRLLl1_BfcqWJNv-Q")->state, TicketState::kActive);
}

}  // namespace
}  // namespace anteroom
