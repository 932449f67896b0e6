#include "zone/script_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace zone {

std::vector<script::ScriptFile> read_script_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (dir.empty()) return {};
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw std::runtime_error("game.scripts_dir: '" + dir + "' is not a directory");
  }
  std::vector<fs::path> paths;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".lua") continue;
    if (paths.size() == kMaxScriptFiles) {
      throw std::runtime_error("game.scripts_dir: '" + dir + "' holds more than " +
                               std::to_string(kMaxScriptFiles) + " .lua files");
    }
    paths.push_back(it->path());
  }
  if (ec) throw std::runtime_error("game.scripts_dir: '" + dir + "': " + ec.message());
  if (paths.empty()) throw std::runtime_error("game.scripts_dir: '" + dir + "' holds no .lua file");
  std::sort(paths.begin(), paths.end());
  std::vector<script::ScriptFile> files;
  for (const fs::path& p : paths) {
    const std::string name = p.string();
    if (!fs::is_regular_file(p, ec)) {
      throw std::runtime_error("game.scripts_dir: " + name + " is not a regular file");
    }
    const auto size = fs::file_size(p, ec);
    if (ec || size > kMaxScriptFileBytes) {
      throw std::runtime_error("game.scripts_dir: " + name + " is larger than " +
                               std::to_string(kMaxScriptFileBytes) + " bytes");
    }
    std::ifstream in(p, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) throw std::runtime_error("game.scripts_dir: cannot read " + name);
    files.push_back({name, text.str()});
  }
  return files;
}

}  // namespace zone
