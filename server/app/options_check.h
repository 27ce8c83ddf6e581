// What parse_options checks once every flag is read (options_check.cc): each row's bounds,
// choices and characters, and what several flags say together (--admin-listen beside
// --listen, proxies, origins, the Redis of --cluster and its AUTH and TLS, room defaults).
// A value may also be made plain here: --trusted-proxy's comma-separated lists are split.
//
// Thread safety: a pure function of its argument.
#pragma once

#include "engine/status.h"
#include "server/app/options.h"

namespace anteroom {

// kInvalidArgument naming the first flag that does not fit (never a secret's value).
Status check_options(Options& o);

}  // namespace anteroom
