// The Lua scripts a node sends to Redis (cluster/lua_scripts.h) are the files in
// cluster/lua/, byte for byte, and each is one Redis runs (SCRIPT LOAD compiles it).
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cluster/lua_scripts.h"
#include "tests/support/redis_server.h"

namespace anteroom::cluster {
namespace {

namespace fs = std::filesystem;

TEST(LuaScripts, AreTheTreesFilesAndRedisCompilesThem) {
  const fs::path root = ANTEROOM_SOURCE_DIR;
  std::set<std::string> on_disk;
  for (const auto& e : fs::directory_iterator(root / "cluster/lua")) {
    on_disk.insert(fs::relative(e.path(), root).string());
  }
  const std::vector<std::string_view> listed = lua_script_paths();
  EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), on_disk);
  testing::RedisServer redis;
  ASSERT_TRUE(redis.running());
  redisContext* c = redisConnect("127.0.0.1", redis.port());
  ASSERT_TRUE(c != nullptr && c->err == 0);
  for (std::string_view p : listed) {
    std::ifstream in(root / p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    EXPECT_EQ(lua_script(p), s.str()) << p;
    const std::string text(lua_script(p));
    auto* r = static_cast<redisReply*>(redisCommand(c, "SCRIPT LOAD %b", text.data(), text.size()));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->type, REDIS_REPLY_STRING) << p << ": " << (r->str ? r->str : "");
    freeReplyObject(r);
  }
  redisFree(c);
}

}  // namespace
}  // namespace anteroom::cluster
