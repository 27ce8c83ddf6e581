// GET /admin: the operator's dashboard, one self-contained page (no build step, nothing
// fetched from elsewhere): it asks for the admin key, keeps it in the tab's session storage,
// reads GET /v1/admin/stream and drives the operator routes. docs/dashboard.md.
#pragma once

#include <string_view>

#include "server/app/api.h"

namespace anteroom {

// In Korean if the first language asked for is Korean, else English (the page can switch).
ApiResponse dashboard_page(std::string_view accept_language);

}  // namespace anteroom
