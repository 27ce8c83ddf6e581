#include "storage/check_log.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "storage/recovery.h"

namespace anteroom {

int check_log_main(int argc, char** argv) {
  bool fix = false;
  std::string dir;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--fix") {
      fix = true;
    } else if (dir.empty()) {
      dir = a;
    } else {
      dir.clear();
      break;
    }
  }
  if (dir.empty()) {
    std::fprintf(stderr, "usage: anteroom check-log [--fix] DATA_DIR\n");
    return 2;
  }
  const std::string path = dir + "/anteroom.log";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "check-log: cannot read %s\n", path.c_str());
    return 2;
  }
  std::stringstream s;
  s << in.rdbuf();
  const std::string data = s.str();
  const logrec::LogScan scan = logrec::scan_log(data, nullptr);
  std::printf("%s: %zu bytes, %llu records\n", path.c_str(), data.size(),
              static_cast<unsigned long long>(scan.records));
  if (scan.end == logfmt::Reader::End::kClean) {
    std::printf("ok: the log ends cleanly and every record is one the server accepts\n");
    return 0;
  }
  std::printf("%s: %s; the data before offset %llu is intact, %llu bytes after it would be cut\n",
              scan.end == logfmt::Reader::End::kTornTail ? "torn tail" : "damaged",
              scan.problem.c_str(), static_cast<unsigned long long>(scan.cut),
              static_cast<unsigned long long>(data.size() - scan.cut));
  if (!scan.cut_repairs) {
    std::printf("cutting would not help: the log is of a format this anteroom cannot read\n");
    return 1;
  }
  const uint64_t cut = scan.cut;
  if (!fix) {
    std::printf("run again with --fix to cut it there\n");
    return 1;
  }
  if (::truncate(path.c_str(), static_cast<off_t>(cut)) != 0) {
    std::fprintf(stderr, "check-log: cannot truncate %s\n", path.c_str());
    return 2;
  }
  std::printf("fixed: cut at offset %llu\n", static_cast<unsigned long long>(cut));
  return 0;
}

}  // namespace anteroom
