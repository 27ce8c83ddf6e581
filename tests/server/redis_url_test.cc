// --cluster's forms: bare HOST:PORT lists and redis://, rediss://, redis-sentinel:// URLs,
// with userinfo percent-decoded; what does not read is refused naming the problem, and never
// repeating a password.
#include "server/app/redis_url.h"

#include <gtest/gtest.h>

#include "server/app/options.h"

namespace anteroom::testing {
namespace {

using Hosts = std::vector<std::pair<std::string, uint16_t>>;

TEST(RedisUrl, BareAddressesStillRead) {
  auto t = parse_redis_target("127.0.0.1:6379,[::1]:7000,redis.internal:6380");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->scheme, RedisTarget::Scheme::kPlain);
  EXPECT_EQ(t->hosts, (Hosts{{"127.0.0.1", 6379}, {"::1", 7000}, {"redis.internal", 6380}}));
  EXPECT_FALSE(t->url);
}

TEST(RedisUrl, TheUrlFormReadsAsItsAddress) {
  auto t = parse_redis_target("redis://127.0.0.1:6379");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->hosts, (Hosts{{"127.0.0.1", 6379}}));
  EXPECT_TRUE(t->password.empty());
  auto many = parse_redis_target("redis://a:1,redis://b:2");
  ASSERT_TRUE(many.is_ok()) << many.status().message();
  EXPECT_EQ(many->hosts, (Hosts{{"a", 1}, {"b", 2}}));
}

TEST(RedisUrl, UserinfoTlsAndSentinel) {
  auto t = parse_redis_target("rediss://app:p%40ss%3Aword@cache.example:6380/2");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->scheme, RedisTarget::Scheme::kTls);
  EXPECT_EQ(t->user, "app");
  EXPECT_EQ(t->password, "p@ss:word");
  EXPECT_EQ(t->db, 2u);
  auto anon = parse_redis_target("redis://:secret@h:1");
  ASSERT_TRUE(anon.is_ok());
  EXPECT_EQ(anon->user, "");
  EXPECT_EQ(anon->password, "secret");
  // A user alone: the password comes apart (ANTEROOM_REDIS_PASSWORD).
  auto user = parse_redis_target("redis://anteroom@h:1");
  ASSERT_TRUE(user.is_ok()) << user.status().message();
  EXPECT_EQ(user->user, "anteroom");
  EXPECT_EQ(user->password, "");
  auto s = parse_redis_target("redis-sentinel://s1:26379,s2:26379/mymaster");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->scheme, RedisTarget::Scheme::kSentinel);
  EXPECT_EQ(s->hosts, (Hosts{{"s1", 26379}, {"s2", 26379}}));
  EXPECT_EQ(s->master, "mymaster");
}

TEST(RedisUrl, WhatDoesNotReadIsNamedWithoutThePassword) {
  const char* bad[] = {"",
                       "redis://127.0.0.1",
                       "redis://host:0",
                       "redis://host:65536",
                       "http://host:1",
                       "redis://@host:1",
                       "redis://user:@host:1",
                       "redis://user:hunter2-%zz@host:1",
                       "redis://:hunter2@host:1/99",
                       "redis-sentinel://s1:26379",
                       "redis://a:1,rediss://b:2",
                       "redis://:hunter2@a:1,redis://b:2",
                       "redis://a:1,b:2",
                       "::1:6379",
                       "redis://ho st:1"};
  for (const char* text : bad) {
    auto t = parse_redis_target(text);
    ASSERT_FALSE(t.is_ok()) << text;
    EXPECT_EQ(t.status().message().rfind("--cluster: ", 0), 0u) << t.status().message();
    EXPECT_EQ(t.status().message().find("hunter2"), std::string::npos) << t.status().message();
  }
}

// Start-up takes redis:// and rediss:// with credentials and the TLS files, and refuses
// what does not fit together, naming the options and never the password.
TEST(RedisUrl, TheServerTakesRedisUrlsAndRefusesWhatDoesNotFit) {
  auto parse = [](std::vector<std::string> args) {
    args.insert(args.begin(), "anteroom");
    args.insert(args.end(), {"--token-secret", "a-token-secret-of-32-bytes-0123456789"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::string exit_now;
    return parse_options(static_cast<int>(argv.size()), argv.data(), &exit_now);
  };
  for (std::vector<std::string> good :
       {std::vector<std::string>{"--cluster", "redis://127.0.0.1:6379"},
        {"--cluster", "rediss://user:hunter2@127.0.0.1:6379"},
        {"--cluster", "rediss://127.0.0.1:6379", "--redis-tls-ca", "/x/ca.pem"},
        {"--cluster", "redis://127.0.0.1:6379", "--redis-password", "hunter2"},
        {"--cluster", "redis://anteroom@127.0.0.1:6379", "--redis-password", "hunter2"},
        {"--cluster", "redis-sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster"},
        {"--cluster", "redis-sentinel://127.0.0.1:26379/m", "--redis-tls-ca", "/x/ca.pem"}}) {
    auto o = parse(good);
    EXPECT_TRUE(o.is_ok()) << good[1] << ": " << o.status().message();
  }
  const std::pair<std::vector<std::string>, const char*> bad[] = {
      {{"--cluster", "redis://127.0.0.1:6379", "--redis-tls-ca", "/x/ca.pem"}, "need a rediss://"},
      {{"--cluster", "redis://:hunter2@127.0.0.1:6379/2"}, "database 0"},
      {{"--cluster", "redis://:hunter2@127.0.0.1:6379", "--redis-password", "hunter2"},
       "the password is given twice"},
      {{"--redis-password", "hunter2"}, "need --cluster"},
  };
  for (const auto& [args, why] : bad) {
    auto o = parse(args);
    ASSERT_FALSE(o.is_ok()) << args[1];
    EXPECT_NE(o.status().message().find(why), std::string::npos) << o.status().message();
    EXPECT_EQ(o.status().message().find("hunter2"), std::string::npos) << o.status().message();
  }
}

}  // namespace
}  // namespace anteroom::testing
