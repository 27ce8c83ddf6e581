// The web sources the server carries (server/app/web_files.h) are the files in web/ byte for
// byte, and every page source in the tree is carried: one added to web/ but not to the
// embed list in server/CMakeLists.txt fails here, not in a visitor's browser.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "server/app/web_files.h"

namespace anteroom {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WebFiles, AreTheTreesFilesByteForByte) {
  const fs::path root = ANTEROOM_SOURCE_DIR;
  std::set<std::string> on_disk;
  for (const char* dir : {"web/wait", "web/dashboard", "web/i18n"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (e.is_regular_file()) on_disk.insert(fs::relative(e.path(), root).string());
    }
  }
  const std::vector<std::string_view> listed = web_file_paths();
  const std::set<std::string> embedded(listed.begin(), listed.end());
  EXPECT_EQ(embedded, on_disk) << "web/ and the embed list in server/CMakeLists.txt differ";
  EXPECT_GE(embedded.size(), 11u);
  for (std::string_view p : listed) {
    const std::string want = read(root / p);
    ASSERT_FALSE(want.empty()) << p;
    EXPECT_EQ(web_file(p), want) << p;
  }
}

TEST(WebFiles, AnUnknownPathIsAProgrammingError) {
  EXPECT_DEATH((void)web_file("web/wait/missing.js"), "");
}

}  // namespace
}  // namespace anteroom
