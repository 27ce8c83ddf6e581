// The web sources the server sends (web/: pages, their scripts and styles, the proof-of-work
// worker, the strings of every language), embedded at build time (cmake/embed.cmake):
// web_file("web/wait/page.js") is that file's text.
#pragma once

#include <string_view>
#include <vector>

namespace anteroom {

std::string_view web_file(std::string_view path);
// Every embedded path, in the order cmake lists them.
std::vector<std::string_view> web_file_paths();

}  // namespace anteroom
