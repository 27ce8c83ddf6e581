// Writing the three reports next to each other. Each goes to NAME.tmp first and is renamed
// into place, so a reader (or a crash) never sees a half-written report under its real name.
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "loadgen/report.h"

namespace anteroom::loadgen {
namespace {

std::string write_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot create " + tmp;
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      return "cannot write " + tmp;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return "cannot rename " + tmp + " to " + path + ": " + ec.message();
  }
  return "";
}

}  // namespace

std::string write_reports(const RunResult& run, const std::string& prefix) {
  if (prefix.empty()) return "empty report prefix";
  std::filesystem::path parent = std::filesystem::path(prefix).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) return "cannot create " + parent.string() + ": " + ec.message();
  }
  // Render everything before writing anything: a renderer that throws leaves no files.
  const std::pair<const char*, std::string> files[] = {
      {".json", report_json(run)},
      {".md", report_markdown(run)},
      {".html", report_html(run)},
  };
  for (const auto& [ext, text] : files) {
    std::string error = write_file(prefix + ext, text);
    if (!error.empty()) return error;
  }
  return "";
}

}  // namespace anteroom::loadgen
