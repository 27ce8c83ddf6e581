// What the access log tests share: a file of their own in the temporary directory, and its
// lines read back as JSON.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace anteroom::testing {

inline std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("anteroom-access-" + std::to_string(getpid()) + "-" + name);
}

// Every line of the file, each parsed (a line that is not a JSON object fails the test).
inline std::vector<boost::json::object> read_lines(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<boost::json::object> out;
  std::string line;
  while (std::getline(in, line)) {
    boost::system::error_code ec;
    boost::json::value v =
        boost::json::parse(line, ec);  // Boost.JSON also refuses text that is not UTF-8
    EXPECT_FALSE(ec) << "not JSON: " << line;
    EXPECT_TRUE(v.is_object()) << line;
    if (!ec && v.is_object()) out.push_back(v.as_object());
  }
  return out;
}

// A new FIFO at `fifo` and its read end, opened without waiting for a writer (-1 on failure).
inline int fifo_with_reader(const std::filesystem::path& fifo) {
  std::filesystem::remove(fifo);
  if (mkfifo(fifo.c_str(), 0600) != 0) return -1;
  return ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
}

}  // namespace anteroom::testing
