// The --config file (server/app/config_file.cc, config_options.cc): every flag as
// `name = value`, rooms in [room NAME] sections, the command line and ANTEROOM_* variables
// over the file, and every error naming the file and the line.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "server/app/config_file.h"
#include "server/app/options.h"

namespace anteroom {
namespace {

// A config file in a fresh temporary directory, removed with the test.
class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("anteroom-config-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "anteroom.conf").string();
  }
  void TearDown() override {
    unsetenv("ANTEROOM_THREADS");  // NOLINT(concurrency-mt-unsafe): no other thread runs
    std::filesystem::remove_all(dir_);
  }

  // parse_options on `--config FILE` (holding `text`) and `flags`.
  Result<Options> parse(const std::string& text, std::vector<std::string> flags = {}) {
    std::ofstream(path_) << text;
    std::vector<std::string> args = {"anteroom", "--config", path_};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    argv.reserve(args.size());
    for (std::string& a : args) argv.push_back(a.data());
    std::string exit_now;
    return parse_options(static_cast<int>(argv.size()), argv.data(), &exit_now);
  }
  // The error of parsing `text`, which must fail.
  std::string error(const std::string& text, std::vector<std::string> flags = {}) {
    auto o = parse(text, std::move(flags));
    EXPECT_FALSE(o.is_ok()) << text;
    return o.is_ok() ? std::string() : o.status().message();
  }
  std::string at(int line) const { return path_ + ":" + std::to_string(line) + ": "; }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(ConfigFileTest, GoodFileSetsFlagsAndRooms) {
  auto o = parse(
      "# anteroom\n"
      "\n"
      "listen = 0.0.0.0:9000\n"
      "  threads=3   # a comment after a space\n"
      "admin-key = \"key#with-hash and spaces\"  # quoted: taken as it is\n"
      "verify-key = verify-key-0123456789#not-a-comment\n"
      "no-persistence = true\n"
      "no-room-metrics = false\n"
      "trusted-proxy = 10.0.0.0/8\n"
      "trusted-proxy = 127.0.0.1\n"
      "room-capacity = 50\n"
      "room-admission = manual\n"
      "access-log = -\n"
      "\n"
      "[room sale]\n"
      "capacity = 100\n"
      "admission = auto\n"
      "admit_per_second = 20\n"
      "mode = queue_all\n"
      "pow_difficulty = auto\n"
      "trust_user = true\n"
      "[room  other_room ]   # spaces around the name\n");
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  EXPECT_EQ(o->listen, "0.0.0.0:9000");
  EXPECT_EQ(o->threads, 3u);
  EXPECT_EQ(o->admin_key, "key#with-hash and spaces");
  EXPECT_EQ(o->verify_key, "verify-key-0123456789#not-a-comment");
  EXPECT_FALSE(o->persistence);
  EXPECT_TRUE(o->room_metrics);
  EXPECT_EQ(o->trusted_proxies, (std::vector<std::string>{"10.0.0.0/8", "127.0.0.1"}));
  EXPECT_EQ(o->room.capacity, 50u);
  EXPECT_EQ(o->room.admission, AdmissionMode::kManual);
  EXPECT_EQ(o->access_log, "-");
  ASSERT_EQ(o->rooms.size(), 2u);
  EXPECT_EQ(o->rooms[0].name, "sale");
  EXPECT_EQ(o->rooms[0].where, at(15));
  EXPECT_EQ(boost::json::parse(o->rooms[0].settings),
            boost::json::parse(R"({"capacity":100,"admission":"auto","admit_per_second":20,
                                   "mode":"queue_all","pow_difficulty":"auto","trust_user":true})"));
  EXPECT_EQ(o->rooms[1].name, "other_room");
  EXPECT_EQ(o->rooms[1].settings, "{}");
}

TEST_F(ConfigFileTest, WithoutTheFileTheDefaultsStand) {
  auto o = parse("# nothing but a comment\n");
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  EXPECT_EQ(o->listen, Options{}.listen);
  EXPECT_TRUE(o->persistence);
  EXPECT_TRUE(o->rooms.empty());
}

TEST_F(ConfigFileTest, UnknownKeyNamesFileAndLine) {
  EXPECT_EQ(error("threads = 2\n# x\n\nlistne = 127.0.0.1:1\n"), at(4) + "unknown key \"listne\"");
  // What only the command line may say.
  EXPECT_EQ(error("config = other.conf\n"), at(1) + "unknown key \"config\"");
  EXPECT_EQ(error("\nhelp = true\n"), at(2) + "unknown key \"help\"");
}

TEST_F(ConfigFileTest, BadValueNamesFileAndLine) {
  EXPECT_EQ(error("listen = 127.0.0.1:0\nthreads = many\n"),
            at(2) + "\"many\" is not a valid value for threads");
  EXPECT_EQ(error("max-connections = -5\n"),
            at(1) + "\"-5\" is not a valid value for max-connections");
  EXPECT_EQ(error("no-persistence = maybe\n"),
            at(1) + "\"maybe\" is not a valid value for no-persistence");
  // Values that read but do not pass the checks of the options, told at their line.
  EXPECT_EQ(error("threads = 1\nlisten = nowhere\n"),
            at(2) + "--listen must be HOST:PORT, e.g. 127.0.0.1:8080");
  EXPECT_EQ(error("\n\nappendfsync = sometimes\n"),
            at(3) + "--appendfsync must be always, everysec or no");
  EXPECT_EQ(error("idle-timeout = 0\n"), at(1) + "--idle-timeout must be >= 1 s");
  EXPECT_EQ(error("room-admission = sometimes\n"),
            at(1) + "--room-admission must be auto or manual");
  EXPECT_EQ(error("trusted-proxy = 10.0.0.0/8\ntrusted-proxy = 10.0.0.0/99\n"),
            at(2) + "--trusted-proxy '10.0.0.0/99' is not an address or a CIDR");
  EXPECT_EQ(error("threads = 1\nthreads = 2\n"), at(2) + "threads is set twice (first on line 1)");
  // Secrets too short or too plain, at their line; the data dir's are checked at start.
  EXPECT_EQ(error("threads = 1\nadmin-key = short\n"),
            at(2) + "--admin-key is 5 bytes; it must be at least 16");
  EXPECT_EQ(error("token-secret = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"),
            at(1) + "--token-secret has 1 different characters; a secret needs at least 8");
  EXPECT_EQ(error("verify-key = 0123456789\n"),
            at(1) + "--verify-key is 10 bytes; it must be at least 16");
}

// The second review's finding: an error echoed what was typed, so a misspelt credential
// flag (`--admin-ky=SECRET`) or a credential that did not read put the secret in the log.
// Now an unknown flag is named without its value, and a credential's value is never shown.
TEST_F(ConfigFileTest, ErrorsNeverShowACredential) {
  const std::string secret = "s3cr3t-Value-0123456789";
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{"--admin-ky=" + secret},
                                             {"--redis-password=" + secret},
                                             {"--cluster=redis://:" + secret + "@"}}) {
    const std::string why = error("", flags);
    EXPECT_FALSE(why.empty()) << flags[0];
    EXPECT_EQ(why.find(secret), std::string::npos) << why;
  }
  EXPECT_EQ(error("", {"--admin-ky=" + secret}), "unrecognised option '--admin-ky'");
  // A flag that is not a credential still shows what did not read.
  EXPECT_NE(error("", {"--threads=many"}).find("many"), std::string::npos);
  // In the file: an unknown key is named alone, a credential's value hidden.
  EXPECT_EQ(error("admin-ky = " + secret + "\n"), at(1) + "unknown key \"admin-ky\"");
  const std::string file_why = error("redis-wait = " + secret + "\n");
  EXPECT_NE(file_why.find(secret), std::string::npos) << "redis-wait is no credential";
}

TEST_F(ConfigFileTest, ByteOrderMarkAndShortNames) {
  auto o = parse("\xEF\xBB\xBFthreads = 3\n");
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  EXPECT_EQ(o->threads, 3u);
  EXPECT_EQ(error("-h = 1\n"), at(1) + "unknown key \"-h\"");
  EXPECT_EQ(error("--listen = 127.0.0.1:1\n"), at(1) + "unknown key \"--listen\"");
  std::string many;
  for (int i = 0; i <= 10'000; ++i) many += "[room r" + std::to_string(i) + "]\n";
  EXPECT_EQ(error(many), at(10'001) + "more than 10000 rooms (a server holds at most that many)");
}

// Two start-up checks the review asked for: a thread count that cannot start, and two
// listeners on port 0 (each gets a port of its own, so they do not clash).
TEST_F(ConfigFileTest, ThreadsBoundedAndTwoListenersOnPortZero) {
  EXPECT_EQ(error("", {"--threads", "100000"}), "--threads must be at most 1024");
  EXPECT_TRUE(parse("", {"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}).is_ok());
  EXPECT_EQ(error("", {"--listen", "127.0.0.1:80", "--admin-listen", "127.0.0.1:80"}),
            "--admin-listen must differ from --listen");
}

TEST_F(ConfigFileTest, BadLinesNameFileAndLine) {
  EXPECT_EQ(error("threads 2\n"), at(1) +
                                      "expected name = value, a [room NAME] section, a # "
                                      "comment or a blank line");
  EXPECT_EQ(error("= 2\n"), at(1) +
                                "expected name = value, a [room NAME] section, a # comment "
                                "or a blank line");
  EXPECT_EQ(error("admin-key = \"unterminated\n"),
            at(1) + "a quoted value must end with \" (then only a # comment)");
  EXPECT_EQ(error("[rooms x]\n"),
            at(1) + "unknown section [rooms x]; the only section is [room NAME]");
  EXPECT_EQ(error("[room x\n"), at(1) + "a section is written [room NAME]");
  EXPECT_EQ(error(std::string("threads = 1\0", 12) + "\n"), at(1) + "holds a NUL byte");
  auto endless = read_config_file("/dev/zero");
  ASSERT_FALSE(endless.is_ok());
  EXPECT_EQ(endless.status().message(), "cannot read /dev/zero: larger than 1 MiB");
  auto folder = read_config_file(dir_.string());
  ASSERT_FALSE(folder.is_ok());
  EXPECT_EQ(folder.status().message(), "cannot read " + dir_.string() + ": it is a directory");
  const std::string fifo = (dir_ / "conf.fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);  // read, it would wait for a writer for ever
  auto piped = read_config_file(fifo);
  ASSERT_FALSE(piped.is_ok());
  EXPECT_EQ(piped.status().message(), "cannot read " + fifo + ": not a regular file");
  auto absent = read_config_file((dir_ / "absent.conf").string());
  ASSERT_FALSE(absent.is_ok());
  EXPECT_EQ(absent.status().message(),
            "cannot read " + (dir_ / "absent.conf").string() + ": No such file or directory");
}

TEST_F(ConfigFileTest, BadRoomSettingNamesFileAndLine) {
  EXPECT_EQ(error("[room sale]\ncapacity = 10\nmax_waiting = -1\n"),
            at(3) + "room sale: max_waiting must be an integer from 0 to 100000000");
  EXPECT_EQ(error("[room sale]\n\ncapx = 1\n"), at(3) + "room sale: unknown field 'capx'");
  EXPECT_EQ(error("[room sale]\nmode = sideways\n"),
            at(2) +
                "room sale: mode must be one of \"fifo\", \"random\", \"passthrough\", \"reject\", "
                "\"queue_all\"");
  EXPECT_EQ(error("[room sale]\ntrust_user = yes\n"),
            at(2) + "room sale: trust_user must be true or false");
  // Checks across fields: told at the line of the field the check names.
  EXPECT_EQ(error("[room sale]\nadmit_per_second = 5\nadmission = manual\n"),
            at(2) + "room sale: admit_per_second applies to auto admission only; set it to 0");
  EXPECT_EQ(error("[room sale]\nallowed_ttl_seconds = 0\n"),
            at(2) + "room sale: allowed_ttl_seconds must be between 1 and 604800");
  EXPECT_EQ(error("[room sale]\ncapacity = 1\ncapacity = 2\n"),
            at(3) + "room sale: capacity is set twice (first on line 2)");
  EXPECT_EQ(error("[room sale]\n[room sale]\n"),
            at(2) + "room sale is declared twice (first on line 1)");
  EXPECT_EQ(error("[room bad/name]\n"),
            at(1) + "room names are 1-64 characters of A-Z a-z 0-9 _ -, not \"bad/name\"");
  // A room checked against the room defaults the file sets.
  EXPECT_EQ(error("room-admission = manual\n[room sale]\nadmit_per_second = 5\n"),
            at(3) + "room sale: admit_per_second applies to auto admission only; set it to 0");
}

TEST_F(ConfigFileTest, CommandLineWinsOverFile) {
  auto o = parse("threads = 3\nlisten = 127.0.0.1:7000\ntrusted-proxy = 10.0.0.0/8\n",
                 {"--threads", "5", "--trusted-proxy", "192.168.0.0/16"});
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  EXPECT_EQ(o->threads, 5u);
  EXPECT_EQ(o->listen, "127.0.0.1:7000");
  EXPECT_EQ(o->trusted_proxies, std::vector<std::string>{"192.168.0.0/16"});
  // A switch on the command line stands whatever the file says.
  auto off = parse("no-persistence = false\n", {"--no-persistence"});
  ASSERT_TRUE(off.is_ok()) << off.status().message();
  EXPECT_FALSE(off->persistence);
  // A value the command line overrides is still checked: the file is wrong.
  EXPECT_EQ(error("threads = many\n", {"--threads", "2"}),
            at(1) + "\"many\" is not a valid value for threads");
  // A bad value on the command line is the command line's, not the file's.
  EXPECT_EQ(error("threads = 3\n", {"--listen", "nowhere"}),
            "--listen must be HOST:PORT, e.g. 127.0.0.1:8080");
}

TEST_F(ConfigFileTest, EnvironmentWinsOverFile) {
  setenv("ANTEROOM_THREADS", "4", 1);  // NOLINT(concurrency-mt-unsafe): no other thread runs
  auto o = parse("threads = 3\nstream-queue = 7\n");
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  EXPECT_EQ(o->threads, 4u);
  EXPECT_EQ(o->stream_queue_limit, 7u);
  // The command line wins over both.
  auto c = parse("threads = 3\n", {"--threads", "6"});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->threads, 6u);
}

// A negative number for a flag that counts is refused wherever it comes from, not read as
// 4294967295 (Boost's reading of "-1" as unsigned).
TEST_F(ConfigFileTest, NegativeCountsAreRefusedOnTheCommandLineAndInTheEnvironment) {
  EXPECT_EQ(error("", {"--stream-queue", "-1"}),
            "the argument ('-1') for option '--stream-queue' is invalid");
  EXPECT_EQ(error("", {"--room-capacity=-5"}),
            "the argument ('-5') for option '--room-capacity' is invalid");
  setenv("ANTEROOM_THREADS", "-2", 1);  // NOLINT(concurrency-mt-unsafe): no other thread runs
  EXPECT_EQ(error(""), "the argument ('-2') for ANTEROOM_THREADS (--threads) is invalid");
  auto shadowed = parse("", {"--threads", "3"});  // the command line wins: not read
  ASSERT_TRUE(shadowed.is_ok()) << shadowed.status().message();
  EXPECT_EQ(shadowed->threads, 3u);
  unsetenv("ANTEROOM_THREADS");  // NOLINT(concurrency-mt-unsafe): no other thread runs
  EXPECT_EQ(error("stream-queue = -1\n"), at(1) + "\"-1\" is not a valid value for stream-queue");
  // The one 64-bit count too, which Boost wraps the same way.
  EXPECT_EQ(error("", {"--room-max-waiting=-18446744073709551516"}),
            "the argument ('-18446744073709551516') for option '--room-max-waiting' is invalid");
  EXPECT_EQ(error("room-max-waiting = -1\n"),
            at(1) + "\"-1\" is not a valid value for room-max-waiting");
  auto o = parse("", {"--stream-queue", "7"});  // what stays good
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  EXPECT_EQ(o->stream_queue_limit, 7u);
}

// deploy/anteroom.conf, the example shipped: it reads, declares its room, and names every
// flag --help lists (commented out or not), so it cannot fall behind the flags.
TEST(ConfigExample, ReadsAndNamesEveryFlag) {
  const std::string example = std::string(ANTEROOM_SOURCE_DIR) + "/deploy/anteroom.conf";
  std::vector<std::string> args = {"anteroom", "--config", example};
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (std::string& a : args) argv.push_back(a.data());
  std::string exit_now;
  auto o = parse_options(static_cast<int>(argv.size()), argv.data(), &exit_now);
  ASSERT_TRUE(o.is_ok()) << o.status().message();
  ASSERT_EQ(o->rooms.size(), 1u);
  EXPECT_EQ(o->rooms[0].name, "shop");
  EXPECT_EQ(o->data_dir, "/var/lib/anteroom");

  std::string help;
  char name[] = "anteroom", flag[] = "--help";
  char* help_argv[] = {name, flag};
  ASSERT_TRUE(parse_options(2, help_argv, &help).is_ok());
  std::ifstream in(example);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t flags = 0;
  for (size_t at = help.find("\n  --"); at != std::string::npos; at = help.find("\n  --", at + 1)) {
    const size_t start = at + 5;
    const std::string key = help.substr(start, help.find_first_of(" \n", start) - start);
    if (key == "help" || key == "config") continue;
    ++flags;
    const bool named = text.find("\n" + key + " = ") != std::string::npos ||
                       text.find("\n#" + key + " = ") != std::string::npos;
    EXPECT_TRUE(named) << key << " is not in deploy/anteroom.conf";
  }
  EXPECT_GT(flags, 40u);
}

}  // namespace
}  // namespace anteroom
