// A room's waiting-page branding (PUT /v1/rooms/{room}/page, docs/branding.md): checked
// from the operator's JSON, stored with the room as normalized JSON, read back to render.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "server/app/api.h"

namespace anteroom {

struct Branding {
  static constexpr size_t kMaxTemplate = size_t{64} * 1024;

  std::string title;     // empty: the page's own
  std::string message;   // shown under the title; empty: none
  std::string logo_url;  // https://... or a same-site /path; empty: none
  // CSS colors (#rrggbb) by name: background, card, text, accent.
  std::map<std::string, std::string> colors;
  // Per language ("en", "ko", ...): the page's strings the operator replaces, by key.
  std::map<std::string, std::map<std::string, std::string>> texts;
  std::string html_template;  // a whole page with {{widget}}; empty: anteroom's page

  // The stored form (what RoomConfig::page holds).
  std::string to_json() const;
  // From the stored form; an empty or unreadable one gives no branding.
  static Branding from_json(std::string_view stored);
};

// Reads a PUT body (raw bytes: strings are checked for UTF-8 here, so the answer can name
// the field); false with *err a 400 naming the field.
bool read_branding(std::string_view body, Branding* out, ApiResponse* err);

}  // namespace anteroom
