// The gate's own admissions under clients that never keep a cookie: each admission holds a
// slot only for its probation, and one address gets at most gate_ip_admits_per_minute of
// them; past that it gets the page (or the 429) like anyone in a line.
#include <string>

#include "tests/server/gate_fixture.h"

namespace anteroom::testing {
namespace {

TEST_F(ForwardAuth, OneAddressGetsOnlyItsShareOfTheGatesOwnAdmissions) {
  put_room(R"({"capacity":100,"match":[{"path_prefix":"/"}],"gate_cookies":"pass",
               "gate_ip_admits_per_minute":3})");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(traefik("/", "", false).status, 200u) << i;
  Reply fourth = traefik("/", "", false);  // a cookieless client, admitted anew each time
  EXPECT_EQ(fourth.status, 429u);
  EXPECT_NE(fourth.body.find(R"("code":"in_line")"), std::string::npos);
  EXPECT_EQ(traefik("/").status, 302u);  // a browser: the page
  EXPECT_NE(traefik("/").header("location").find("/wait/shop"), std::string::npos);
  // Another address is not held to this one's count.
  Reply other = c_->request("GET", "/v1/gate", "",
                            {{"X-Forwarded-Uri", "/"},
                             {"X-Forwarded-Host", "shop.example"},
                             {"X-Forwarded-For", "198.51.100.9"}});
  EXPECT_EQ(other.status, 200u);
  // A minute and more later (the count's windows are 15 s), the address is admitted again.
  clock_->advance_s(76);
  EXPECT_EQ(traefik("/", "", false).status, 200u);
  const Reply room = c_->admin("GET", "/v1/rooms/shop");
  EXPECT_NE(room.body.find(R"("gate_ip_admits_per_minute":3)"), std::string::npos) << room.body;
}

TEST_F(ForwardAuth, TheCapIsARoomFieldCheckedLikeAnyOther) {
  EXPECT_EQ(c_->admin("PUT", "/v1/rooms/shop", R"({"gate_ip_admits_per_minute":-1})").status, 400u);
  EXPECT_EQ(c_->admin("PUT", "/v1/rooms/shop", R"({"gate_ip_admits_per_minute":"6"})").status,
            400u);
  put_room(R"({"capacity":100,"match":[{"path_prefix":"/"}],"gate_cookies":"pass",
               "gate_ip_admits_per_minute":0})");
  for (int i = 0; i < 10; ++i) EXPECT_EQ(traefik("/", "", false).status, 200u) << i;
  EXPECT_NE(c_->admin("GET", "/v1/rooms/shop").body.find(R"("gate_ip_admits_per_minute":0)"),
            std::string::npos);
}

}  // namespace
}  // namespace anteroom::testing
