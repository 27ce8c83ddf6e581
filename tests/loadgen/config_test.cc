#include "loadgen/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace anteroom::loadgen {
namespace {

std::string parse(std::vector<const char*> args, Config* c) {
  args.insert(args.begin(), "anteroom-loadgen");
  return parse_config(static_cast<int>(args.size()), args.data(), c);
}

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("ANTEROOM_ADMIN_KEY"); }
};

TEST_F(ConfigTest, EachScenarioHasItsDefaults) {
  Config c;
  ASSERT_EQ(parse({"surge", "--admin-key", "k"}, &c), "");
  EXPECT_EQ(c.scenario, Scenario::kSurge);
  EXPECT_EQ(c.transport, Transport::kPoll);
  EXPECT_EQ(c.users, 1000u);
  EXPECT_EQ(c.target_port, 8080);
  ASSERT_EQ(parse({"scheduled", "--admin-key", "k"}, &c), "");
  EXPECT_EQ(c.transport, Transport::kSse);
  EXPECT_EQ(c.admit_per_second, 100u);
  ASSERT_EQ(parse({"seed-visit", "--admin-key", "k"}, &c), "");
  EXPECT_EQ(c.users, 20u);
  EXPECT_EQ(c.capacity, 10u);
  EXPECT_EQ(c.transport, Transport::kWs);
  ASSERT_EQ(parse({"protect", "--admin-key", "k", "--origin-capacity", "30"}, &c), "");
  EXPECT_EQ(c.capacity, 30u);  // the room admits what the origin can take
  ASSERT_EQ(parse({"hold", "--admin-key", "k"}, &c), "");
  EXPECT_EQ(c.transport, Transport::kSse);
  ASSERT_EQ(parse({"closed", "--target", "127.0.0.1:8081/x"}, &c), "");
  EXPECT_EQ(c.path, "/x");
  EXPECT_EQ(c.target_port, 8081);
  EXPECT_EQ(c.duration_s, 10);
}

TEST_F(ConfigTest, TargetsAreAListOfAnyHostsAndPorts) {
  Config c;
  ASSERT_EQ(parse({"surge", "--admin-key", "k", "--target",
                   "127.0.0.1:8081,http://[::1]:8082,node3.example:8083,10.0.0.1:80"},
                  &c),
            "");
  ASSERT_EQ(c.targets.size(), 4u);
  EXPECT_EQ(c.targets[1], (std::pair<std::string, uint16_t>{"::1", 8082}));
  EXPECT_EQ(c.targets[2], (std::pair<std::string, uint16_t>{"node3.example", 8083}));
  EXPECT_EQ(c.targets[3], (std::pair<std::string, uint16_t>{"10.0.0.1", 80}));
  EXPECT_EQ(c.target_host, "127.0.0.1");  // the first: admin requests go there
  EXPECT_EQ(c.target_port, 8081);
  EXPECT_NE(parse({"surge", "--admin-key", "k", "--target", "127.0.0.1:8081,"}, &c), "");
  EXPECT_NE(parse({"surge", "--admin-key", "k", "--target", "127.0.0.1:8081,node:0"}, &c), "");
}

TEST_F(ConfigTest, FlagsTakeSpaceOrEqualsValues) {
  Config c;
  ASSERT_EQ(parse({"surge", "--admin-key=k", "--users=5000", "--transport", "ws", "--capacity",
                   "250", "--arrival-rate=100.5", "--target", "http://127.0.0.2:9000",
                   "--processes", "3", "--sources=2", "--use", "verify", "--quiet"},
                  &c),
            "");
  EXPECT_EQ(c.admin_key, "k");
  EXPECT_EQ(c.users, 5000u);
  EXPECT_EQ(c.transport, Transport::kWs);
  EXPECT_EQ(c.capacity, 250u);
  EXPECT_DOUBLE_EQ(c.arrival_rate, 100.5);
  EXPECT_EQ(c.target_host, "127.0.0.2");
  EXPECT_EQ(c.target_port, 9000);
  EXPECT_EQ(c.processes, 3);
  EXPECT_EQ(c.sources, 2);
  EXPECT_EQ(c.use, UseVia::kVerify);
  EXPECT_FALSE(c.progress);
  EXPECT_NE(c.command.find("--users=5000"), std::string::npos);
  EXPECT_EQ(c.command.find("--admin-key=k"), std::string::npos);  // secrets stay out of reports
  ASSERT_EQ(parse({"surge", "--admin-key", "secret"}, &c), "");
  EXPECT_EQ(c.command.find("secret"), std::string::npos);
}

TEST_F(ConfigTest, TheAdminKeyMayComeFromTheEnvironment) {
  setenv("ANTEROOM_ADMIN_KEY", "from-env", 1);
  Config c;
  ASSERT_EQ(parse({"surge"}, &c), "");
  EXPECT_EQ(c.admin_key, "from-env");
  unsetenv("ANTEROOM_ADMIN_KEY");
}

TEST_F(ConfigTest, BadInputIsRefusedWithTheReason) {
  Config c;
  struct Case {
    std::vector<const char*> args;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{}, "missing scenario"},
      {{"stampede"}, "unknown scenario 'stampede'"},
      {{"surge", "--admin-key", "k", "--users", "many"}, "--users 'many': must be a whole number"},
      {{"surge", "--admin-key", "k", "--users", "0"}, "--users '0'"},
      {{"surge", "--admin-key", "k", "--abandon", "1.5"},
       "--abandon '1.5': must be a number from 0 to 1"},
      {{"surge", "--admin-key", "k", "--transport", "carrier-pigeon"}, "must be poll, sse or ws"},
      {{"surge", "--admin-key", "k", "--target", "127.0.0.1"}, "needs a port"},
      {{"surge", "--admin-key", "k", "--room", "bad room"}, "--room"},
      {{"surge", "--admin-key", "k", "--users"}, "--users needs a value"},
      {{"surge", "--admin-key", "k", "--colour", "red"}, "unknown option '--colour'"},
      {{"surge"}, "--admin-key"},
      {{"seed-visit", "--admin-key", "k", "--users", "30"}, "seed 000's fixed script"},
      {{"hold", "--admin-key", "k", "--transport", "poll"}, "sse or ws"},
      {{"scheduled", "--admin-key", "k", "--admit-per-second", "0"}, "--admit-per-second"},
  };
  for (const Case& k : cases) {
    std::string err = parse(k.args, &c);
    EXPECT_NE(err.find(k.says), std::string::npos) << "got: " << err << " want: " << k.says;
  }
}

TEST_F(ConfigTest, DescribeListsTheResolvedSettings) {
  Config c;
  ASSERT_EQ(parse({"surge", "--admin-key", "k", "--users", "42", "--transport", "sse"}, &c), "");
  bool users = false;
  bool transport = false;
  for (const auto& [k, v] : c.describe()) {
    users |= k == "users" && v == "42";
    transport |= k == "transport" && v == "sse";
    EXPECT_NE(k, "admin_key");  // never printed into reports
  }
  EXPECT_TRUE(users);
  EXPECT_TRUE(transport);
}

TEST_F(ConfigTest, HelpNamesEveryScenario) {
  Config c;
  ASSERT_EQ(parse({"--help"}, &c), "");
  EXPECT_TRUE(c.help);
  for (const char* s : {"seed-visit", "surge", "scheduled", "protect", "hold", "closed"}) {
    EXPECT_NE(usage().find(s), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace anteroom::loadgen

namespace anteroom::loadgen {
namespace {

TEST_F(ConfigTest, BotsDefaultsAndTheRoomsDefences) {
  Config c;
  ASSERT_EQ(parse({"bots", "--admin-key", "k"}, &c), "");
  EXPECT_EQ(c.scenario, Scenario::kBots);
  EXPECT_EQ(c.users, 200u);
  EXPECT_EQ(c.bots, 10u);
  EXPECT_EQ(c.transport, Transport::kSse);
  EXPECT_EQ(c.ip_joins_per_minute, 5u);
  EXPECT_EQ(c.pow_difficulty, 0);
  EXPECT_TRUE(c.baseline);
  EXPECT_EQ(c.admit_per_second, 13u);  // 1.25 x 10 arrivals a second, rounded up
  ASSERT_EQ(
      parse({"bots", "--admin-key", "k", "--pow-difficulty", "20", "--bots", "3", "--bot-solve",
             "1", "--no-baseline", "--arrival-rate", "4", "--admit-per-second", "7"},
            &c),
      "");
  EXPECT_EQ(c.pow_difficulty, 20);
  EXPECT_EQ(c.bots, 3u);
  EXPECT_EQ(c.bot_solve, 1.0);
  EXPECT_FALSE(c.baseline);
  EXPECT_EQ(c.admit_per_second, 7u);
  ASSERT_EQ(parse({"bots", "--admin-key", "k", "--pow-difficulty", "auto"}, &c), "");
  EXPECT_EQ(c.pow_difficulty, Config::kPowAuto);
}

TEST_F(ConfigTest, BotsBadSettingsAreRefusedClearly) {
  Config c;
  EXPECT_EQ(parse({"bots", "--admin-key", "k", "--pow-difficulty", "33"}, &c),
            "--pow-difficulty '33': must be a whole number of bits from 0 to 32, or auto");
  EXPECT_NE(parse({"bots", "--admin-key", "k", "--pow-difficulty", "-1"}, &c), "");
  EXPECT_NE(parse({"bots", "--admin-key", "k", "--bot-solve", "1.5"}, &c), "");
  EXPECT_NE(parse({"bots", "--admin-key", "k", "--bots", "251"}, &c), "");
  EXPECT_NE(parse({"bots", "--admin-key", "k", "--transport", "ws"}, &c).find("poll or sse"),
            std::string::npos);
  EXPECT_NE(parse({"bots", "--admin-key", "k", "--users", "60001"}, &c).find("at most 60000"),
            std::string::npos);
  EXPECT_NE(parse({"bots", "--admin-key", "k", "--arrival-rate", "0"}, &c).find("above 0"),
            std::string::npos);
  EXPECT_EQ(parse({"surge", "--admin-key", "k", "--pow-difficulty", "8"}, &c),
            "--pow-difficulty and --ip-joins-per-minute are the bots scenario's");
}

}  // namespace
}  // namespace anteroom::loadgen
