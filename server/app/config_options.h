// How the --config file's lines become options (options.cc): flags stored after the
// command line and the environment (which therefore win), errors told with the file and
// the line, and [room NAME] sections checked the way PUT /v1/rooms/{room} checks a body.
#pragma once

#include <boost/program_options.hpp>
#include <map>
#include <string>

#include "server/app/config_file.h"
#include "server/app/options.h"

namespace anteroom {

// The flags a config file set: name -> (line, value); a repeatable flag once per line.
using FileFlags = std::multimap<std::string, std::pair<unsigned, std::string>>;

// True if `value` is meant negative for a flag that takes an unsigned number: Boost reads
// "-5" as 4294967291, and no count, size or time here is negative.
bool negative_for_unsigned(const boost::program_options::option_description& option,
                           const std::string& value);

// Whether an error may show the value given for `flag` (a name without dashes): never for a
// credential or what may hold one (the rows marked secret, flag_rows.h: the keys, the
// secrets, and cluster, whose redis:// URL carries a password), nor for a flag nobody
// defines (a misspelt credential's value is as secret). An error shows "(hidden)" instead.
bool value_may_be_shown(std::string_view flag,
                        const boost::program_options::options_description& d);
// `value` if it may be shown for `flag`, else "(hidden)".
std::string shown_value(std::string_view flag, const std::string& value,
                        const boost::program_options::options_description& d);

// Stores the file's flags into *vm, except those the command line or the environment set
// (checked all the same). Unknown keys, keys given twice and values that do not read are
// kInvalidArgument "FILE:LINE: ...". *used gets every flag taken from the file.
Status store_config_flags(const ConfigFile& file,
                          const boost::program_options::options_description& d,
                          boost::program_options::variables_map* vm, FileFlags* used);

// `st` (a check of the options naming --FLAG) with the file and line in front when FLAG's
// value came from the file.
Status attribute(const Status& st, const ConfigFile& file, const FileFlags& used);

// Checks the file's rooms against the room defaults in *o and puts them in o->rooms; a bad
// setting is kInvalidArgument "FILE:LINE: room NAME: ...".
Status declare_rooms(const ConfigFile& file, Options* o);

}  // namespace anteroom
