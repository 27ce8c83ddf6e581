#include "server/app/page_branding.h"

#include <boost/json.hpp>

#include "engine/model.h"

namespace anteroom {
namespace json = boost::json;

namespace {

// The strings of the page an operator may replace: every key of web/i18n/wait/en.json
// (tests/server/page_branding_test.cc checks the two agree).
constexpr const char* kTextKeys[] = {
    "title",     "position",  "ahead",       "eta",     "keep",           "admitted",
    "ended",     "retry",     "joining",     "offline", "unknown",        "prequeue",
    "startsIn",  "inDraw",    "paused",      "closed",  "closedTitle",    "checkDraw",
    "notify",    "turnTitle", "ref",         "solving", "bounced",        "endedTitle",
    "notInLine", "full",      "rateLimited", "failed",  "powUnavailable", "progress",
    "seconds",   "minutes",   "about",       "noRoom",  "inviteInvalid"};
constexpr const char* kColorKeys[] = {"background", "card", "text", "accent"};
constexpr const char* kFields[] = {"title", "message", "logo_url", "colors", "texts", "template"};

ApiResponse bad(const std::string& field, const std::string& why) {
  return error_response(400, "invalid_field", field + " " + why);
}

template <size_t N>
bool one_of(std::string_view s, const char* const (&list)[N]) {
  for (const char* x : list) {
    if (s == x) return true;
  }
  return false;
}

// A field's name for an error message: as given if it is UTF-8 (the answer is JSON).
std::string name_of(std::string_view key) {
  return valid_utf8(key) ? std::string(key) : std::string("(a name that is not UTF-8)");
}

// A string field: present, a string, UTF-8 without control characters (tab and newline
// aside), at most `max` bytes.
bool text(const json::value& v, const std::string& field, size_t max, std::string* out,
          ApiResponse* err) {
  if (!v.is_string()) {
    *err = bad(field, "must be a string");
    return false;
  }
  const json::string& s = v.as_string();
  if (!valid_utf8(s)) {
    *err = bad(field, "is not UTF-8");
    return false;
  }
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      *err = bad(field, "holds a control character");
      return false;
    }
  }
  if (s.size() > max) {
    *err = bad(field, "must be at most " + std::to_string(max) + " bytes");
    return false;
  }
  out->assign(s.data(), s.size());
  return true;
}

bool hex_color(std::string_view c) {
  if (c.size() != 7 || c[0] != '#') return false;
  for (char x : c.substr(1)) {
    if (!std::isxdigit(static_cast<unsigned char>(x))) return false;
  }
  return true;
}

// https:// or a same-site path, and nothing that could leave an attribute or a url().
bool safe_url(std::string_view u) {
  if (!(u.starts_with("https://") || (u.starts_with('/') && !u.starts_with("//")))) return false;
  for (unsigned char c : u) {
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' || c == '\\' ||
        c == '(' || c == ')') {
      return false;
    }
  }
  return true;
}

// {{widget}} exactly once, and not inside an HTML comment (where the box would never show).
bool one_widget(std::string_view t) {
  const size_t at = t.find("{{widget}}");
  if (at == std::string_view::npos || t.find("{{widget}}", at + 1) != std::string_view::npos) {
    return false;
  }
  const size_t open = t.rfind("<!--", at);
  return open == std::string_view::npos || t.find("-->", open + 4) < at;
}

bool valid_lang(std::string_view l) {
  return l.size() == 2 && std::islower(static_cast<unsigned char>(l[0])) &&
         std::islower(static_cast<unsigned char>(l[1]));
}

bool read_colors(const json::value& v, Branding* b, ApiResponse* err);
bool read_texts(const json::value& v, Branding* b, ApiResponse* err);

}  // namespace

bool read_branding(std::string_view body, Branding* b, ApiResponse* err) {
  json::parse_options opt;
  opt.allow_invalid_utf8 = true;  // checked per field below, so the answer names it
  boost::system::error_code ec;
  json::value v = json::parse(body, ec, {}, opt);
  if (ec) {
    *err = error_response(400, "invalid_json", "the body is not valid JSON");
    return false;
  }
  if (!v.is_object()) {
    *err = bad("the body", "must be a JSON object");
    return false;
  }
  const json::object& o = v.as_object();
  for (const auto& kv : o) {
    if (!one_of(kv.key(), kFields)) {
      *err = bad("'" + name_of(kv.key()) + "'", "is not a field of the page");
      return false;
    }
  }
  if (const json::value* t = o.if_contains("title"); t && !text(*t, "title", 200, &b->title, err))
    return false;
  if (const json::value* m = o.if_contains("message");
      m && !text(*m, "message", 2000, &b->message, err)) {
    return false;
  }
  if (const json::value* u = o.if_contains("logo_url")) {
    if (!text(*u, "logo_url", 2048, &b->logo_url, err)) return false;
    if (!b->logo_url.empty() && !safe_url(b->logo_url)) {
      *err = bad("logo_url",
                 "must be an https:// URL or a /path of ASCII, without quotes, spaces or <>");
      return false;
    }
  }
  if (const json::value* c = o.if_contains("colors"); c && !read_colors(*c, b, err)) return false;
  if (const json::value* t = o.if_contains("texts"); t && !read_texts(*t, b, err)) return false;
  if (const json::value* t = o.if_contains("template")) {
    if (!text(*t, "template", Branding::kMaxTemplate, &b->html_template, err)) return false;
    if (!b->html_template.empty() && !one_widget(b->html_template)) {
      *err = bad("template",
                 "must contain {{widget}} once, outside any <!-- comment -->, where the waiting "
                 "box goes");
      return false;
    }
  }
  if (b->to_json().size() > RoomConfig::kMaxPageBytes) {  // escapes can grow it
    *err = bad("template",
               "is too large once stored (quotes and control characters count "
               "six times); keep it under 64 KiB of plain HTML");
    return false;
  }
  return true;
}

namespace {

bool read_colors(const json::value& v, Branding* b, ApiResponse* err) {
  if (!v.is_object()) {
    *err = bad("colors", "must be an object");
    return false;
  }
  for (const auto& kv : v.as_object()) {
    const std::string field = "colors." + name_of(kv.key());
    if (!one_of(kv.key(), kColorKeys)) {
      *err = bad(field, "is not one of background, card, text, accent");
      return false;
    }
    std::string value;
    if (!text(kv.value(), field, 7, &value, err)) return false;
    if (!hex_color(value)) {
      *err = bad(field, "must be a color like \"#1d2433\"");
      return false;
    }
    b->colors[std::string(kv.key())] = value;
  }
  return true;
}

bool read_texts(const json::value& v, Branding* b, ApiResponse* err) {
  if (!v.is_object()) {
    *err = bad("texts", "must be an object of languages");
    return false;
  }
  for (const auto& lang : v.as_object()) {
    const std::string field = "texts." + name_of(lang.key());
    if (!valid_lang(lang.key()) || !lang.value().is_object()) {
      *err = bad(field, "must be a two-letter language code holding an object of strings");
      return false;
    }
    for (const auto& kv : lang.value().as_object()) {
      const std::string key_field = field + "." + name_of(kv.key());
      if (!one_of(kv.key(), kTextKeys)) {
        *err = bad(key_field, "is not a string of the page (docs/branding.md lists them)");
        return false;
      }
      std::string value;
      if (!text(kv.value(), key_field, 500, &value, err)) return false;
      b->texts[std::string(lang.key())][std::string(kv.key())] = value;
    }
  }
  return true;
}

}  // namespace

std::string Branding::to_json() const {
  json::object o;
  if (!title.empty()) o["title"] = title;
  if (!message.empty()) o["message"] = message;
  if (!logo_url.empty()) o["logo_url"] = logo_url;
  if (!colors.empty()) {
    json::object c;
    for (const auto& [k, v] : colors) c[k] = v;
    o["colors"] = std::move(c);
  }
  if (!texts.empty()) {
    json::object t;
    for (const auto& [lang, strings] : texts) {
      json::object s;
      for (const auto& [k, v] : strings) s[k] = v;
      t[lang] = std::move(s);
    }
    o["texts"] = std::move(t);
  }
  if (!html_template.empty()) o["template"] = html_template;
  return o.empty() ? std::string() : json::serialize(o);
}

Branding Branding::from_json(std::string_view stored) {
  Branding b;
  if (stored.empty()) return b;
  ApiResponse ignored;
  if (!read_branding(stored, &b, &ignored)) return Branding{};
  return b;
}

}  // namespace anteroom
