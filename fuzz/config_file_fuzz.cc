// A --config file's bytes: read as anteroom reads them at start, through parse_options with
// `--config FILE` (the reader in server/app/config_file.cc, every flag stored and checked
// as config_options.cc does, every [room NAME] section checked as declared_rooms.cc does).
// The file is a memfd, so the target writes nothing to disk. Rules checked beyond "does
// not crash": text the reader refuses never gives options, a refusal says why, and a file
// that gives options declares only rooms the reader saw.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/app/config_file.h"
#include "server/app/options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace anteroom;
  if (size > kMaxConfigBytes) return 0;
  const int fd = memfd_create("anteroom-config-fuzz", MFD_CLOEXEC);
  if (fd < 0) __builtin_trap();  // the target cannot run at all
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) __builtin_trap();
    done += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto read = read_config_text(path, text);

  std::vector<std::string> args{"anteroom", "--config", path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string exit_now;
  const auto parsed = parse_options(static_cast<int>(args.size()), argv.data(), &exit_now);
  ::close(fd);

  if (!read.is_ok() && parsed.is_ok()) __builtin_trap();  // refused text gave options
  if (!parsed.is_ok() && parsed.status().message().empty()) __builtin_trap();
  if (parsed.is_ok()) {
    (void)parsed->host();
    (void)parsed->port();
    // Every declared room comes from a [room NAME] section of the text.
    for (const auto& room : parsed->rooms) {
      if (read->room_lines.count(room.name) == 0) __builtin_trap();
    }
  }
  return 0;
}
