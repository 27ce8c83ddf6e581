// Flags as rows (server/app/flag_rows.cc): --help, the --config file, the environment and the
// checks all read the one table, so each row's name, bounds, choices and secrecy hold on
// every path a value can come by.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "server/app/flag_rows.h"
#include "server/app/options.h"

namespace anteroom {
namespace {

struct Parsed {
  Result<Options> options;
  std::string exit_now;
};

Parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "anteroom");
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (std::string& a : args) argv.push_back(a.data());
  std::string exit_now;
  Result<Options> o = parse_options(static_cast<int>(argv.size()), argv.data(), &exit_now);
  return {std::move(o), exit_now};
}

std::string error_of(const std::vector<std::string>& args) {
  Parsed p = parse(args);
  EXPECT_FALSE(p.options.is_ok()) << args.back();
  return p.options.is_ok() ? std::string() : p.options.status().message();
}

// A file holding `text`, removed with the test.
class FlagFile {
 public:
  explicit FlagFile(const std::string& text)
      : path_((std::filesystem::temp_directory_path() /
               ("anteroom-rows-" + std::to_string(getpid()) + ".conf"))
                  .string()) {
    std::ofstream(path_) << text;
  }
  ~FlagFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool is_number(const FlagRow& row) {
  return std::holds_alternative<unsigned& (*)(Options&)>(row.target) ||
         std::holds_alternative<uint64_t& (*)(Options&)>(row.target);
}

TEST(FlagRows, HelpListsEveryRowAndEveryVariable) {
  Parsed p = parse({"--help"});
  ASSERT_TRUE(p.options.is_ok());
  for (const FlagRow& row : flag_rows()) {
    EXPECT_NE(p.exit_now.find("--" + std::string(row.name) + " "), std::string::npos) << row.name;
  }
  EXPECT_NE(p.exit_now.find("every one but --help also from its ANTEROOM_* variable"),
            std::string::npos);
  EXPECT_EQ(find_flag("no-such-flag"), nullptr);
  ASSERT_NE(find_flag("owner-tick"), nullptr);
}

// Each number's bounds refuse the value just outside them, from the command line and from
// the file alike, and take the values on them.
TEST(FlagRows, EveryNumbersBoundsHoldOnTheCommandLineAndInTheFile) {
  size_t bounded = 0;
  for (const FlagRow& row : flag_rows()) {
    if (!is_number(row) || (row.min == 0 && row.max == UINT64_MAX)) continue;
    ++bounded;
    const std::string flag = "--" + std::string(row.name);
    std::vector<uint64_t> outside, inside = {row.min};
    if (row.min > 0) outside.push_back(row.min - 1);
    if (row.max != UINT64_MAX) {
      outside.push_back(row.max + 1);
      inside.push_back(row.max);
    }
    for (uint64_t v : outside) {
      const std::string said = error_of({flag, std::to_string(v)});
      EXPECT_EQ(said.rfind(flag + " must be ", 0), 0U) << said;
      FlagFile file(std::string(row.name) + " = " + std::to_string(v) + "\n");
      const std::string from_file = error_of({"--config", file.path()});
      EXPECT_EQ(from_file, file.path() + ":1: " + said);
    }
    for (uint64_t v : inside) {
      // --operator-reserve must stay under --max-connections: give it room.
      Parsed p = parse({"--operator-reserve", "0", flag, std::to_string(v)});
      EXPECT_TRUE(p.options.is_ok()) << flag << " " << v << ": " << p.options.status().message();
    }
  }
  EXPECT_GE(bounded, 10U);
}

TEST(FlagRows, EveryChoiceIsTheOnlyWayIn) {
  size_t choices = 0;
  for (const FlagRow& row : flag_rows()) {
    if (row.choices == nullptr) continue;
    ++choices;
    const std::string flag = "--" + std::string(row.name);
    EXPECT_EQ(error_of({flag, "nonsense"}), flag + " must be " + said_choices(row.choices));
  }
  EXPECT_EQ(choices, 3U);  // appendfsync, token-alg, room-admission
  EXPECT_EQ(said_choices("a|b|c"), "a, b or c");
  EXPECT_EQ(said_choices("a"), "a");
  EXPECT_TRUE(is_choice("always|everysec|no", "no"));
  EXPECT_FALSE(is_choice("always|everysec|no", "eve"));
}

// A flag is named whole: a beginning of one (which program_options would guess) is unknown.
TEST(FlagRows, AnAbbreviatedFlagIsRefused) {
  EXPECT_TRUE(parse({"--threads", "2"}).options.is_ok());
  const std::string err = error_of({"--thr", "2"});
  EXPECT_NE(err.find("thr"), std::string::npos) << err;
  EXPECT_FALSE(parse({"--no-persist"}).options.is_ok());
}

// A secret row's weak value is refused naming the flag, and its value is never in the error.
TEST(FlagRows, SecretsAreCheckedAndNeverShown) {
  size_t secrets = 0;
  for (const FlagRow& row : flag_rows()) {
    if (!row.secret) continue;
    ++secrets;
    const std::string flag = "--" + std::string(row.name);
    if (row.min_secret != 0) {
      const std::string said = error_of({flag, "hunter2"});
      EXPECT_EQ(said.rfind(flag, 0), 0U) << said;
      EXPECT_EQ(said.find("hunter2"), std::string::npos) << said;
    }
    FlagFile file(std::string(row.name) + " = hunter2%x\n" + row.name + " = again\n");
    const std::string twice = error_of({"--config", file.path()});
    EXPECT_EQ(twice.find("hunter2"), std::string::npos) << twice;
  }
  EXPECT_EQ(secrets, 8U);  // with cluster and redis-password
}

TEST(FlagRows, SwitchesAndModesReachTheirFields) {
  Parsed p = parse({"--no-persistence", "--metrics-public", "--room-admission", "manual"});
  ASSERT_TRUE(p.options.is_ok()) << p.options.status().message();
  EXPECT_FALSE(p.options->persistence);
  EXPECT_TRUE(p.options->room_metrics);
  EXPECT_TRUE(p.options->metrics_public);
  EXPECT_EQ(p.options->room.admission, AdmissionMode::kManual);
  Parsed defaults = parse({});
  ASSERT_TRUE(defaults.options.is_ok());
  EXPECT_TRUE(defaults.options->persistence);
  EXPECT_FALSE(defaults.options->metrics_public);
  EXPECT_EQ(defaults.options->room.admission, AdmissionMode::kAuto);
}

TEST(FlagRows, EveryVariableIsRead) {
  for (const FlagRow& row : flag_rows()) {
    if (!is_number(row) || row.max == UINT64_MAX) continue;
    // A number past its bounds, from the variable: refused naming the flag.
    const std::string variable = variable_of(row);
    setenv(variable.c_str(), std::to_string(row.max + 1).c_str(),
           1);  // NOLINT(concurrency-mt-unsafe)
    const std::string said = error_of({});
    unsetenv(variable.c_str());  // NOLINT(concurrency-mt-unsafe): no other thread runs
    EXPECT_EQ(said.rfind("--" + std::string(row.name) + " must be", 0), 0U) << said;
  }
  setenv("ANTEROOM_LISTEN", "127.0.0.1:9999", 1);  // NOLINT(concurrency-mt-unsafe)
  Parsed p = parse({});
  unsetenv("ANTEROOM_LISTEN");  // NOLINT(concurrency-mt-unsafe)
  ASSERT_TRUE(p.options.is_ok());
  EXPECT_EQ(p.options->listen, "127.0.0.1:9999");
  // Every flag has its variable (a container sets them): a switch, a mode, a room default.
  setenv("ANTEROOM_NO_PERSISTENCE", "true", 1);    // NOLINT(concurrency-mt-unsafe)
  setenv("ANTEROOM_ROOM_ADMISSION", "manual", 1);  // NOLINT(concurrency-mt-unsafe)
  setenv("ANTEROOM_ROOM_CAPACITY", "77", 1);       // NOLINT(concurrency-mt-unsafe)
  setenv("ANTEROOM_NOT_A_FLAG", "whatever", 1);    // NOLINT(concurrency-mt-unsafe)
  // A repeatable flag's variable lists several, comma-separated.
  setenv("ANTEROOM_TRUSTED_PROXY", "10.0.0.0/8, 192.168.1.1", 1);  // NOLINT(concurrency-mt-unsafe)
  Parsed q = parse({});
  for (const char* v :
       {"ANTEROOM_NO_PERSISTENCE", "ANTEROOM_ROOM_ADMISSION", "ANTEROOM_ROOM_CAPACITY",
        "ANTEROOM_NOT_A_FLAG", "ANTEROOM_TRUSTED_PROXY"}) {
    unsetenv(v);  // NOLINT(concurrency-mt-unsafe)
  }
  ASSERT_TRUE(q.options.is_ok()) << q.options.status().message();
  EXPECT_FALSE(q.options->persistence);
  EXPECT_EQ(q.options->room.admission, AdmissionMode::kManual);
  EXPECT_EQ(q.options->room.capacity, 77u);
  EXPECT_EQ(q.options->trusted_proxies, (std::vector<std::string>{"10.0.0.0/8", "192.168.1.1"}));
  EXPECT_NE(error_of({"--trusted-proxy", "10.0.0.0/8,nonsense"}).find("'nonsense'"),
            std::string::npos);
  EXPECT_EQ(variable_of(*find_flag("fast-pass-secret")), "ANTEROOM_FAST_PASS_SECRET");
  EXPECT_EQ(variable_of(*find_flag("help")), "");
}

}  // namespace
}  // namespace anteroom
