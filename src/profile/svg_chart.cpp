// SVG line/band charts (svg_chart.h). Coordinates are written with one decimal, which is
// below a screen pixel and keeps a 600-point series near 8 KB. The legend is laid out in
// rows above the plot from an estimated text width (12 px sans-serif, about 6.6 px a
// character); estimating too wide only wraps a row early.
#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace nnfit::profile::svg {
namespace {

constexpr double kLeft = 72, kRight = 16, kBottom = 46, kLegendRow = 20, kCharWidth = 6.6;

std::string num(double v) {  // a coordinate
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

// Path data in relative moves between points rounded to 0.1 px ("M10 20l1.5-3 1.4 2..."):
// the deltas are exact differences of the rounded points, so rounding never accumulates,
// and they are a third shorter than absolute coordinates.
class PathData {
 public:
  void to(double x, double y) {
    const long ix = std::lround(x * 10), iy = std::lround(y * 10);
    if (d_.empty()) {
      d_ += 'M';
      put(ix);
      d_ += ' ';
      put(iy);
      d_ += 'l';
    } else {
      if (d_.back() != 'l') d_ += ' ';
      put(ix - x_);
      if (iy - y_ >= 0) d_ += ' ';
      put(iy - y_);
    }
    x_ = ix;
    y_ = iy;
  }
  std::string close() { return d_.back() == 'l' ? d_.substr(0, d_.size() - 1) + "Z" : d_ + "Z"; }
  std::string open() const { return d_.back() == 'l' ? d_.substr(0, d_.size() - 1) : d_; }

 private:
  void put(long tenths) {  // tenths of a pixel as a decimal: -15 -> "-1.5", 20 -> "2"
    if (tenths < 0) d_ += '-';
    const long a = std::labs(tenths);
    d_ += std::to_string(a / 10);
    if (a % 10 != 0) {
      d_ += '.';
      d_ += static_cast<char>('0' + a % 10);
    }
  }
  std::string d_;
  long x_ = 0, y_ = 0;
};

const char* dash_array(Dash d) {
  switch (d) {
    case Dash::dashed: return "7 4";
    case Dash::dotted: return "2 3";
    case Dash::solid: break;
  }
  return nullptr;
}

std::string hatch_id(const Chart& c, Hatch h) { return c.id + "-hatch-" + std::to_string(static_cast<int>(h)); }

std::string hatch_pattern(const std::string& id, Hatch h) {
  std::string body, transform;
  const std::string line = R"(stroke="#000" stroke-opacity="0.45" stroke-width="1.4")";
  switch (h) {
    case Hatch::diagonal: transform = "rotate(45)"; body = R"(<line x1="0" y1="0" x2="0" y2="6" )" + line + "/>"; break;
    case Hatch::back_diagonal: transform = "rotate(-45)"; body = R"(<line x1="0" y1="0" x2="0" y2="6" )" + line + "/>"; break;
    case Hatch::cross:
      transform = "rotate(45)";
      body = R"(<line x1="0" y1="0" x2="0" y2="6" )" + line + R"(/><line x1="0" y1="0" x2="6" y2="0" )" + line + "/>";
      break;
    case Hatch::dots: body = R"(<circle cx="3" cy="3" r="1.2" fill="#000" fill-opacity="0.5"/>)"; break;
    case Hatch::horizontal: body = R"(<line x1="0" y1="3" x2="6" y2="3" )" + line + "/>"; break;
    case Hatch::vertical: body = R"(<line x1="3" y1="0" x2="3" y2="6" )" + line + "/>"; break;
    case Hatch::none: return "";
  }
  std::string out = R"(<pattern id=")" + id + R"(" patternUnits="userSpaceOnUse" width="6" height="6")";
  if (!transform.empty()) out += R"( patternTransform=")" + transform + '"';
  return out + ">" + body + "</pattern>";
}

// A marker centred on (x, y), 4 px from the centre to its edge, with a hover title when
// `title` is not empty.
std::string marker_shape(Marker m, double x, double y, const std::string& color, const std::string& title = "") {
  std::string tag, geometry;
  switch (m) {
    case Marker::circle:
      tag = "circle";
      geometry = R"(cx=")" + num(x) + R"(" cy=")" + num(y) + R"(" r="4")";
      break;
    case Marker::square:
      tag = "rect";
      geometry = R"(x=")" + num(x - 3.5) + R"(" y=")" + num(y - 3.5) + R"(" width="7" height="7")";
      break;
    case Marker::diamond:
      tag = "path";
      geometry = R"(d="M)" + num(x) + " " + num(y - 5) + "L" + num(x + 5) + " " + num(y) + "L" + num(x) + " " + num(y + 5) +
                 "L" + num(x - 5) + " " + num(y) + R"(Z")";
      break;
    case Marker::none: return "";
  }
  std::string out = "<" + tag + " " + geometry + R"( fill=")" + escape(color) + R"(" stroke="#fff" stroke-width="1")";
  if (title.empty()) return out + "/>";
  return out + "><title>" + escape(title) + "</title></" + tag + ">";
}

double legend_item_width(const Series& s) { return 30 + kCharWidth * static_cast<double>(s.name.size()) + 18; }

// The swatch of a series at (x, y) (the left end, vertically centred), 24 px wide.
std::string swatch(const Chart& c, const Series& s, double x, double y) {
  std::string out;
  if (!s.y_low.empty()) {
    out += R"(<rect x=")" + num(x) + R"(" y=")" + num(y - 6) + R"(" width="24" height="12" fill=")" + escape(s.color) +
           R"(" fill-opacity="0.85" stroke=")" + escape(s.color) + R"("/>)";
    if (s.hatch != Hatch::none) {
      out += R"(<rect x=")" + num(x) + R"(" y=")" + num(y - 6) + "\" width=\"24\" height=\"12\" fill=\"url(#" + hatch_id(c, s.hatch) + ")\"/>";
    }
    return out;
  }
  out += R"(<line x1=")" + num(x) + R"(" y1=")" + num(y) + R"(" x2=")" + num(x + 24) + R"(" y2=")" + num(y) + R"(" stroke=")" +
         escape(s.color) + R"(" stroke-width="2")";
  if (const char* d = dash_array(s.dash)) out += R"( stroke-dasharray=")" + std::string(d) + '"';
  out += "/>";
  if (s.marker != Marker::none) out += marker_shape(s.marker, x + 12, y, s.color);
  return out;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string format_number(double v) {
  if (!std::isfinite(v)) return v != v ? "NaN" : (v > 0 ? "inf" : "-inf");
  const double a = std::fabs(v);
  const char* suffix = "";
  if (a >= 1e9) {
    v /= 1e9;
    suffix = "G";
  } else if (a >= 1e6) {
    v /= 1e6;
    suffix = "M";
  } else if (a >= 1e4) {
    v /= 1e3;
    suffix = "k";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g%s", v, suffix);
  return buf;
}

std::vector<double> nice_ticks(double lo, double hi, int target, bool integer) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  if (integer) step = std::max(1.0, std::round(step));
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double t = first; ticks.size() < 100; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string render_chart(const Chart& c) {
  // Legend rows.
  const double plot_w = c.width - kLeft - kRight;
  std::vector<std::vector<const Series*>> rows(1);
  double row_w = 0;
  for (const Series& s : c.series) {
    if (!s.in_legend) continue;
    const double w = legend_item_width(s);
    if (row_w > 0 && row_w + w > plot_w) {
      rows.emplace_back();
      row_w = 0;
    }
    rows.back().push_back(&s);
    row_w += w;
  }
  if (rows.back().empty()) rows.pop_back();
  const double top = 12 + kLegendRow * static_cast<double>(rows.size()) + 8;
  const double plot_h = c.height - top - kBottom;

  // Ranges.
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const Series& s : c.series) {  // callers leave out non-finite points; guard anyway
    for (double x : s.x) {
      if (std::isfinite(x)) x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
    }
    for (double y : s.y) {
      if (std::isfinite(y)) y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
    for (double y : s.y_low) {
      if (std::isfinite(y)) y_lo = std::min(y_lo, y);
    }
  }
  if (!std::isfinite(x_lo)) x_lo = 0, x_hi = 1;
  if (!std::isfinite(y_lo)) y_lo = 0, y_hi = 1;
  if (x_hi <= x_lo) x_lo -= 1, x_hi += 1;
  if (c.y_max) y_hi = *c.y_max;
  if (c.y_from_zero) {
    y_lo = std::min(0.0, y_lo);
  } else {
    const double pad = y_hi > y_lo ? (y_hi - y_lo) * 0.08 : (y_hi != 0 ? std::fabs(y_hi) * 0.1 : 1.0);
    y_lo -= pad;
    y_hi += pad;
  }
  if (y_hi <= y_lo) y_hi = y_lo + 1;
  const std::vector<double> xt = nice_ticks(x_lo, x_hi, 8, c.x_integer);
  std::vector<double> yt = nice_ticks(y_lo, y_hi, 5);
  // The x axis spans the data (or its ticks); the y axis spans its ticks (so the top
  // gridline is labelled).
  if (c.x_span_ticks) {  // from the tick below the data; to the tick above only when it is near
    x_lo = xt.front();
    if (xt.back() - x_hi <= 0.03 * (xt.back() - xt.front())) x_hi = xt.back();
  } else if (c.x_integer && x_hi - x_lo <= 2) {
    x_lo -= 0.25, x_hi += 0.25;
  }
  y_lo = yt.front();
  y_hi = c.y_max ? *c.y_max : yt.back();
  auto px = [&](double x) { return kLeft + (x - x_lo) / (x_hi - x_lo) * plot_w; };
  auto py = [&](double y) { return top + plot_h - (y - y_lo) / (y_hi - y_lo) * plot_h; };

  std::string o;
  o.reserve(4096);
  const std::string title_id = c.id + "-title";
  o += R"(<svg class="chart" data-chart=")" + escape(c.id) + R"(" data-series-count=")" +
       std::to_string(c.series.size()) + R"(" width=")" + std::to_string(c.width) + R"(" height=")" + std::to_string(c.height) +
       R"(" viewBox="0 0 )" + std::to_string(c.width) + " " + std::to_string(c.height) + R"(" role="img" aria-labelledby=")" +
       escape(title_id) + R"(">)";
  o += R"(<title id=")" + escape(title_id) + R"(">)" + escape(c.title) + "</title>";
  o += "<defs>";
  o += R"(<clipPath id=")" + escape(c.id) + R"(-clip"><rect x=")" + num(kLeft) + R"(" y=")" + num(top) + R"(" width=")" +
       num(plot_w) + R"(" height=")" + num(plot_h) + R"("/></clipPath>)";
  std::vector<Hatch> hatches;
  for (const Series& s : c.series) {
    if (s.hatch != Hatch::none && std::find(hatches.begin(), hatches.end(), s.hatch) == hatches.end()) {
      hatches.push_back(s.hatch);
      o += hatch_pattern(escape(hatch_id(c, s.hatch)), s.hatch);
    }
  }
  o += "</defs>";

  // Grid, ticks and tick labels.
  o += R"(<g class="axis" font-size="11" fill="#444">)";
  for (double t : yt) {
    if (t > y_hi + 1e-9 * (y_hi - y_lo)) continue;
    const std::string y = num(py(t));
    o += R"(<line x1=")" + num(kLeft) + R"(" y1=")" + y + R"(" x2=")" + num(kLeft + plot_w) + R"(" y2=")" + y +
         R"(" stroke="#e3e3e3"/>)";
    o += R"(<text x=")" + num(kLeft - 6) + R"(" y=")" + num(py(t) + 4) + R"(" text-anchor="end">)" + escape(format_number(t)) +
         "</text>";
  }
  for (double t : xt) {
    if (t < x_lo - 1e-9 || t > x_hi + 1e-9) continue;
    const std::string x = num(px(t));
    o += R"(<line x1=")" + x + R"(" y1=")" + num(top + plot_h) + R"(" x2=")" + x + R"(" y2=")" + num(top + plot_h + 5) +
         R"(" stroke="#444"/>)";
    o += R"(<text x=")" + x + R"(" y=")" + num(top + plot_h + 18) + R"(" text-anchor="middle">)" + escape(format_number(t)) +
         "</text>";
  }
  o += R"(<rect x=")" + num(kLeft) + R"(" y=")" + num(top) + R"(" width=")" + num(plot_w) + R"(" height=")" + num(plot_h) +
       R"(" fill="none" stroke="#888"/>)";
  o += R"(<text x=")" + num(kLeft + plot_w / 2) + R"(" y=")" + num(c.height - 8) + R"(" text-anchor="middle" font-size="12">)" +
       escape(c.x_label) + "</text>";
  o += "<text transform=\"translate(16 " + num(top + plot_h / 2) + R"x() rotate(-90)" text-anchor="middle" font-size="12">)x" +
       escape(c.y_label) + "</text>";
  o += "</g>";

  // Series, clipped to the plot.
  o += "<g clip-path=\"url(#" + escape(c.id) + "-clip)\">";
  std::vector<const Series*> order;
  for (const Series& s : c.series) order.push_back(&s);
  std::stable_partition(order.begin(), order.end(), [](const Series* s) { return s->behind; });
  for (const Series* series : order) {
    const Series& s = *series;
    const std::size_t n = std::min(s.x.size(), s.y.size());
    o += R"(<g class="series" data-series=")" + escape(s.name) + R"(" data-points=")" + std::to_string(n) + R"(">)";
    o += "<title>" + escape(s.name) + "</title>";
    if (n > 0 && !s.y_low.empty()) {
      PathData d;
      for (std::size_t i = 0; i < n; ++i) d.to(px(s.x[i]), py(s.y[i]));
      for (std::size_t i = n; i-- > 0;) d.to(px(s.x[i]), py(s.y_low[i]));
      // The hatch re-uses the outline (<use>) rather than repeating it: the path takes
      // its fill from its group, the <use> gives its copy the pattern.
      const std::string path_id = escape(c.id) + "-band-" + std::to_string(&s - c.series.data());
      o += R"(<g fill=")" + escape(s.color) + R"(" fill-opacity="0.85"><path id=")" + path_id + R"(" d=")" + d.close() + R"("/></g>)";
      if (s.hatch != Hatch::none) {
        o += R"(<use href="#)" + path_id + "\" fill=\"url(#" + escape(hatch_id(c, s.hatch)) + ")\" fill-opacity=\"1\"/>";
      }
    } else if (n > 0) {
      PathData d;
      for (std::size_t i = 0; i < n; ++i) d.to(px(s.x[i]), py(s.y[i]));
      o += R"(<path d=")" + d.open() + R"(" fill="none" stroke=")" + escape(s.color) + "\" stroke-width=\"" + num(s.stroke_width) + R"(" stroke-linejoin="round")";
      if (const char* dash = dash_array(s.dash)) o += R"( stroke-dasharray=")" + std::string(dash) + '"';
      o += "/>";
      if (s.marker != Marker::none) {
        for (std::size_t i = 0; i < n; ++i) {
          o += marker_shape(s.marker, px(s.x[i]), py(s.y[i]), s.color, i < s.point_titles.size() ? s.point_titles[i] : "");
        }
      }
    }
    o += "</g>";
  }
  o += "</g>";

  // Legend.
  o += R"(<g class="legend" font-size="12" fill="#222">)";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double x = kLeft;
    const double y = 12 + kLegendRow * static_cast<double>(r) + kLegendRow / 2;
    for (const Series* s : rows[r]) {
      o += swatch(c, *s, x, y);
      o += R"(<text x=")" + num(x + 30) + R"(" y=")" + num(y + 4) + R"(">)" + escape(s->name) + "</text>";
      x += legend_item_width(*s);
    }
  }
  o += "</g></svg>";
  return o;
}

}  // namespace nnfit::profile::svg
