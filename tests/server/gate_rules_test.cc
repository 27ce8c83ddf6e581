// The forward-auth gate's rules (server/app/gate_paths.h, gate_settings.h, gate_index.h):
// paths made plain before any rule looks, networks, a room's gate fields read and kept,
// which room a request meets, and which requests a bypass rule lets by.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/app/gate_index.h"
#include "server/app/gate_paths.h"
#include "server/app/gate_settings.h"

namespace anteroom {
namespace {

namespace json = boost::json;

TEST(PlainPath, DotSegmentsEncodingsAndParametersCannotDodgeARule) {
  const std::pair<const char*, const char*> cases[] = {
      {"/", "/"},
      {"/shop/item?x=/static/", "/shop/item"},
      {"/static/../checkout", "/checkout"},
      {"/static/%2e%2e/checkout", "/checkout"},
      {"/static/%2E%2E%2Fcheckout", "/checkout"},
      {"/static/..;/checkout", "/checkout"},
      {"/static/..%3bx/checkout", "/checkout"},
      {"/static\\..\\checkout", "/checkout"},
      {"//static//x", "/static/x"},
      {"/a/./b/", "/a/b/"},
      {"/a/b/..", "/a/"},
      {"/../../etc", "/etc"},
      {"/app;jsessionid=1/cart", "/app/cart"},
      {"/caf%C3%A9", "/caf\xC3\xA9"},
      {"/x#frag", "/x"},
      {"/100%", "/100%"},
      {"/%zz", "/%zz"},
  };
  for (const auto& [in, want] : cases) {
    auto got = plain_path(in);
    ASSERT_TRUE(got.has_value()) << in;
    EXPECT_EQ(*got, want) << in;
  }
  EXPECT_FALSE(plain_path("/a%00b").has_value());
  EXPECT_FALSE(plain_path("/%ff%fe").has_value());
}

TEST(Networks, ParseAndContainClientsAsTheServerKnowsThem) {
  std::string why;
  auto n = parse_network("10.1.0.0/16", &why);
  ASSERT_TRUE(n.has_value()) << why;
  EXPECT_TRUE(n->contains(std::string("\x0a\x01\x07\x09", 4)));
  EXPECT_FALSE(n->contains(std::string("\x0a\x02\x07\x09", 4)));
  EXPECT_EQ(n->text(), "10.1.0.0/16");
  auto one = parse_network("192.168.1.7", &why);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->bits, 32);
  auto v6 = parse_network("2001:db8::/32", &why);
  ASSERT_TRUE(v6.has_value()) << why;
  EXPECT_TRUE(v6->contains(std::string("\x20\x01\x0d\xb8\x00\x01\x00\x02", 8)));
  EXPECT_FALSE(v6->contains(std::string("\x0a\x01\x07\x09", 4)));  // another family
  EXPECT_FALSE(parse_network("2001:db8::/96", &why).has_value());
  EXPECT_NE(why.find("/64"), std::string::npos);
  EXPECT_FALSE(parse_network("10.0.0.0/33", &why).has_value());
  EXPECT_FALSE(parse_network("example.com", &why).has_value());
  EXPECT_FALSE(parse_network("10.0.0.0/", &why).has_value());
}

json::object body(const char* text) { return json::parse(text).as_object(); }

std::string refusal(const char* text) {
  RoomConfig c;
  ApiResponse err;
  if (read_gate_fields(body(text), &c, &err)) return "accepted";
  EXPECT_EQ(err.status, 400u);
  return err.body;
}

TEST(GateFields, BadFieldsAreRefusedNamingTheField) {
  EXPECT_NE(refusal(R"({"match":[{"path_prefix":"shop"}]})").find("match[0].path_prefix"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"match":[{}]})").find("match[0]"), std::string::npos);
  EXPECT_NE(refusal(R"({"match":[{"host":"a b"}]})").find("match[0].host"), std::string::npos);
  EXPECT_NE(refusal(R"({"bypass":[{"name":"x"}]})").find("bypass[0]"), std::string::npos);
  EXPECT_NE(refusal(R"({"bypass":[{"cidr":"10.0.0.0/99"}]})").find("bypass[0].cidr"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"bypass":[{"methods":["PATCH"]}]})").find("bypass[0].methods"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"bypass":[{"header":{"name":"x"}}]})").find("bypass[0].header"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"bypass":[{"path_prefix":"/a","color":1}]})").find("color"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"queueing_status_code":302})").find("queueing_status_code"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"gate_cookies":"maybe"})").find("gate_cookies"), std::string::npos);
  EXPECT_NE(refusal(R"({"join_requires":"badge"})").find("join_requires"), std::string::npos);
  EXPECT_NE(refusal(R"({"gate_probation_seconds":0})").find("gate_probation_seconds"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"lanes":[{"name":"a","weight":0},{"name":"b","weight":1}]})")
                .find("lanes[0].weight"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"lanes":[{"name":"a","weight":1001},{"name":"b","weight":1}]})")
                .find("lanes[0].weight"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"lanes":[{"name":"a","weight":1}]})").find("lanes"), std::string::npos);
  EXPECT_NE(refusal(R"({"lanes":[{"name":"a","weight":1},{"name":"a","weight":2}]})")
                .find("lanes[1].name"),
            std::string::npos);
}

TEST(GateFields, WhatIsReadIsKeptAndShownAsGiven) {
  RoomConfig c;
  ApiResponse err;
  ASSERT_TRUE(
      read_gate_fields(body(R"({"match":[{"host":"Shop.Example","path_prefix":"/shop/../buy/"}],
               "bypass":[{"name":"assets","path_prefix":"/static/","methods":["GET","HEAD"]},
                         {"name":"office","cidr":["10.0.0.0/8","2001:db8::/48"]},
                         {"name":"staff","header":{"name":"X-Staff","contains":"yes"}}],
               "queueing_status_code":429,"gate_admits":false,"gate_probation_seconds":12,
               "gate_cookies":"pass","join_requires":"invite",
               "lanes":[{"name":"members","weight":3},{"name":"public","weight":1}]})"),
                       &c, &err))
      << err.body;
  EXPECT_EQ(c.lanes, (std::vector<uint32_t>{3, 1}));
  const GateSettings g = GateSettings::from_stored(c.gate);
  ASSERT_EQ(g.match.size(), 1u);
  EXPECT_EQ(g.match[0].host, "shop.example");
  EXPECT_EQ(g.match[0].path_prefix, "/buy/");
  ASSERT_EQ(g.bypass.size(), 3u);
  EXPECT_EQ(g.bypass[1].cidr.size(), 2u);
  EXPECT_EQ(g.queueing_status_code, 429u);
  EXPECT_FALSE(g.gate_admits);
  EXPECT_EQ(g.gate_probation_seconds, 12);
  EXPECT_TRUE(g.gate_cookies_pass);
  EXPECT_TRUE(g.invite_only);
  EXPECT_EQ(g.lane_index("members"), 0);
  EXPECT_EQ(g.lane_index("nobody"), JoinRequest::kLastLane);
  EXPECT_EQ(g.to_stored(), c.gate);  // kept as written
  json::object shown;
  g.put_fields(shown, c.lanes);
  EXPECT_EQ(json::serialize(shown.at("lanes")),
            R"([{"name":"members","weight":3},{"name":"public","weight":1}])");
  EXPECT_EQ(json::serialize(shown.at("bypass").as_array()[1].at("cidr")),
            R"(["10.0.0.0/8","2001:db8::/48"])");
  RoomConfig plain;
  ASSERT_TRUE(read_gate_fields(body("{}"), &plain, &err));
  EXPECT_TRUE(plain.gate.empty());  // the defaults take no room
  // A PUT changes what it names and keeps the rest (the dashboard puts one field at a time).
  RoomConfig kept = c;
  ASSERT_TRUE(read_gate_fields(body(R"({"gate_admits":true})"), &kept, &err));
  const GateSettings k = GateSettings::from_stored(kept.gate);
  EXPECT_TRUE(k.gate_admits);
  EXPECT_EQ(k.match.size(), 1u);
  EXPECT_EQ(k.bypass.size(), 3u);
  EXPECT_EQ(kept.lanes, c.lanes);
  EXPECT_EQ(k.lane_names, g.lane_names);
  ASSERT_TRUE(read_gate_fields(body(R"({"match":[],"lanes":[]})"), &kept, &err));
  EXPECT_TRUE(GateSettings::from_stored(kept.gate).match.empty());
  EXPECT_TRUE(kept.lanes.empty());
}

RoomInfo room_with(const std::string& name, const char* fields) {
  RoomInfo r;
  r.name = name;
  ApiResponse err;
  EXPECT_TRUE(read_gate_fields(body(fields), &r.config, &err)) << err.body;
  return r;
}

TEST(GateIndex, TheLongestPrefixWinsThenTheRuleThatNamesTheHost) {
  const GateIndex index({room_with("all", R"({"match":[{"path_prefix":"/"}]})"),
                         room_with("shop", R"({"match":[{"path_prefix":"/shop/"}]})"),
                         room_with("sale", R"({"match":[{"host":"a.example","path_prefix":"/shop/"},
                                                     {"host":"b.example:8443"}]})"),
                         room_with("none", "{}")});
  auto found = [&](const char* host, const char* path) {
    const GateIndex::Room* r = index.find(host, path);
    return r == nullptr ? std::string("-") : r->name;
  };
  EXPECT_EQ(found("x.example", "/shop/item"), "shop");
  EXPECT_EQ(found("a.example", "/shop/item"), "sale");
  EXPECT_EQ(found("A.Example:8080", "/shop/item"), "sale");  // any port, any case
  EXPECT_EQ(found("a.example", "/about"), "all");
  EXPECT_EQ(found("b.example:8443", "/about"), "all");  // "/" is longer than no prefix
  EXPECT_EQ(index.rules(), 4u);
  const GateIndex only({room_with("sale", R"({"match":[{"host":"b.example:8443"}]})")});
  EXPECT_EQ(only.find("b.example:8443", "/x")->name, "sale");
  EXPECT_EQ(only.find("b.example", "/x"), nullptr);  // the rule names its port
  EXPECT_EQ(only.find("b.example:9", "/x"), nullptr);
  EXPECT_NE(index.room("shop"), nullptr);
  EXPECT_EQ(index.room("none"), nullptr);  // defaults: nothing kept
}

// A rule protects whatever an origin may read as its prefix: the path as sent, before
// decoding, or in another case (an origin that ignores case).
TEST(GateIndex, ARuleFitsThePathAsSentAndInAnyCase) {
  const GateIndex index({room_with("shop", R"({"match":[{"path_prefix":"/"}]})"),
                         room_with("co", R"({"match":[{"path_prefix":"/checkout/"}]})")});
  auto found = [&](const char* raw) {
    auto plain = plain_path(raw);
    const GateIndex::Room* r = index.find("x.example", *plain, raw);
    return r == nullptr ? std::string("-") : r->name;
  };
  EXPECT_EQ(found("/checkout/pay"), "co");
  EXPECT_EQ(found("/checkout/%2e%2e/x"), "co");  // decodes to /x, but an origin may not
  EXPECT_EQ(found("/CHECKOUT/pay"), "co");
  EXPECT_EQ(found("/static/../checkout/pay"), "co");  // decodes to it
  EXPECT_EQ(found("/about"), "shop");
}

TEST(GateHost, LowerCaseNoTrailingDotThePortKept) {
  EXPECT_EQ(gate_host("Shop.Example."), "shop.example");
  EXPECT_EQ(gate_host("shop.example.:8443"), "shop.example:8443");
  EXPECT_EQ(gate_host("shop.example:8443"), "shop.example:8443");
  EXPECT_EQ(gate_host("10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(gate_host("[::1]:80"), "[::1]:80");
}

class FixedHeaders final : public HeaderLookup {
 public:
  std::string_view get(std::string_view name) const override {
    return name == "x-staff" || name == "X-Staff" ? "yes-please" : "";
  }
};

TEST(Bypass, ARequestPassesOnlyWhenItFitsEveryConditionOfARule) {
  const GateSettings g = GateSettings::from_stored(room_with("r", R"({"bypass":[
        {"name":"assets","path_prefix":"/static/","path_suffix":".css","methods":["GET"]},
        {"name":"office","cidr":"10.0.0.0/8"},
        {"name":"bots","user_agent":"Googlebot"},
        {"name":"staff","header":{"name":"X-Staff","contains":"yes"}},
        {"name":"app","cookie":"app_session"}]})")
                                                       .config.gate);
  FixedHeaders staff;
  auto which = [&](GateRequest r) {
    for (const BypassRule& b : g.bypass) {
      if (bypasses(b, r)) return b.name;
    }
    return std::string("-");
  };
  const std::string home(std::string("\xc0\xa8\x01\x02", 4)), office("\x0a\x00\x00\x01", 4);
  EXPECT_EQ(which({"GET", "/static/site.css", home, "Mozilla", "", nullptr, {}}), "assets");
  EXPECT_EQ(which({"POST", "/static/site.css", home, "Mozilla", "", nullptr, {}}), "-");
  EXPECT_EQ(which({"GET", "/static/app.js", home, "Mozilla", "", nullptr, {}}), "-");
  auto plain = plain_path("/static/../checkout.css");
  EXPECT_EQ(which({"GET", *plain, home, "Mozilla", "", nullptr, {}}), "-");
  // What it decodes to is an asset, what an origin routes on raw is not: no bypass.
  for (const char* raw : {"/secret/%2e%2e/static/x.css", "/secret/..;/static/x.css",
                          "/secret%2F..%2Fstatic/x.css", "/Static/x.css"}) {
    auto p = plain_path(raw);
    ASSERT_TRUE(p.has_value()) << raw;
    EXPECT_EQ(which({"GET", *p, home, "Mozilla", "", nullptr, raw}), "-") << raw;
  }
  // A suffix after an encoded separator is no suffix to an origin that decodes first.
  for (const char* raw : {"/static/x%3f.css", "/static/x%2F.css", "/static/x%23.css"}) {
    EXPECT_EQ(which({"GET", *plain_path(raw), home, "Mozilla", "", nullptr, raw}), "-") << raw;
  }
  EXPECT_EQ(which({"GET", "/static/a b.css", home, "Mozilla", "", nullptr, "/static/a%20b.css"}),
            "assets");
  EXPECT_EQ(which({"GET", "/cart", office, "Mozilla", "", nullptr, {}}), "office");
  EXPECT_EQ(which({"GET", "/cart", home, "x (compatible; googlebot/2.1)", "", nullptr, {}}),
            "bots");
  EXPECT_EQ(which({"GET", "/cart", home, "Mozilla", "", &staff, {}}), "staff");
  EXPECT_EQ(which({"GET", "/cart", home, "Mozilla", "a=1; app_session=x", nullptr, {}}), "app");
  EXPECT_EQ(which({"GET", "/cart", home, "Mozilla", "app_session_old=x", nullptr, {}}), "-");
}

}  // namespace
}  // namespace anteroom
