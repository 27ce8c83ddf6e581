// `anteroom check-log`'s progress on a large log (docs/log-format.md): bytes read and
// records checked, with the percent done, on stderr rewritten in place about once a second,
// and only when stderr is a terminal. The text is made here from figures the caller passes,
// so it is tested without a terminal or a clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace anteroom {

enum class LogPass { kReading, kChecking };

// "reading 512.0 of 2048.0 MiB (25%)" or "checking 400.0 of 2048.0 MiB (19%), 1234567
// records"; an empty log is 100% done.
std::string log_progress_text(LogPass pass, uint64_t bytes, uint64_t total_bytes, uint64_t records);

// A line rewritten in place: a carriage return, the text, and spaces over whatever a longer
// line before it left; end() moves to the next line if anything was shown.
class LogProgressLine {
 public:
  std::string render(const std::string& text);
  std::string end() const { return width_ > 0 ? "\n" : ""; }

 private:
  size_t width_ = 0;
};

}  // namespace anteroom
