// The --config file (docs/server.md "Config file"): lines of
// `name = value` and `[room NAME]` sections, each kept with its line number so that every
// error about it names the file and the line. What the names mean is options.cc's business
// (flags) and declared_rooms.cc's (room settings); this only reads the lines.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/status.h"

namespace anteroom {

struct ConfigEntry {
  unsigned line = 0;
  std::string key;
  std::string value;
  bool quoted = false;  // the value was written in double quotes (taken as it is)
};

struct ConfigRoom {
  unsigned line = 0;  // of the [room NAME] line
  std::string name;
  std::vector<ConfigEntry> settings;
};

struct ConfigFile {
  std::string path;                // as given to --config
  std::vector<ConfigEntry> flags;  // before the first section
  std::vector<ConfigRoom> rooms;
  std::unordered_map<std::string, unsigned> room_lines;  // name -> its section's line

  // "PATH:LINE: ", the start of every message about that line.
  std::string where(unsigned line) const;
};

constexpr size_t kMaxConfigBytes = size_t{1} << 20;
constexpr size_t kMaxConfigRooms = 10'000;  // the engine's max_rooms

// Reads `path` (at most kMaxConfigBytes); kInvalidArgument "PATH:LINE: why" for a line that does
// not read, "cannot read PATH: why" when the file cannot be read.
Result<ConfigFile> read_config_file(const std::string& path);
// The same for text already read (`path` names it in messages).
Result<ConfigFile> read_config_text(const std::string& path, std::string_view text);

}  // namespace anteroom
