#include "loadgen/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace anteroom::loadgen {
namespace {

// Room around the plot for the title and legend (top), tick labels and axis labels.
constexpr double kLeft = 62;
constexpr double kRight = 14;
constexpr double kTop = 30;
constexpr double kBottom = 42;
// Rough width of one character of the 11px legend font; only used to space legend entries.
constexpr double kCharWidth = 6.2;

std::string num(double v) {  // an SVG coordinate
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct Plot {
  double x0, x1, y0, y1;  // the plot area in pixels; y0 is the top
};

Plot plot_area(ChartSize size) {
  return {kLeft, static_cast<double>(size.width) - kRight, kTop,
          static_cast<double>(size.height) - kBottom};
}

// Ticks whose step is at least `min_step` (whole seconds, whole counts).
std::vector<double> ticks_with_min_step(double low, double high, int target, double min_step) {
  std::vector<double> ticks = nice_ticks(low, high, target);
  if (ticks.size() >= 2 && ticks[1] - ticks[0] < min_step) {
    ticks.clear();
    double first = std::floor(low / min_step) * min_step;
    for (int i = 0; first + i * min_step < high + min_step; ++i) {
      ticks.push_back(first + i * min_step);
    }
  }
  return ticks;
}

std::string open_svg(const std::string& title, ChartSize size) {
  std::string out = "<svg class=\"chart\" width=\"" + std::to_string(size.width) + "\" height=\"" +
                    std::to_string(size.height) + "\" viewBox=\"0 0 " + std::to_string(size.width) +
                    " " + std::to_string(size.height) + "\" role=\"img\" aria-label=\"" +
                    xml_escape(title) + "\">\n";
  out += "<title>" + xml_escape(title) + "</title>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  out += "<text x=\"" + num(kLeft) +
         "\" y=\"18\" font-size=\"13\" font-weight=\"bold\" fill=\"#222\">" + xml_escape(title) +
         "</text>\n";
  return out;
}

std::string axis_labels(const std::string& x_label, const std::string& y_label, const Plot& p,
                        ChartSize size) {
  std::string out;
  double mid_x = (p.x0 + p.x1) / 2;
  double mid_y = (p.y0 + p.y1) / 2;
  out += "<text x=\"" + num(mid_x) + "\" y=\"" + num(static_cast<double>(size.height) - 6) +
         "\" font-size=\"11\" text-anchor=\"middle\" fill=\"#444\">" + xml_escape(x_label) +
         "</text>\n";
  out += "<text x=\"12\" y=\"" + num(mid_y) + "\" font-size=\"11\" text-anchor=\"middle\" " +
         "fill=\"#444\" transform=\"rotate(-90 12 " + num(mid_y) + ")\">" + xml_escape(y_label) +
         "</text>\n";
  out += "<rect x=\"" + num(p.x0) + "\" y=\"" + num(p.y0) + "\" width=\"" + num(p.x1 - p.x0) +
         "\" height=\"" + num(p.y1 - p.y0) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  return out;
}

std::string no_data(const std::string& title, const std::string& x_label,
                    const std::string& y_label, ChartSize size) {
  Plot p = plot_area(size);
  std::string out = open_svg(title, size);
  out += axis_labels(x_label, y_label, p, size);
  out += "<text x=\"" + num((p.x0 + p.x1) / 2) + "\" y=\"" + num((p.y0 + p.y1) / 2) +
         "\" font-size=\"13\" text-anchor=\"middle\" fill=\"#888\">no data</text>\n</svg>\n";
  return out;
}

// Horizontal grid lines and labels for the y ticks; returns the axis top (the last tick).
std::string y_axis(const std::vector<double>& ticks, const Plot& p, double y_max) {
  std::string out;
  double step = ticks.size() >= 2 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    double y = p.y1 - (t - ticks.front()) / (y_max - ticks.front()) * (p.y1 - p.y0);
    out += "<line x1=\"" + num(p.x0) + "\" x2=\"" + num(p.x1) + "\" y1=\"" + num(y) + "\" y2=\"" +
           num(y) + "\" stroke=\"#e4e4e4\"/>\n";
    out += "<text x=\"" + num(p.x0 - 5) + "\" y=\"" + num(y + 4) +
           "\" font-size=\"10\" text-anchor=\"end\" fill=\"#444\">" + tick_label(t, step) +
           "</text>\n";
  }
  return out;
}

// Tick marks and labels for the x ticks that fall inside [x_low, x_high].
std::string x_axis(const std::vector<double>& ticks, const Plot& p, double x_low, double x_high) {
  std::string out;
  double step = ticks.size() >= 2 ? ticks[1] - ticks[0] : 1;
  double slack = (x_high - x_low) * 1e-9;
  for (double t : ticks) {
    if (t < x_low - slack || t > x_high + slack) continue;
    double x = p.x0 + (t - x_low) / (x_high - x_low) * (p.x1 - p.x0);
    out += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"" + num(p.y1) + "\" y2=\"" +
           num(p.y1 + 4) + "\" stroke=\"#999\"/>\n";
    out += "<text x=\"" + num(x) + "\" y=\"" + num(p.y1 + 15) +
           "\" font-size=\"10\" text-anchor=\"middle\" fill=\"#444\">" + tick_label(t, step) +
           "</text>\n";
  }
  return out;
}

// Legend entries laid out leftwards from the right edge, on the title's line.
std::string legend(const std::vector<Series>& series, const Plot& p) {
  std::string out;
  double x = p.x1;
  for (auto it = series.rbegin(); it != series.rend(); ++it) {
    double text_w = static_cast<double>(it->name.size()) * kCharWidth;
    x -= text_w;
    out += "<text x=\"" + num(x) + "\" y=\"18\" font-size=\"11\" fill=\"#222\">" +
           xml_escape(it->name) + "</text>\n";
    x -= 18;
    out += "<line x1=\"" + num(x) + "\" x2=\"" + num(x + 14) + "\" y1=\"14\" y2=\"14\" stroke=\"" +
           xml_escape(it->color) + "\" stroke-width=\"3\"/>\n";
    x -= 12;
  }
  return out;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double low, double high, int target) {
  if (!std::isfinite(low) || !std::isfinite(high)) return {0, 1};
  if (!(high > low)) high = low + 1;
  double rough = (high - low) / std::max(target, 1);
  double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  double norm = rough / magnitude;
  double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
  double first = std::floor(low / step) * step;
  std::vector<double> ticks;
  // Counting steps instead of adding them keeps 0.1 + 0.2 rounding out of the labels.
  for (int i = 0; i < 1000; ++i) {
    double v = first + i * step;
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
    if (v >= high - step * 1e-9) break;
  }
  return ticks;
}

std::string tick_label(double value, double step) {
  if (value == 0) return "0";  // not "0k"
  const char* suffix = "";
  if (step >= 1e6) {
    value /= 1e6;
    step /= 1e6;
    suffix = "M";
  } else if (step >= 1e3) {
    value /= 1e3;
    step /= 1e3;
    suffix = "k";
  }
  int decimals = step >= 1 ? 0 : static_cast<int>(-std::floor(std::log10(step) + 1e-9));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f%s", std::clamp(decimals, 0, 9), value, suffix);
  return buf;
}

std::string line_chart(const std::string& title, const std::string& x_label,
                       const std::string& y_label, const std::vector<Series>& series,
                       ChartSize size) {
  size_t n = 0;
  double y_min = 0;
  double y_max = 0;
  bool any = false;
  for (const Series& s : series) {
    n = std::max(n, s.y.size());
    for (double v : s.y) {
      if (!std::isfinite(v)) continue;
      any = true;
      y_min = std::min(y_min, v);
      y_max = std::max(y_max, v);
    }
  }
  if (!any) return no_data(title, x_label, y_label, size);

  Plot p = plot_area(size);
  double x_high = std::max(static_cast<double>(n) - 1, 1.0);
  std::vector<double> y_ticks = nice_ticks(y_min, y_max, 5);
  double y_top = y_ticks.back();
  double y_bottom = y_ticks.front();
  std::vector<double> x_ticks = ticks_with_min_step(0, x_high, 10, 1);

  std::string out = open_svg(title, size);
  out += y_axis(y_ticks, p, y_top);
  out += x_axis(x_ticks, p, 0, x_high);
  out += axis_labels(x_label, y_label, p, size);
  auto px = [&](size_t i) { return p.x0 + static_cast<double>(i) / x_high * (p.x1 - p.x0); };
  auto py = [&](double v) { return p.y1 - (v - y_bottom) / (y_top - y_bottom) * (p.y1 - p.y0); };
  for (const Series& s : series) {
    std::string color = xml_escape(s.color);
    // Each run of finite values is its own polyline; a lone point becomes a dot.
    size_t i = 0;
    while (i < s.y.size()) {
      if (!std::isfinite(s.y[i])) {
        ++i;
        continue;
      }
      size_t j = i;
      std::string points;
      while (j < s.y.size() && std::isfinite(s.y[j])) {
        if (!points.empty()) points += ' ';
        points += num(px(j)) + "," + num(py(s.y[j]));
        ++j;
      }
      if (j - i == 1) {
        out += "<circle cx=\"" + num(px(i)) + "\" cy=\"" + num(py(s.y[i])) + "\" r=\"2\" fill=\"" +
               color + "\"/>\n";
      } else {
        out += "<polyline fill=\"none\" stroke=\"" + color +
               "\" stroke-width=\"1.5\" stroke-linejoin=\"round\" points=\"";
        out += points;
        out += "\"/>\n";
      }
      i = j;
    }
  }
  out += legend(series, p);
  out += "</svg>\n";
  return out;
}

std::string bar_chart(const std::string& title, const std::string& x_label,
                      const std::string& y_label, double x_low, double x_high,
                      const std::vector<double>& counts, const std::string& color, ChartSize size) {
  double c_max = 0;
  for (double c : counts) {
    if (std::isfinite(c)) c_max = std::max(c_max, c);
  }
  if (c_max <= 0) return no_data(title, x_label, y_label, size);
  // One value (all samples equal): give the lone bin some width so the axis has a range.
  if (!(x_high > x_low)) x_high = x_low + (x_low > 0 ? x_low * 0.01 : 1);

  Plot p = plot_area(size);
  std::vector<double> y_ticks = ticks_with_min_step(0, c_max, 5, 1);
  double y_top = y_ticks.back();
  std::vector<double> x_ticks = nice_ticks(x_low, x_high, 8);

  std::string out = open_svg(title, size);
  out += y_axis(y_ticks, p, y_top);
  std::string fill = xml_escape(color);
  double bar_w = (p.x1 - p.x0) / static_cast<double>(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    double c = counts[i];
    if (!std::isfinite(c) || c <= 0) continue;
    double h = c / y_top * (p.y1 - p.y0);
    double x = p.x0 + static_cast<double>(i) * bar_w;
    out += "<rect x=\"" + num(x + 0.5) + "\" y=\"" + num(p.y1 - h) + "\" width=\"" +
           num(std::max(bar_w - 1, 0.5)) + "\" height=\"" + num(h) + "\" fill=\"" + fill +
           "\"><title>" + tick_label(c, 1) + "</title></rect>\n";
  }
  out += x_axis(x_ticks, p, x_low, x_high);
  out += axis_labels(x_label, y_label, p, size);
  out += "</svg>\n";
  return out;
}

}  // namespace anteroom::loadgen
