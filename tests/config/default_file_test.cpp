// configs/zone.yaml: loads cleanly, equals the built-in defaults, lists and documents
// every key with the same default and range as the code.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config/config_loader.hpp"
#include "config_test_util.hpp"

using namespace zone::config;
using zone::config::test::check_same;

namespace {

const std::string kDefaultFile = std::string(ZONE_SOURCE_DIR) + "/configs/zone.yaml";

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// key -> value text as describe() prints it.
std::map<std::string, std::string> described_defaults() {
  std::map<std::string, std::string> out;
  std::istringstream text(describe(ZoneConfig{}));
  std::string section;
  for (std::string line; std::getline(text, line);) {
    if (line.rfind("  ", 0) != 0) {
      section = line.substr(0, line.find(':'));
      continue;
    }
    const auto colon = line.find(": ");
    out[section + "." + line.substr(2, colon - 2)] = line.substr(colon + 2);
  }
  return out;
}

}  // namespace

TEST_CASE("configs/zone.yaml loads with no errors and equals the built-in defaults") {
  const LoadResult r = load_config_file(kDefaultFile);
  INFO(r.error_report());
  REQUIRE(r.ok());
  check_same(r.config, ZoneConfig{});
  CHECK(describe(r.config) == describe(ZoneConfig{}));
}

TEST_CASE("configs/zone.yaml sets every key") {
  const YAML::Node root = YAML::LoadFile(kDefaultFile);
  for (const KeyInfo& k : config_keys()) {
    const std::string key(k.key);
    const auto dot = key.find('.');
    const YAML::Node section = root[key.substr(0, dot)];
    CHECK_MESSAGE(section.IsMap(), key);
    if (section.IsMap()) CHECK_MESSAGE(section[key.substr(dot + 1)].IsScalar(), key);
  }
}

TEST_CASE("configs/zone.yaml documents every key: its default and its allowed range") {
  const auto lines = read_lines(kDefaultFile);
  REQUIRE_FALSE(lines.empty());
  const auto defaults = described_defaults();
  std::string section;
  std::size_t documented = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty() || line[0] == '#') continue;
    if (line[0] != ' ') {
      section = line.substr(0, line.find(':'));
      continue;
    }
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::string key = section + "." + t.substr(0, t.find(':'));
    CAPTURE(key);
    // The comment block right above the key, joined into one line.
    std::string comment;
    for (std::size_t j = i; j-- > 0;) {
      const std::string c = trim(lines[j]);
      if (c.empty() || c[0] != '#') break;
      comment = trim(c.substr(1)) + " " + comment;
    }
    REQUIRE(defaults.count(key) == 1);
    const std::vector<KeyInfo> keys = config_keys();
    const auto spec =
        std::find_if(keys.begin(), keys.end(), [&](const KeyInfo& k) { return k.key == key; });
    REQUIRE(spec != keys.end());
    CHECK_MESSAGE(comment.find("Default: " + defaults.at(key) + ".") != std::string::npos, comment);
    CHECK_MESSAGE(
        comment.find("Allowed: " + std::string(spec->expected) + ".") != std::string::npos,
        comment);
    // The value written is the default, as describe() prints it.
    CHECK(trim(t.substr(t.find(':') + 1)) == defaults.at(key));
    ++documented;
  }
  CHECK(documented == config_keys().size());
}
