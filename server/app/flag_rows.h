// Every flag anteroom takes, one row each: its name, where its value goes in Options, its
// help, the ANTEROOM_* variable it is also read from, its bounds, and whether its value is a
// credential. --help, the environment, the --config file and the checks of the values all
// read these rows (options.cc, config_options.cc); a flag's default is its Options field's
// initializer. A new flag is one field and one row.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "server/app/options.h"

namespace anteroom {

// Where a flag's value goes; std::monostate for --help, which has none.
using FlagTarget =
    std::variant<std::monostate, std::string& (*)(Options&), unsigned& (*)(Options&),
                 uint64_t& (*)(Options&), bool& (*)(Options&),
                 std::vector<std::string>& (*)(Options&), AdmissionMode& (*)(Options&)>;

struct FlagRow {
  const char* name;  // the long name, without dashes
  FlagTarget target;
  const char* help;
  // A number's accepted range, and the unit its message gives ("s", "ms"); a number outside
  // it is refused "--NAME must be >= MIN UNIT", "at most MAX" or "MIN-MAX".
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
  const char* unit = "";
  // A string's (or an admission mode's) only values, "a|b|c": else "must be a, b or c".
  const char* choices = nullptr;
  // A credential given here is at least this many bytes and not a weak one (secrets.h).
  size_t min_secret = 0;
  // A string's only characters, as a set ("A-Z a-z 0-9 _ -" written out), and how the
  // refusal names them; nullptr: any.
  const char* charset = nullptr;
  const char* charset_text = "";
  // Its value is never shown in an error: a credential, or a URL that may hold one.
  bool secret = false;
  bool negated = false;  // a switch that turns its field off (--no-persistence)
  // A room default: the RoomConfig field's name, which the room's own checks give.
  const char* room_field = nullptr;
};

// The variable every flag is also read from: ANTEROOM_ and the flag's name in capitals with
// '_' for '-' (--room-capacity: ANTEROOM_ROOM_CAPACITY); "" for --help alone.
std::string variable_of(const FlagRow& row);

// All rows, in the order --help lists them.
std::span<const FlagRow> flag_rows();
// The row of the flag named `name` (no dashes), or nullptr.
const FlagRow* find_flag(std::string_view name);

// "auto" or "manual".
const char* admission_name(AdmissionMode mode);
// `choices` ("a|b|c") as a message says them: "a, b or c".
std::string said_choices(std::string_view choices);
// Whether `value` is one of `choices`.
bool is_choice(std::string_view choices, std::string_view value);

}  // namespace anteroom
