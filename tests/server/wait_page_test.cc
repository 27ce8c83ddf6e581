#include "server/app/wait_page.h"

#include <gtest/gtest.h>

namespace anteroom {
namespace {

TEST(WaitPage, QueryParamDecodes) {
  EXPECT_EQ(query_param("a=1&return=%2Fx%3Fy%3D2&b=3", "return"), "/x?y=2");
  EXPECT_EQ(query_param("return=a+b", "return"), "a b");
  EXPECT_EQ(query_param("x=1", "return"), std::nullopt);
  EXPECT_EQ(query_param("return=%2", "return"), std::nullopt);
  EXPECT_EQ(query_param("return=%zz", "return"), std::nullopt);
}

TEST(WaitPage, ReturnUrlStaysOnThisSite) {
  EXPECT_EQ(safe_return_url("/shop/1?x=2"), "/shop/1?x=2");
  for (const char* evil :
       {"https://evil.example/", "//evil.example", "/\\evil.example", "javascript:alert(1)", "",
        "shop", "/a\r\nSet-Cookie: x", "/..//evil.example", "/.//evil.example",
        "/a/%2e%2E//evil.example", "/a/.", "/a/../b?x=1"}) {
    EXPECT_EQ(safe_return_url(evil), "/") << evil;
  }
  // Dots that are no segment of their own, and dots in the query, stay.
  EXPECT_EQ(safe_return_url("/a/.well-known/x..y?p=../q"), "/a/.well-known/x..y?p=../q");
  EXPECT_EQ(safe_return_url("/a%2fb.c"), "/a%2fb.c");
}

// The review's finding: a return address holding a placeholder of the page's template was
// filled in again, breaking the page's script. Now what is put in is never rescanned.
TEST(WaitPage, AReturnAddressIsNeverTakenForAPlaceholder) {
  ApiResponse page = wait_page("shop", "return=%2F%25STRINGS%25%25ROOM%25", "en");
  EXPECT_NE(page.body.find(R"("returnTo":"/%STRINGS%%ROOM%")"), std::string::npos);
  EXPECT_EQ(page.body.find("%STRINGS%\""), std::string::npos);
}

}  // namespace
}  // namespace anteroom
