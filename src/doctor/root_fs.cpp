// RootFs: path mapping into a probe root, with every I/O failure turned into a problem.
#include "root_fs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace nnfit::doctor {

RootFs::RootFs(std::string root, std::vector<ProbeProblem>* problems)
    : root_(std::move(root)), problems_(problems) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string RootFs::raw(const std::string& path) const {
  if (root_ == "/" || root_.empty()) return path;
  return root_ + (starts_with(path, "/") ? path : "/" + path);
}

std::string RootFs::host(const std::string& path) const {
  if (root_ == "/" || root_.empty()) return path;
  // Absolute symlinks inside the tree point into the tree, not at the host's files.
  return raw(resolve(path));
}

bool RootFs::exists(const std::string& path) const {
  std::error_code ec;
  return fs::exists(host(path), ec);
}

bool RootFs::is_dir(const std::string& path) const {
  std::error_code ec;
  return fs::is_directory(host(path), ec);
}

void RootFs::problem(const std::string& path, const std::string& what) const {
  if (problems_) problems_->push_back({path, what});
}

std::optional<std::string> RootFs::read(const std::string& path, std::size_t max_bytes) const {
  std::error_code ec;
  std::string h = host(path);
  if (!fs::exists(h, ec)) return std::nullopt;
  if (fs::is_directory(h, ec)) {
    problem(path, "expected a file, found a directory");
    return std::nullopt;
  }
  // Opening a FIFO for reading blocks until a writer comes, and a device may never end:
  // the doctor reads regular files only.
  if (!fs::is_regular_file(h, ec)) {
    problem(path, "expected a regular file, found a FIFO, socket or device; not read");
    return std::nullopt;
  }
  std::ifstream in(h, std::ios::binary);
  if (!in) {
    problem(path, "exists but cannot be read (permissions?)");
    return std::nullopt;
  }
  // The buffer is the file's size (at most max_bytes), not max_bytes: the 64 MiB cap of
  // the dpkg status file cost every probe a 64 MiB allocation, zeroed.
  const std::uintmax_t size = fs::file_size(h, ec);
  std::string text(ec ? max_bytes : static_cast<std::size_t>(std::min<std::uintmax_t>(size, max_bytes)), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::vector<std::string> RootFs::list(const std::string& path) const {
  std::vector<std::string> out;
  std::error_code ec;
  std::string h = host(path);
  if (!fs::is_directory(h, ec)) return out;
  fs::directory_iterator it(h, ec);
  if (ec) {
    problem(path, "directory cannot be listed: " + ec.message());
    return out;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string RootFs::resolve(const std::string& path) const {
  // Walk component by component so an absolute symlink target stays inside the root.
  std::vector<std::string> done;
  std::vector<std::string> todo = split(path, '/');
  std::reverse(todo.begin(), todo.end());
  int links = 0;
  while (!todo.empty()) {
    std::string part = todo.back();
    todo.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(part);
    std::string current;
    for (const auto& d : done) current += "/" + d;
    std::error_code ec;
    if (fs::is_symlink(raw(current), ec)) {
      // A symlink loop: name a path that cannot exist, so nothing outside the root is read.
      if (links >= 32) return "/.nnfit-doctor-symlink-loop" + path;
      ++links;
      std::string target = fs::read_symlink(raw(current), ec).string();
      if (ec) continue;
      done.pop_back();
      if (starts_with(target, "/")) done.clear();
      std::vector<std::string> parts = split(target, '/');
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
    }
  }
  std::string out;
  for (const auto& d : done) out += "/" + d;
  return out.empty() ? "/" : out;
}

std::string join_path(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string trim(const std::string& text) {
  std::size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  std::size_t e = text.find_last_not_of(" \t\r\n");
  return text.substr(b, e - b + 1);
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}


namespace {
bool blank(char c) { return c == ' ' || c == '\t'; }
}  // namespace

std::string define_value(const std::string& text, const std::string& name, std::string_view chars, std::size_t max_chars) {
  for (std::size_t at = text.find('#'); at != std::string::npos; at = text.find('#', at + 1)) {
    std::size_t i = at + 1;
    while (i < text.size() && blank(text[i])) ++i;
    if (text.compare(i, 6, "define") != 0) continue;
    i += 6;
    if (i >= text.size() || !blank(text[i])) continue;
    while (i < text.size() && blank(text[i])) ++i;
    if (text.compare(i, name.size(), name) != 0) continue;
    i += name.size();
    if (i >= text.size() || !blank(text[i])) continue;
    while (i < text.size() && blank(text[i])) ++i;
    if (i < text.size() && text[i] == '"') ++i;
    std::size_t end = i;
    while (end < text.size() && chars.find(text[end]) != std::string_view::npos) ++end;
    if (end == i) continue;
    return end - i <= max_chars ? text.substr(i, end - i) : "";
  }
  return "";
}

}  // namespace nnfit::doctor
