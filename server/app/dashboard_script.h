// The dashboard page's script (dashboard_page.cc puts it in a nonce'd <script>).
#pragma once

#include <string_view>

namespace anteroom {

extern const std::string_view kDashboardScript;

}  // namespace anteroom
