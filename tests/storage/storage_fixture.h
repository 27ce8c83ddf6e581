// What the storage tests share: a temporary directory per test and a manual room.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/model.h"

namespace anteroom {

namespace fs = std::filesystem;

// A fresh directory under the system's temporary one, named for the running test.
inline fs::path test_dir(const std::string& prefix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "-" + info->name();
  for (char& c : name)
    if (c == '/') c = '_';
  fs::path dir = fs::temp_directory_path() / (prefix + std::to_string(getpid()) + "-" + name);
  fs::remove_all(dir);
  return dir;
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline RoomConfig manual(uint32_t capacity) {
  RoomConfig c;
  c.capacity = capacity;
  c.admission = AdmissionMode::kManual;
  c.heartbeat_timeout_seconds = 3600;
  return c;
}

}  // namespace anteroom
