// The command line: the input split at NUL bytes into argv after "anteroom", through
// parse_options (Boost.Program_options, then every check), and on success what main reads
// next (host, port, the --cluster list). The environment is not fuzzed: it stays as the
// process has it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/app/options.h"
#include "server/app/redis_url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace anteroom;
  std::vector<std::string> args{"anteroom"};
  std::string arg;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(std::move(arg));
      arg.clear();
    } else {
      arg += static_cast<char>(data[i]);
    }
  }
  if (size != 0) args.push_back(std::move(arg));
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string exit_now;
  auto parsed = parse_options(static_cast<int>(args.size()), argv.data(), &exit_now);
  if (parsed.is_ok() && exit_now.empty()) {
    (void)parsed->host();
    (void)parsed->port();
    (void)parse_redis_target(parsed->cluster);
  }
  return 0;
}
