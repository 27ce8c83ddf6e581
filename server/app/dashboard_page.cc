#include "server/app/dashboard_page.h"

#include <openssl/rand.h>

#include <cstdlib>
#include <string>

#include <boost/json.hpp>

#include "server/app/token.h"
#include "server/app/wait_page.h"
#include "server/app/web_files.h"

namespace anteroom {
namespace {

// The markup and the style (web/dashboard/page.html); the script (web/dashboard/dashboard.js,
// then web/dashboard/chart.js) fills it in, with the strings of every language
// (web/i18n/dashboard/*.json) from a JSON block. Every element the script writes data into
// is filled with textContent, never as markup.
constexpr std::string_view kTail = "\n</script>\n</body>\n</html>\n";

// The dashboard's strings, by language: {"en": {...}, "ko": {...}}, '<' escaped for <script>.
std::string strings_block() {
  boost::json::object all;
  for (const char* lang : {"en", "ko"}) {
    all[lang] = boost::json::parse(web_file("web/i18n/dashboard/" + std::string(lang) + ".json"));
  }
  std::string out;
  for (char c : boost::json::serialize(all)) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  size_t at = 0;
  for (size_t i; (i = text.find(from, at)) != std::string_view::npos; at = i + from.size()) {
    out.append(text.substr(at, i - at));
    out.append(to);
  }
  out.append(text.substr(at));
  return out;
}

}  // namespace

ApiResponse dashboard_page(std::string_view accept_language) {
  const std::string_view lang = first_language(accept_language) == "ko" ? "ko" : "en";
  unsigned char random[16];
  if (RAND_bytes(random, sizeof random) != 1) std::abort();
  const std::string nonce =
      base64url_encode({reinterpret_cast<const char*>(random), sizeof random});
  ApiResponse res;
  res.content_type = "text/html; charset=utf-8";
  res.body = replace_all(replace_all(web_file("web/dashboard/page.html"), "%NONCE%", nonce),
                         "%LANG%", lang);
  res.body += R"(<script type="application/json" id="anteroom-strings">)";
  static const std::string kStrings = strings_block();
  res.body += kStrings;
  res.body += R"(</script>
<script nonce=")";
  res.body += nonce;
  res.body += "\">\n";
  res.body += web_file("web/dashboard/dashboard.js");
  res.body += web_file("web/dashboard/chart.js");
  res.body += kTail;
  res.headers.emplace_back("Cache-Control", "no-store");
  res.headers.emplace_back("Content-Language", std::string(lang));
  res.headers.emplace_back("Vary", "Accept-Language");
  res.headers.emplace_back("X-Content-Type-Options", "nosniff");
  res.headers.emplace_back("Referrer-Policy", "same-origin");
  // Only the page's own script and style (a new nonce on every answer); it talks to this
  // origin only, draws its charts itself, and may not be framed.
  res.headers.emplace_back("Content-Security-Policy",
                           "default-src 'none'; script-src 'nonce-" + nonce +
                               "'; style-src 'nonce-" + nonce +
                               "'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'");
  res.headers.emplace_back("X-Frame-Options", "DENY");
  return res;
}

}  // namespace anteroom
