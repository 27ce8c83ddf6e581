// JSON text as people write it. Boost.JSON prints every double in exponent form (5 comes
// out as 5E0); answers that carry a double go through to_json(), which writes numbers the
// shortest way that reads back the same (5, 0.25, 12.5).
#pragma once

#include <boost/json/value.hpp>
#include <string>

namespace anteroom {

std::string to_json(const boost::json::value& v);
// A double as to_json writes it.
std::string json_number(double d);

}  // namespace anteroom
