// Tiny SVG charts for the HTML report: a line chart over seconds and a bar chart of equal-width
// bins. The output is an inline <svg> element (no xmlns, no scripts, no external references),
// meant to be pasted into an HTML5 page; every text it draws is XML-escaped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace anteroom::loadgen {

struct ChartSize {
  int width = 720;
  int height = 240;
};

// One line of a line chart: y[i] is the value at x = i (seconds). A non-finite value (NaN)
// leaves a gap, so a second without data is not drawn as a drop to zero.
struct Series {
  std::string name;
  std::string color;  // any SVG colour, e.g. "#1f77b4"
  std::vector<double> y;
};

// Lines over x = 0..n-1 with "nice" ticks on both axes and a legend. Draws "no data" when
// no series has a finite value.
std::string line_chart(const std::string& title, const std::string& x_label,
                       const std::string& y_label, const std::vector<Series>& series,
                       ChartSize size = {});

// counts[i] is the height of bin i; the bins split [x_low, x_high] into counts.size() equal
// parts. Draws "no data" when every count is 0.
std::string bar_chart(const std::string& title, const std::string& x_label,
                      const std::string& y_label, double x_low, double x_high,
                      const std::vector<double>& counts, const std::string& color = "#4c78a8",
                      ChartSize size = {});

// & < > " ' as entities; also what the HTML report uses for its own text.
std::string xml_escape(std::string_view text);

// About `target` round tick values (steps of 1, 2 or 5 times a power of ten) covering
// [low, high]: the first is at or below low, the last at or above high.
std::vector<double> nice_ticks(double low, double high, int target);

// A tick value written as briefly as its step allows: 0.25, 40, 1.5k, 2M.
std::string tick_label(double value, double step);

}  // namespace anteroom::loadgen
