// Prints the server's route table (server/app/route_table.h) as JSON, for routes.mjs to hold
// against docs/openapi.yaml: one object per row, with its methods, pattern, metric name,
// listener, reserve and key.
#include <boost/json.hpp>
#include <cstdio>

#include "server/app/route_table.h"

int main() {
  using namespace anteroom;
  namespace json = boost::json;
  static constexpr std::pair<uint8_t, const char*> kMethods[] = {
      {kGet, "GET"}, {kHead, "HEAD"}, {kPost, "POST"}, {kPut, "PUT"}, {kDelete, "DELETE"}};
  static constexpr const char* kAudience[] = {"visitor", "operator", "both"};
  static constexpr const char* kAuth[] = {"none", "admin", "verify", "scrape"};
  json::array rows;
  for (const RouteRow& row : route_table()) {
    json::array methods;
    for (const auto& [bit, name] : kMethods) {
      if ((row.methods & bit) != 0) methods.emplace_back(name);
    }
    rows.push_back(json::object{{"methods", std::move(methods)},
                                {"pattern", row.pattern},
                                {"name", row.name},
                                {"audience", kAudience[static_cast<int>(row.audience)]},
                                {"reserve", row.reserve},
                                {"auth", kAuth[static_cast<int>(row.auth)]}});
  }
  std::printf("%s\n", json::serialize(rows).c_str());
  return 0;
}
