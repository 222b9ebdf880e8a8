// Static SVG charts for the HTML report: lines (with markers) and filled bands (stacked
// areas, min-max ranges) over shared x/y axes with "nice" ticks, axis labels with units, a
// legend, and hatch patterns and dash styles so series differ without colour. Drawn in
// C++ so the page renders with scripting off and needs nothing from the network.
// Every chart is <svg data-chart="ID" data-series-count="N"> and every series
// <g class="series" data-series="NAME" data-points="K">: the browser test reads them.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nnfit::profile::svg {

// Escapes & < > " ' for HTML and SVG text and attribute values (both use the same rules).
std::string escape(std::string_view text);

// A tick or table number, short: "0.25", "12", "1.5k", "20k", "3.2M" (4 significant digits).
std::string format_number(double v);

// "Nice" tick values (1, 2 or 5 × 10^k apart) from at or below `lo` to at or above `hi`,
// about `target` of them. `integer`: spacing at least 1 (epochs, steps).
std::vector<double> nice_ticks(double lo, double hi, int target, bool integer = false);

enum class Dash { solid, dashed, dotted };
enum class Marker { none, circle, square, diamond };
enum class Hatch { none, diagonal, back_diagonal, cross, dots, horizontal, vertical };

struct Series {
  std::string name;   // legend text and data-series
  std::string color;  // a CSS colour
  std::vector<double> x, y;
  std::vector<double> y_low;  // non-empty (same size as y): a band filled from y_low up to y
  Dash dash = Dash::solid;
  double stroke_width = 2;  // lines
  Marker marker = Marker::none;
  Hatch hatch = Hatch::none;              // bands: a pattern over the fill
  std::vector<std::string> point_titles;  // per point, shown on hover over the marker
  bool in_legend = true;
  bool behind = false;  // drawn before the other series; the legend keeps the given order
};

struct Chart {
  std::string id;                // unique in the page: data-chart and the prefix of its ids
  std::string title;             // the accessible name (<title>)
  std::string x_label, y_label;  // axis titles, with units: "step", "time per step (ms)"
  int width = 960, height = 320;
  bool x_integer = false;        // x ticks at whole numbers only (epochs)
  bool x_span_ticks = false;     // the x axis starts at the tick below the data (0), and ends at
                                 // the tick above when that is within 3% (100k), else it spans the data
  bool y_from_zero = true;       // else the y axis fits the data with a margin (loss curves)
  std::optional<double> y_max;   // top of the y axis; what lies above is clipped
  std::vector<Series> series;    // drawn in order (those `behind` first): later series on top
};

// One <svg> element. Series without points are listed (data-points="0") but not drawn.
std::string render_chart(const Chart& chart);

}  // namespace nnfit::profile::svg
