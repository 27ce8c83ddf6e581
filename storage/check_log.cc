#include "storage/check_log.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "storage/check_log_progress.h"
#include "storage/recovery.h"

namespace anteroom {
namespace {

// The progress line (check_log_progress.h): on a terminal only, about once a second.
class Progress {
 public:
  Progress() : show_(isatty(STDERR_FILENO) != 0), last_(std::chrono::steady_clock::now()) {}
  void update(LogPass pass, uint64_t bytes, uint64_t total, uint64_t records) {
    const auto now = std::chrono::steady_clock::now();
    if (!show_ || now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    std::fputs(line_.render(log_progress_text(pass, bytes, total, records)).c_str(), stderr);
  }
  void end() { std::fputs(line_.end().c_str(), stderr); }

 private:
  const bool show_;
  std::chrono::steady_clock::time_point last_;
  LogProgressLine line_;
};

// Reads the file at `path` whole into *data, in 4 MiB pieces with progress.
bool read_whole(const std::string& path, std::string* data, Progress* progress) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  data->resize(size);
  constexpr uint64_t kPiece = 4 << 20;
  for (uint64_t done = 0; done < size;) {
    const uint64_t n = std::min(kPiece, size - done);
    if (!in.read(data->data() + done, static_cast<std::streamsize>(n))) return false;
    done += n;
    progress->update(LogPass::kReading, done, size, 0);
  }
  return true;
}

}  // namespace

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
  Progress progress;
  std::string data;
  if (!read_whole(path, &data, &progress)) {
    progress.end();
    std::fprintf(stderr, "check-log: cannot read %s\n", path.c_str());
    return 2;
  }
  const logrec::LogScan scan =
      logrec::scan_log(data, nullptr, [&](uint64_t bytes, uint64_t records) {
        progress.update(LogPass::kChecking, bytes, data.size(), records);
      });
  progress.end();
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
