// A status read of a ticket a node has not seen made it fetch the room from Redis (XRANGE),
// coalesced, but for ids an attacker picks. Now an id whose seq this copy already passed, or
// one no join in flight could have, is answered 404 from the copy; an id just past the copy's
// last join (a join another node answered) waits for the copy's next read of the room.
#include <hiredis/hiredis.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/ticket_id.h"
#include "tests/cluster/cluster_fixture.h"

namespace anteroom::testing {

uint64_t ClusterTest::command_calls(const std::string& command) {
  redisContext* c = redisConnect("127.0.0.1", redis_->port());
  if (c == nullptr || c->err != 0) return 0;
  auto* r = static_cast<redisReply*>(redisCommand(c, "INFO commandstats"));
  uint64_t calls = 0;
  if (r != nullptr && r->type == REDIS_REPLY_STRING) {
    const std::string info(r->str, r->len);
    const std::string head = "cmdstat_" + command + ":calls=";
    const size_t at = info.find(head);
    if (at != std::string::npos) calls = std::stoull(info.substr(at + head.size()));
  }
  if (r != nullptr) freeReplyObject(r);
  redisFree(c);
  return calls;
}

namespace {

using UnknownTicket = ClusterTest;

TEST_F(UnknownTicket, MadeUpIdsAreAnsweredWithoutAskingRedis) {
  auto& a = add_quiet_node("a");
  auto& b = add_quiet_node("b");
  ASSERT_TRUE(a.put_room("r", config(0, AdmissionMode::kManual)).is_ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(a.join("r", JoinRequest{}).is_ok());
  settle();
  const IdCodec codec(*engine_options().id_key);
  std::vector<std::string> made_up;
  for (uint64_t seq : {uint64_t{3}, uint64_t{9}, uint64_t{5'000'000}, ~uint64_t{0} >> 28}) {
    made_up.emplace_back(id_view(codec.encode(seq, random_tag())));  // a seq, a wrong tag
  }
  made_up.emplace_back("not-a-ticket-id-at-all-000");
  // What a settle reads by itself (each node catches up), as the yardstick.
  const uint64_t x0 = command_calls("xrange");
  settle();
  const uint64_t settle_reads = command_calls("xrange") - x0;
  const uint64_t before = command_calls("xrange");
  for (const std::string& id : made_up) {
    EXPECT_FALSE(b.peek("r", id).is_ok());
    EXPECT_FALSE(b.when_caught_up("r", id, [] {})) << id << ": it would wait for a fetch";
  }
  settle();
  EXPECT_EQ(command_calls("xrange") - before, settle_reads)
      << "made-up ids made the node read the stream";
  // An id just past the copy's joins may be one another node answered: its read waits for the
  // copy's next read of the room (the bell, or the periodic one), and asks for none itself,
  // however often it is sent (anyone holding a ticket can make such ids: its own tag, another
  // seq).
  std::atomic<int> done{0};
  const std::string next(id_view(codec.encode(10, random_tag())));
  const uint64_t ahead_before = command_calls("xrange");
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(b.when_caught_up("r", next, [&] { ++done; })) << "not waited for";
  }
  settle();
  EXPECT_EQ(command_calls("xrange") - ahead_before, settle_reads)
      << "reads of an id just ahead made the node read the stream";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (done < 100 && std::chrono::steady_clock::now() < deadline) {
    settle();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(done, 100) << "the waits never ended";
}

}  // namespace
}  // namespace anteroom::testing
