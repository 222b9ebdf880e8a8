// The HTML report rendered in a real browser (issue 5): trains a tiny model with
// `nnfit train --logdir`, writes `nnfit profile LOGDIR --html`, and has headless Chromium
// lay the page out. A probe script, appended to a copy of the page (the page itself has
// no script), writes what the browser rendered into the DOM, which --dump-dom returns:
// every chart with its rendered size, every series with its point count and rendered
// box, the visible verdict and missing-data sentences. A screenshot of the page itself
// (same window width, so the same layout) must show the train and validation colours
// inside the loss chart's box.
// Exits 77 (CTest's SKIP_RETURN_CODE) when no Chromium is installed (scripts/setup.sh
// installs Debian's `chromium`; NNFIT_CHROMIUM names another binary).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "nnfit/io/image.h"

namespace {

using namespace nnfit_test;
using nlohmann::json;

std::string g_chromium;

std::string find_chromium() {
  if (const char* env = std::getenv("NNFIT_CHROMIUM"); env != nullptr && *env != '\0') return env;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (std::size_t at = 0; at <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', at), dirs.size());
    for (const char* name : {"chromium", "chromium-browser"}) {
      const fs::path p = fs::path(dirs.substr(at, end - at)) / name;
      if (access(p.c_str(), X_OK) == 0) return p.string();
    }
    at = end + 1;
  }
  return "";
}

// Appended before </body> of a copy of the page.
constexpr const char* kProbe = R"(<script>
(() => {
  const box = (e) => {
    const r = e.getBoundingClientRect();
    return {x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height};
  };
  const out = {title: document.title, charts: [], missing: [], verdict: null};
  for (const svg of document.querySelectorAll('svg.chart')) {
    const c = {id: svg.dataset.chart, declared: Number(svg.dataset.seriesCount), ...box(svg), series: []};
    for (const g of svg.querySelectorAll('g.series')) {
      c.series.push({name: g.dataset.series, points: Number(g.dataset.points), shapes: g.querySelectorAll('path,use,circle,rect').length, ...box(g)});
    }
    out.charts.push(c);
  }
  for (const p of document.querySelectorAll('.missing')) out.missing.push({text: p.textContent, ...box(p)});
  const v = document.querySelector('.verdict strong');
  if (v) out.verdict = {text: v.textContent, ...box(v)};
  const pre = document.createElement('pre');
  pre.id = 'nnfit-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>)";

class HtmlReportBrowserTest : public CliTest {
 protected:
  // Chromium's flags: root needs --no-sandbox; a user-data dir of our own keeps runs apart.
  std::string chromium(const std::string& args) const {
    return g_chromium + " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --force-device-scale-factor=1 " +
           "--window-size=1200,2400 --user-data-dir=" +
           (dir_ / "chromium-profile").string() + " " + args;
  }

  // What the probe saw in `page` as rendered by Chromium.
  json probe(const fs::path& page) {
    std::string html = slurp(page);
    const std::size_t body = html.rfind("</body>");
    EXPECT_NE(body, std::string::npos);
    html.insert(body, kProbe);
    const fs::path probed = dir_ / "probed.html";
    write_file(probed, html);
    const fs::path dom = dir_ / "dom.html", err = dir_ / "chromium.err";
    const std::string cmd = "timeout 120 " + chromium("--dump-dom file://" + probed.string()) + " >" +
                            dom.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    EXPECT_EQ(status, 0) << cmd << "\n" << slurp(err);
    const std::string text = slurp(dom);
    const std::string open = "<pre id=\"nnfit-probe\">";
    const std::size_t at = text.find(open), end = text.find("</pre>", at);
    if (at == std::string::npos || end == std::string::npos) {
      ADD_FAILURE() << "the probe wrote nothing: the page did not load or the script did not run\n" << text.substr(0, 2000);
      return json::object();
    }
    std::string j = text.substr(at + open.size(), end - at - open.size());
    // --dump-dom escapes text nodes (&, <, >); undo it, & last.
    for (const auto& [from, to] : {std::pair{"&lt;", "<"}, std::pair{"&gt;", ">"}, std::pair{"&amp;", "&"}}) {
      for (std::size_t p = j.find(from); p != std::string::npos; p = j.find(from, p + 1)) j.replace(p, std::string(from).size(), to);
    }
    return json::parse(j);
  }

  static const json* chart(const json& p, const std::string& id) {
    for (const auto& c : p["charts"]) {
      if (c["id"] == id) return &c;
    }
    return nullptr;
  }

  // Checks chart `id` is rendered at a real size with exactly `series` (name -> points, in
  // drawing order).
  static void expect_chart(const json& p, const std::string& id, const std::vector<std::pair<std::string, int>>& series) {
    SCOPED_TRACE("chart " + id);
    const json* c = chart(p, id);
    ASSERT_NE(c, nullptr) << "not in the page: " << p.dump();
    EXPECT_GT((*c)["w"].get<double>(), 300) << c->dump();
    EXPECT_GT((*c)["h"].get<double>(), 150) << c->dump();
    ASSERT_EQ((*c)["series"].size(), series.size()) << c->dump();
    EXPECT_EQ((*c)["declared"].get<std::size_t>(), series.size());
    for (std::size_t i = 0; i < series.size(); ++i) {
      const json& s = (*c)["series"][i];
      EXPECT_EQ(s["name"], series[i].first);
      EXPECT_EQ(s["points"], series[i].second) << s.dump();
      EXPECT_GT(s["shapes"].get<int>(), 0) << s.dump();
      EXPECT_GT(s["w"].get<double>(), 0) << "series not drawn: " << s.dump();
    }
  }
};

TEST_F(HtmlReportBrowserTest, ARealRunRendersEveryChartWithItsSeries) {
  // 6 samples, batch 2: 3 steps an epoch, 3 epochs, validation on the same files.
  const fs::path cfg = config(model(), "images.idx", "labels.idx", R"({"epochs": 3, "batch_size": 2, "seed": 1})");
  const fs::path logs = dir_ / "logs", page = dir_ / "report.html";
  Result r = run("train " + cfg.string() + " --quiet --logdir " + logs.string());
  ASSERT_EQ(r.code, 0) << r.err;
  r = run("profile " + logs.string() + " --peak-gflops 100 --html " + page.string());
  ASSERT_EQ(r.code, 0) << r.err;

  const json p = probe(page);
  ASSERT_TRUE(p.contains("charts")) << p.dump();
  EXPECT_EQ(p["charts"].size(), 4u) << p.dump();
  expect_chart(p, "curve-loss", {{"train loss", 3}, {"validation loss", 3}});
  expect_chart(p, "curve-accuracy", {{"train accuracy", 3}, {"validation accuracy", 3}});
  std::vector<std::pair<std::string, int>> parts;
  for (const char* part : {"input_wait", "h2d", "forward", "backward", "allreduce", "update", "callbacks"}) parts.emplace_back(part, 9);
  expect_chart(p, "step-time", parts);
  expect_chart(p, "memory", {{"in use after the step", 9}, {"peak during the epoch (epoch_memory_peak_bytes)", 3}});
  ASSERT_TRUE(p["verdict"].is_object()) << p.dump();
  EXPECT_GT(p["verdict"]["h"].get<double>(), 0);
  const std::string out = run("profile " + logs.string() + " --peak-gflops 100").out;
  EXPECT_NE(out.find("verdict: " + p["verdict"]["text"].get<std::string>()), std::string::npos) << out;
  EXPECT_TRUE(p["missing"].empty()) << "nothing is missing from this run: " << p["missing"].dump();

  // The page itself (no probe), painted: the train (#0072B2) and validation (#D55E00)
  // curves' colours are inside the loss chart's box on the screenshot.
  const json& loss = *chart(p, "curve-loss");
  const fs::path png = dir_ / "report.png";
  const std::string cmd = "timeout 120 " + chromium("--screenshot=" + png.string() + " file://" + page.string()) + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string bytes = slurp(png);
  ASSERT_FALSE(bytes.empty()) << "no screenshot";
  const nnfit::Tensor img = nnfit::io::decode_image(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), png.string(), 3);
  const std::int64_t height = img.shape()[0], width = img.shape()[1];
  const auto x0 = static_cast<std::int64_t>(loss["x"].get<double>()), y0 = static_cast<std::int64_t>(loss["y"].get<double>());
  const auto x1 = x0 + static_cast<std::int64_t>(loss["w"].get<double>()), y1 = y0 + static_cast<std::int64_t>(loss["h"].get<double>());
  ASSERT_TRUE(x0 >= 0 && y0 >= 0 && x1 <= width && y1 <= height) << "the loss chart is outside the screenshot: " << loss.dump();
  std::int64_t train = 0, validation = 0;
  const auto* rgb = img.data<std::uint8_t>();
  for (std::int64_t y = y0; y < y1; ++y) {
    for (std::int64_t x = x0; x < x1; ++x) {
      const std::uint8_t* px = rgb + 3 * (y * width + x);
      const int red = px[0], green = px[1], blue = px[2];
      train += std::abs(red - 0x00) < 8 && std::abs(green - 0x72) < 8 && std::abs(blue - 0xB2) < 8;
      validation += std::abs(red - 0xD5) < 8 && std::abs(green - 0x5E) < 8 && std::abs(blue - 0x00) < 8;
    }
  }
  EXPECT_GT(train, 100) << "train colour pixels in the loss chart";
  EXPECT_GT(validation, 100) << "validation colour pixels in the loss chart";
}

TEST_F(HtmlReportBrowserTest, ALongLogWithoutEventFilesRendersBucketsAndSaysWhatIsMissing) {
  const fs::path logs = dir_ / "logs", page = dir_ / "report.html";
  fs::create_directories(logs);
  std::string lines;
  for (int i = 1; i <= 20'000; ++i) {
    lines += "{\"step\":" + std::to_string(i) + ",\"input_wait_us\":" + std::to_string(i % 50) +
             ",\"h2d_us\":0,\"forward_us\":300,\"backward_us\":" + std::to_string(400 + i % 97) +
             ",\"allreduce_us\":0,\"update_us\":50,\"callbacks_us\":1,\"memory_in_use_bytes\":" + std::to_string(1 << 20) + "}\n";
  }
  write_file(logs / "steps.jsonl", lines);
  const Result r = run("profile " + logs.string() + " --peak-gflops 100 --html " + page.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(fs::file_size(page), 200'000u);

  const json p = probe(page);
  ASSERT_TRUE(p.contains("charts")) << p.dump();
  EXPECT_EQ(p["charts"].size(), 2u) << p.dump();
  // In drawing order: the range band is behind the stacked parts.
  std::vector<std::pair<std::string, int>> series = {{"fastest to slowest step in bucket", 600}};
  for (const char* part : {"input_wait", "h2d", "forward", "backward", "allreduce", "update", "callbacks"}) series.emplace_back(part, 600);
  expect_chart(p, "step-time", series);
  expect_chart(p, "memory", {{"min–max in bucket", 600}, {"in use after the step (bucket mean)", 600}});
  // The sentences are on the page, visible.
  bool events = false, peaks = false;
  for (const auto& m : p["missing"]) {
    EXPECT_GT(m["h"].get<double>(), 10) << m.dump();
    events |= m["text"].get<std::string>().find("No TensorBoard event files in " + logs.string() + "/train") != std::string::npos;
    peaks |= m["text"].get<std::string>().find("No epoch_memory_peak_bytes") != std::string::npos;
  }
  EXPECT_TRUE(events) << p["missing"].dump();
  EXPECT_TRUE(peaks) << p["missing"].dump();
}

}  // namespace

int main(int argc, char** argv) {
  g_chromium = find_chromium();
  if (g_chromium.empty()) {
    std::printf("html_report_browser: SKIPPED: no chromium on PATH (scripts/setup.sh installs Debian's chromium; "
                "NNFIT_CHROMIUM=/path/to/chromium names another)\n");
    return 77;
  }
  std::printf("html_report_browser: using %s\n", g_chromium.c_str());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
