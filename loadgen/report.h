// The three reports of a run: JSON for machines, Markdown for a summary in results/, and a
// self-contained HTML page with SVG charts (no scripts, styles or images from elsewhere).
#pragma once

#include <string>

#include "loadgen/run_result.h"

namespace anteroom::loadgen {

std::string report_json(const RunResult& run);      // report_json.cc
std::string report_markdown(const RunResult& run);  // report_markdown.cc
std::string report_html(const RunResult& run);      // report_html.cc

// Writes PREFIX.json, PREFIX.md and PREFIX.html (creating PREFIX's directory). Returns an
// empty string, or what went wrong (nothing half-written is left under the final names).
std::string write_reports(const RunResult& run, const std::string& prefix);

}  // namespace anteroom::loadgen
