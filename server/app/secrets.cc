#include "server/app/secrets.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "engine/hex.h"

namespace anteroom {
namespace {

std::string random_hex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    return {};
  }
  return to_hex(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
}

// Reads DIR/name, or creates it with a fresh value. *created tells which.
Result<std::string> read_or_create(const std::string& dir, const char* name, bool* created) {
  const std::string path = dir + "/" + name;
  std::ifstream in(path);
  if (in) {
    std::stringstream s;
    s << in.rdbuf();
    std::string v = s.str();
    while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ')) v.pop_back();
    if (v.empty()) return Status(Code::kInvalidArgument, path + " is empty");
    *created = false;
    return v;
  }
  std::string v = random_hex(32);
  if (v.empty()) return Status(Code::kUnavailable, "no randomness for " + path);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    return Status(
        Code::kUnavailable,
        "cannot create " + path + ": " + std::error_code(errno, std::generic_category()).message());
  }
  std::string line = v + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return Status(Code::kUnavailable, "cannot write " + path);
  *created = true;
  return v;
}

}  // namespace

std::string weak_secret(std::string_view what, std::string_view value, size_t min_bytes) {
  if (value.size() < min_bytes) {
    return std::string(what) + " is " + std::to_string(value.size()) +
           " bytes; it must be at least " + std::to_string(min_bytes);
  }
  bool seen[256] = {};
  size_t distinct = 0;
  for (unsigned char c : value) distinct += !std::exchange(seen[c], true);
  if (distinct < 8) {
    return std::string(what) + " has " + std::to_string(distinct) +
           " different characters; a secret needs at least 8";
  }
  // HTTP drops white space around a header's value, so such a key could never be matched.
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  if (!value.empty() && (blank(value.front()) || blank(value.back()))) {
    return std::string(what) +
           " begins or ends with white space, which HTTP drops from a header: no request "
           "could carry it";
  }
  return {};
}

Result<Secrets> load_secrets(const std::string& data_dir, std::string token_secret,
                             std::string admin_key) {
  Secrets s;
  if (token_secret.empty() || admin_key.empty()) {
    if (::mkdir(data_dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status(Code::kUnavailable,
                    "cannot create data directory " + data_dir + ": " +
                        std::error_code(errno, std::generic_category()).message());
    }
  }
  bool created = false;
  if (token_secret.empty()) {
    auto v = read_or_create(data_dir, "token-secret", &created);
    if (!v.is_ok()) return v.status();
    token_secret = v.value();
  }
  if (admin_key.empty()) {
    auto v = read_or_create(data_dir, "admin-key", &created);
    if (!v.is_ok()) return v.status();
    admin_key = v.value();
    s.admin_key_generated = created;
  }
  // Generated ones are 64 hex characters; a short or repetitive one given by hand is
  // guessable.
  const char* generate = " (leave it out and one is generated in the data directory)";
  if (std::string why = weak_secret("the token secret", token_secret, kMinTokenSecret);
      !why.empty()) {
    return Status(Code::kInvalidArgument, why + generate);
  }
  if (std::string why = weak_secret("the admin key", admin_key, kMinAdminKey); !why.empty()) {
    return Status(Code::kInvalidArgument, why + generate);
  }
  s.token_secret = std::move(token_secret);
  s.admin_key = std::move(admin_key);
  return s;
}

}  // namespace anteroom
