#include "server/app/wait_page.h"

#include <openssl/rand.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>

#include "server/app/token.h"
#include "server/app/web_files.h"

namespace anteroom {
namespace {

// The page is anteroom's document (web/wait/page.html) around the waiting box, or an
// operator's template (docs/branding.md) around the same box. The box is web/wait/style.css
// (with the room's colors as CSS variables), web/wait/widget.html, a JSON block of what
// differs per answer (the room, the return address, the strings, the proof-of-work worker),
// and web/wait/page.js in a nonce'd <script>.
constexpr std::string_view kPagePath = "web/wait/page.html";

// The strings of a language the page speaks (web/i18n/wait/LANG.json), or null.
std::optional<boost::json::object> page_strings(std::string_view lang) {
  if (lang != "en" && lang != "ko") return std::nullopt;
  return boost::json::parse(web_file("web/i18n/wait/" + std::string(lang) + ".json")).as_object();
}

}  // namespace

std::string first_language(std::string_view accept_language) {
  while (!accept_language.empty()) {
    const size_t comma = accept_language.find(',');
    std::string_view item = accept_language.substr(0, comma);
    accept_language = comma == std::string_view::npos ? "" : accept_language.substr(comma + 1);
    const size_t semi = item.find(';');
    std::string_view tag = item.substr(0, semi), params;
    if (semi != std::string_view::npos) params = item.substr(semi + 1);
    while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
    while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
    const std::string_view primary = tag.substr(0, tag.find('-'));
    if (primary.size() != 2 || !std::isalpha(static_cast<unsigned char>(primary[0])) ||
        !std::isalpha(static_cast<unsigned char>(primary[1]))) {
      continue;
    }
    while (!params.empty() && params.front() == ' ') params.remove_prefix(1);
    if (params.starts_with("q=0") && params.find_first_not_of("0.", 2) == std::string_view::npos) {
      continue;  // q=0, q=0.0, q=0.000: refused
    }
    std::string lang(primary);
    for (char& c : lang) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lang;
  }
  return "";
}

namespace {

// JSON inside <script>: '<' escaped, so no "</script>" or "<!--" can end it.
std::string script_json(const boost::json::value& v) {
  std::string out = boost::json::serialize(v);
  std::string safe;
  safe.reserve(out.size());
  for (char c : out) {
    if (c == '<') {
      safe += "\\u003c";
    } else {
      safe += c;
    }
  }
  return safe;
}

// Text for HTML (element content or a quoted attribute).
std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

template <size_t N>
std::string fill_template(std::string_view tmpl,
                          const std::pair<std::string_view, std::string_view> (&fills)[N],
                          char lead = '%') {
  std::string out;
  out.reserve(tmpl.size() + 1024);
  for (size_t i = 0; i < tmpl.size();) {
    bool filled = false;
    if (tmpl[i] == lead) {
      for (const auto& [name, value] : fills) {
        if (tmpl.substr(i, name.size()) == name) {
          out += value;
          i += name.size();
          filled = true;
          break;
        }
      }
    }
    if (!filled) out += tmpl[i++];
  }
  return out;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> query_param(std::string_view query, std::string_view name) {
  for (size_t i = 0; i <= query.size();) {
    size_t end = query.find('&', i);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(i, end - i);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      std::string out;
      std::string_view raw =
          eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
      for (size_t k = 0; k < raw.size(); ++k) {
        if (raw[k] == '+') {
          out += ' ';
        } else if (raw[k] == '%') {
          if (k + 2 >= raw.size()) return std::nullopt;
          int hi = hex(raw[k + 1]), lo = hex(raw[k + 2]);
          if (hi < 0 || lo < 0) return std::nullopt;
          out += static_cast<char>(hi * 16 + lo);
          k += 2;
        } else {
          out += raw[k];
        }
      }
      return out;
    }
    i = end + 1;
  }
  return std::nullopt;
}

namespace {

// An invite the service linked the visitor here with (?invite=JWT): the page joins with it.
// Only a JWT's characters; anything else is left out.
std::optional<std::string> page_invite(std::string_view query) {
  auto invite = query_param(query, "invite");
  if (!invite || invite->empty() || invite->size() > 4096) return std::nullopt;
  const bool jwt = std::all_of(invite->begin(), invite->end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  });
  return jwt ? invite : std::nullopt;
}

}  // namespace

std::string safe_return_url(std::string_view url) {
  if (url.empty() || url[0] != '/' || url.starts_with("//") || url.starts_with("/\\")) return "/";
  for (unsigned char c : url) {
    if (c < 0x20 || c == 0x7f || c == '\\') return "/";
  }
  // No dot segment ("/a/..//evil.example" resolves to "//evil.example", which an origin
  // that redirects such paths would send off-site); a browser reads %2e as a dot here, and
  // an origin may read %2F as a slash.
  std::string path(url.substr(0, url.find_first_of("?#")));
  for (size_t i = path.find("%2"); i != std::string::npos; i = path.find("%2", i)) {
    const char c = i + 2 < path.size() ? path[i + 2] : '\0';
    if (c == 'e' || c == 'E' || c == 'f' || c == 'F') {  // an origin may decode %2F too
      path.replace(i, 3, c == 'e' || c == 'E' ? "." : "/");
    } else {
      ++i;
    }
  }
  for (size_t i = 0; i < path.size();) {
    const size_t end = std::min(path.find('/', i + 1), path.size());
    const std::string_view seg = std::string_view(path).substr(i + 1, end - i - 1);
    if (seg == "." || seg == "..") return "/";
    i = end;
  }
  return std::string(url);
}

ApiResponse wait_page(std::string_view room, std::string_view query,
                      std::string_view accept_language, std::string_view return_header,
                      const Branding& brand) {
  const std::string wanted = first_language(accept_language);
  // The page's language: the visitor's first, if anteroom or the operator has its strings.
  std::optional<boost::json::object> own = page_strings(wanted);
  const std::string lang = own || brand.texts.count(wanted) != 0 ? wanted : "en";
  boost::json::object strings = own ? std::move(*own) : *page_strings("en");
  if (!brand.title.empty()) strings["title"] = brand.title;
  if (auto it = brand.texts.find(lang); it != brand.texts.end()) {  // a language's own wins
    for (const auto& [k, v] : it->second) strings[k] = v;
  }
  if (!brand.message.empty()) strings["brandMessage"] = brand.message;
  if (!brand.logo_url.empty()) strings["logo"] = brand.logo_url;
  unsigned char random[16];
  if (RAND_bytes(random, sizeof random) != 1) std::abort();
  const std::string nonce =
      base64url_encode({reinterpret_cast<const char*>(random), sizeof random});
  const std::string ret =
      safe_return_url(query_param(query, "return").value_or(std::string(return_header)));
  std::string colors;  // checked #rrggbb values (page_branding.cc)
  for (const auto& [name, value] : brand.colors) {
    colors += "--";
    colors += name;
    colors += ':';
    colors += value;
    colors += ';';
  }
  boost::json::object config;
  config["room"] = room;
  config["returnTo"] = ret;
  config["strings"] = strings;
  config["powWorker"] = web_file("web/wait/pow_worker.js");
  if (auto invite = page_invite(query)) config["invite"] = *invite;
  // One pass over each template: what is put in is never scanned for placeholders again (a
  // return address holding "%COLORS%" stays text).
  const std::pair<std::string_view, std::string_view> style_fills[] = {{"%COLORS%", colors}};
  std::string widget = "<style>";
  widget += fill_template(web_file("web/wait/style.css"), style_fills);
  widget += "</style>";
  widget += web_file("web/wait/widget.html");
  widget += R"(<script type="application/json" id="anteroom-config">)";
  widget += script_json(config);
  widget += R"(</script><script nonce=")";
  widget += nonce;
  widget += "\">";
  widget += web_file("web/wait/page.js");
  widget += "</script>";
  const std::string title = html_escape(strings["title"].as_string());
  std::string page;
  if (brand.html_template.empty()) {
    const std::pair<std::string_view, std::string_view> fills[] = {
        {"%LANG%", lang}, {"%TITLE%", title}, {"%WIDGET%", widget}};
    page = fill_template(web_file(kPagePath), fills);
  } else {
    const std::string message = html_escape(brand.message), logo = html_escape(brand.logo_url);
    const std::string room_text = html_escape(room);  // a room name needs none today
    const std::pair<std::string_view, std::string_view> fills[] = {
        {"{{widget}}", widget}, {"{{title}}", title},    {"{{message}}", message},
        {"{{logo_url}}", logo}, {"{{room}}", room_text}, {"{{lang}}", lang}};
    page = fill_template(brand.html_template, fills, '{');
  }
  ApiResponse res;
  res.content_type = "text/html; charset=utf-8";
  res.body = std::move(page);
  res.headers.emplace_back("Cache-Control", "no-store");
  res.headers.emplace_back("Content-Language", lang);
  res.headers.emplace_back("Vary", "Accept-Language");
  res.headers.emplace_back("X-Content-Type-Options", "nosniff");
  res.headers.emplace_back("Referrer-Policy", "same-origin");
  // Only the widget's own script runs (its nonce is new on every answer, so text an operator
  // or a visitor got into the page cannot carry script); styles and images as templates need
  // them; the page talks to this origin only, and may not be framed (clickjacking).
  res.headers.emplace_back("Content-Security-Policy",
                           "default-src 'none'; script-src 'nonce-" + nonce +
                               "'; worker-src blob:; connect-src 'self'; style-src 'self' "
                               "'unsafe-inline'; img-src 'self' https: data:; font-src 'self' "
                               "https: data:; base-uri 'none'; form-action 'self'; "
                               "frame-ancestors 'none'");
  res.headers.emplace_back("X-Frame-Options", "DENY");
  return res;
}

}  // namespace anteroom
