// GET /wait/{room}?return=URL: the self-contained waiting page (seed 000's "VQUEUE").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "server/app/api.h"
#include "server/app/page_branding.h"

namespace anteroom {

// The return address is ?return= if present, else `return_header`; either way only a
// same-site path is accepted. `brand` is the room's branding (page_branding.h).
ApiResponse wait_page(std::string_view room, std::string_view query,
                      std::string_view accept_language, std::string_view return_header = {},
                      const Branding& brand = {});

// The value of `name` in a URL query string, percent-decoded; nullopt if absent or badly
// encoded.
std::optional<std::string> query_param(std::string_view query, std::string_view name);
// `url` if it is a same-site path ("/..." but not "//..." or "/\..."), else "/": the page
// never redirects to another site.
std::string safe_return_url(std::string_view url);
// The first language the browser lists and does not refuse (browsers list them in order of
// preference; "q=0" means "not this one"), as its two lowercase letters; "" if none.
std::string first_language(std::string_view accept_language);

}  // namespace anteroom
