#include "server/app/config_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "engine/model.h"

namespace anteroom {

std::string ConfigFile::where(unsigned line) const {
  return path + ":" + std::to_string(line) + ": ";
}

namespace {

constexpr std::string_view kSpace = " \t\r";

std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

// What follows a value or a section: nothing, or a comment after a space.
bool only_comment(std::string_view rest) {
  rest = trim(rest);
  return rest.empty() || rest.front() == '#';
}

// An unquoted value ends at a '#' that follows a space or a tab (a comment).
std::string_view strip_comment(std::string_view value) {
  for (size_t i = 1; i < value.size(); ++i) {
    if (value[i] == '#' && (value[i - 1] == ' ' || value[i - 1] == '\t')) {
      return trim(value.substr(0, i));
    }
  }
  return value.starts_with('#') ? std::string_view{} : value;
}

bool valid_key(std::string_view key) {
  return !key.empty() &&
         key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") == std::string_view::npos;
}

// `[room NAME]`: adds the room; else why not.
std::string read_section(std::string_view text, unsigned line, ConfigFile* f) {
  const size_t close = text.find(']');
  if (close == std::string_view::npos || !only_comment(text.substr(close + 1))) {
    return "a section is written [room NAME]";
  }
  std::string_view inside = trim(text.substr(1, close - 1));
  if (!inside.starts_with("room") || inside.size() < 5 ||
      kSpace.find(inside[4]) == std::string_view::npos) {
    return "unknown section [" + std::string(inside) + "]; the only section is [room NAME]";
  }
  const std::string name(trim(inside.substr(4)));
  if (!valid_room_name(name)) {
    return "room names are 1-64 characters of A-Z a-z 0-9 _ -, not \"" + name + "\"";
  }
  if (auto [at, fresh] = f->room_lines.emplace(name, line); !fresh) {
    return "room " + name + " is declared twice (first on line " + std::to_string(at->second) + ")";
  }
  if (f->rooms.size() >= kMaxConfigRooms) {
    return "more than " + std::to_string(kMaxConfigRooms) +
           " rooms (a server holds at most that many)";
  }
  f->rooms.push_back({line, name, {}});
  return "";
}

// `name = value`: the entry; else why not (in *why).
ConfigEntry read_entry(std::string_view text, unsigned line, std::string* why) {
  ConfigEntry e;
  e.line = line;
  const size_t eq = text.find('=');
  const std::string_view key = trim(text.substr(0, eq));
  if (eq == std::string_view::npos || !valid_key(key)) {
    *why = "expected name = value, a [room NAME] section, a # comment or a blank line";
    return e;
  }
  e.key = key;
  std::string_view value = trim(text.substr(eq + 1));
  if (value.starts_with('"')) {
    const size_t end = value.find('"', 1);
    if (end == std::string_view::npos || !only_comment(value.substr(end + 1))) {
      *why = "a quoted value must end with \" (then only a # comment)";
      return e;
    }
    e.value = value.substr(1, end - 1);
    e.quoted = true;
    return e;
  }
  e.value = strip_comment(value);
  return e;
}

}  // namespace

Result<ConfigFile> read_config_text(const std::string& path, std::string_view text) {
  ConfigFile f;
  f.path = path;
  unsigned line = 0;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark
  while (!text.empty()) {
    ++line;
    const size_t nl = text.find('\n');
    const std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (raw.find('\0') != std::string_view::npos) {
      return Status(Code::kInvalidArgument, f.where(line) + "holds a NUL byte");
    }
    const std::string_view l = trim(raw);
    if (l.empty() || l.front() == '#') continue;
    std::string why;
    if (l.front() == '[') {
      why = read_section(l, line, &f);
    } else {
      ConfigEntry e = read_entry(l, line, &why);
      if (why.empty()) (f.rooms.empty() ? f.flags : f.rooms.back().settings).push_back(e);
    }
    if (!why.empty()) return Status(Code::kInvalidArgument, f.where(line) + why);
  }
  return f;
}

Result<ConfigFile> read_config_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status(Code::kInvalidArgument, "cannot read " + path + ": it is a directory");
  }
  // A FIFO would hold start-up until someone writes to it (and the stop signals are blocked
  // by then); a socket cannot be opened at all.
  if (std::filesystem::is_fifo(path, ec) || std::filesystem::is_socket(path, ec)) {
    return Status(Code::kInvalidArgument, "cannot read " + path + ": not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status(
        Code::kInvalidArgument,
        "cannot read " + path + ": " + std::error_code(errno, std::generic_category()).message());
  }
  // Read at most the limit and one byte more (a path like /dev/zero never ends).
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) {
    return Status(
        Code::kInvalidArgument,
        "cannot read " + path + ": " + std::error_code(errno, std::generic_category()).message());
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes) {
    return Status(Code::kInvalidArgument, "cannot read " + path + ": larger than 1 MiB");
  }
  return read_config_text(path, text);
}

}  // namespace anteroom
