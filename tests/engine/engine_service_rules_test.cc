// The rules of what the server builds on the engine (docs/engine.md): a one-time thing
// spent within its limit once, and the configuration version the server's caches follow;
// run against every engine (the suite is instantiated in engine_rules_test.cc).
#include <future>

#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

// A one-time thing (a link that sets a cookie, a pass good for n visitors) is spent within
// its limit once: on the cluster, the two calls go to the two nodes.
TEST_P(EngineTest, AOneTimeThingIsSpentWithinItsLimitOnce) {
  auto spent = [&](const char* key, uint32_t limit) {
    std::promise<bool> p;
    engine_->spend(key, limit, 60'000, [&](bool ok) { p.set_value(ok); });
    return p.get_future().get();
  };
  EXPECT_TRUE(spent("link", 1));
  EXPECT_FALSE(spent("link", 1));
  EXPECT_TRUE(spent("pass", 2));
  EXPECT_TRUE(spent("pass", 2));
  EXPECT_FALSE(spent("pass", 2));
  EXPECT_TRUE(spent("other", 1));
}

// What the server keeps of the rooms' configurations is refreshed when this moves.
TEST_P(EngineTest, TheConfigVersionMovesWithEveryPutAndDelete) {
  const uint64_t v0 = engine_->config_version();
  make_room("r", config(1));
  const uint64_t v1 = engine_->config_version();
  EXPECT_NE(v1, v0);
  make_room("r", config(2));
  const uint64_t v2 = engine_->config_version();
  EXPECT_NE(v2, v1);
  ASSERT_TRUE(engine_->delete_room("r").is_ok());
  EXPECT_NE(engine_->config_version(), v2);
}

}  // namespace
}  // namespace anteroom::testing
