// The fair draw's seed is unreadable until the start, in the room's Redis Stream too: the
// records carry the event's public nonce, and the seed derives from it under the nodes'
// secret. (The seed itself used to sit in the stream for the whole pre-queue: whoever read
// it could join and leave until one of its tickets drew a front place.)
#include <hiredis/hiredis.h>

#include <string>
#include <vector>

#include "cluster/records.h"
#include "engine/fair_draw.h"
#include "tests/cluster/cluster_fixture.h"

namespace anteroom::testing {
namespace {

// Every record value ("r" field) of the room's stream.
std::vector<std::string> stream_records(uint16_t port, const std::string& room) {
  std::vector<std::string> out;
  redisContext* c = redisConnect("127.0.0.1", port);
  if (c == nullptr || c->err != 0) return out;
  const std::string key = "anteroom:{" + room + "}:log";
  auto* r = static_cast<redisReply*>(redisCommand(c, "XRANGE %s - +", key.c_str()));
  for (size_t i = 0; r != nullptr && r->type == REDIS_REPLY_ARRAY && i < r->elements; ++i) {
    const redisReply* fields = r->element[i]->element[1];
    for (size_t f = 0; f + 1 < fields->elements; f += 2) {
      if (std::string(fields->element[f]->str, fields->element[f]->len) == "r") {
        out.emplace_back(fields->element[f + 1]->str, fields->element[f + 1]->len);
      }
    }
  }
  if (r != nullptr) freeReplyObject(r);
  redisFree(c);
  return out;
}

class DrawSecrecy : public ClusterTest {};

TEST_F(DrawSecrecy, TheStreamDoesNotTellTheSeedBeforeTheStart) {
  auto& a = add_node("a");
  add_node("b");
  RoomConfig c = config(1);
  const int64_t now = clock_->now_ms() + 0;
  c.event.prequeue_at_ms = now;
  c.event.start_at_ms = now + 10'000;
  c.event.shuffle = true;
  c.event.nonce = random_seed();
  ASSERT_TRUE(a.put_room("r", c).is_ok());
  settle();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(a.join("r", JoinRequest{}).is_ok());
  settle();
  const std::vector<std::string> before = stream_records(redis_->port(), "r");
  ASSERT_FALSE(before.empty());
  const Digest commitment = a.room_info("r")->config.event.seed_sha256;
  for (auto& n : nodes_) EXPECT_EQ(n->room_info("r")->config.event.seed_sha256, commitment);
  clock_->advance_s(11);
  settle();
  auto draw = a.draw("r");
  ASSERT_TRUE(draw.is_ok()) << draw.status().message();
  EXPECT_EQ(sha256(draw->seed.data(), draw->seed.size()), commitment) << "the seed committed to";
  const std::string seed(reinterpret_cast<const char*>(draw->seed.data()), draw->seed.size());
  for (const std::string& bytes : before) {
    EXPECT_EQ(bytes.find(seed), std::string::npos) << "the seed's bytes are in the stream";
    auto rec = cluster::decode_record(bytes);
    ASSERT_TRUE(rec.is_ok()) << rec.status().message();
    for (const Op& op : rec->ops) {
      if (const auto* put = std::get_if<op::PutRoom>(&op)) {
        EXPECT_NE(put->config.event.nonce, draw->seed) << "a record holds the seed";
        EXPECT_FALSE(put->config.event.legacy_seed);
      }
    }
  }
}

}  // namespace
}  // namespace anteroom::testing
