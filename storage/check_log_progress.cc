#include "storage/check_log_progress.h"

#include <cstdio>

namespace anteroom {

std::string log_progress_text(LogPass pass, uint64_t bytes, uint64_t total_bytes,
                              uint64_t records) {
  const unsigned percent = total_bytes == 0 || bytes >= total_bytes
                               ? 100
                               : static_cast<unsigned>(static_cast<double>(bytes) * 100.0 /
                                                       static_cast<double>(total_bytes));
  const double mib = 1024.0 * 1024.0;
  char line[160];
  int n = std::snprintf(line, sizeof line, "%s %.1f of %.1f MiB (%u%%)",
                        pass == LogPass::kReading ? "reading" : "checking",
                        static_cast<double>(bytes) / mib, static_cast<double>(total_bytes) / mib,
                        percent);
  if (pass == LogPass::kChecking && n > 0 && static_cast<size_t>(n) < sizeof line) {
    std::snprintf(line + n, sizeof line - static_cast<size_t>(n), ", %llu records",
                  static_cast<unsigned long long>(records));
  }
  return line;
}

std::string LogProgressLine::render(const std::string& text) {
  std::string out = "\r" + text;
  if (text.size() < width_) out.append(width_ - text.size(), ' ');
  width_ = text.size();
  return out;
}

}  // namespace anteroom
