// The Lua scripts a node runs in Redis (cluster/lua/*.lua), embedded at build time
// (cmake/embed.cmake): lua_script("cluster/lua/append.lua") is that file's text.
#pragma once

#include <string_view>
#include <vector>

namespace anteroom::cluster {

std::string_view lua_script(std::string_view path);
// Every embedded path, in the order cmake lists them.
std::vector<std::string_view> lua_script_paths();

}  // namespace anteroom::cluster
