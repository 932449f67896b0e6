#include "config/config_loader.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "config/config_schema.hpp"
#include "config/config_text.hpp"
#include "config/key_suggest.hpp"

namespace zone::config {
namespace {

std::string unknown_key_message(std::string_view path) {
  std::vector<std::string_view> known(sections().begin(), sections().end());
  for (const KeySpec& k : schema()) known.push_back(k.path);
  const auto suggestions = suggest_keys(path, known);
  std::string message = fmt::format("unknown key '{}'", path);
  for (std::size_t i = 0; i < suggestions.size(); ++i) {
    message += i == 0 ? " (did you mean " : " or ";
    message += fmt::format("'{}'", suggestions[i]);
  }
  if (!suggestions.empty()) message += "?)";
  return message;
}

std::string bad_value_message(const KeySpec& key, const RawValue& raw) {
  return fmt::format("expected {}, got {}", key.expected, describe_found(raw));
}

std::string section_keys(std::string_view section) {
  std::string out;
  for (const KeySpec& k : schema()) {
    if (k.section() != section) continue;
    if (!out.empty()) out += ", ";
    out += k.leaf();
  }
  return out;
}

// Walks one YAML document, filling a LoadResult.
class Loader {
 public:
  explicit Loader(LoadResult& result) : result_(result) {}

  void load(const YAML::Node& root) {
    if (root.IsNull()) return;  // empty file (or only comments): all defaults
    if (!root.IsMap()) {
      error("", line_of(root),
            fmt::format("expected a map of sections ({}) at the top level, got {}",
                        join(sections()), describe_found(to_raw(root))));
      return;
    }
    for_each_key(root, "",
                 [this](const std::string& name, const YAML::Node& key, const YAML::Node& value) {
                   load_section(name, key, value);
                 });
    run_cross_checks();
  }

 private:
  static std::string join(const std::vector<std::string_view>& names) {
    std::string out;
    for (const auto n : names) {
      if (!out.empty()) out += ", ";
      out += n;
    }
    return out;
  }

  void error(std::string key, int line, std::string message) {
    result_.errors.push_back({std::move(key), line, std::move(message)});
  }

  // Calls fn(path, key node, value node) for each entry of `map`, rejecting keys that are
  // not plain scalars and duplicates. `prefix` is "" at the top level, "aoi." below.
  template <typename Fn>
  void for_each_key(const YAML::Node& map, const std::string& prefix, Fn&& fn) {
    std::map<std::string, int, std::less<>> seen;
    for (const auto& entry : map) {
      const YAML::Node& key = entry.first;
      const YAML::Node& value = entry.second;
      if (!key.IsScalar()) {
        error(prefix.empty() ? std::string() : prefix.substr(0, prefix.size() - 1), line_of(key),
              fmt::format("expected a key name, got {}", describe_found(to_raw(key))));
        continue;
      }
      const std::string path = prefix + key.Scalar();
      const auto [it, fresh] = seen.emplace(key.Scalar(), line_of(key));
      if (!fresh) {
        error(path, line_of(key),
              fmt::format("duplicate key (first given on line {}); remove one", it->second));
        bad_keys_.insert(path);
        continue;
      }
      fn(path, key, value);
    }
  }

  void load_section(const std::string& name, const YAML::Node& key, const YAML::Node& value) {
    if (std::find(sections().begin(), sections().end(), name) == sections().end()) {
      error(name, line_of(key), unknown_key_message(name));
      return;
    }
    if (value.IsNull()) return;  // "aoi:" with every key commented out
    if (!value.IsMap()) {
      error(name, line_of(key),
            fmt::format("expected a section (a map with keys {}), got {}", section_keys(name),
                        describe_found(to_raw(value))));
      for (const KeySpec& k : schema()) {
        if (k.section() == name) bad_keys_.emplace(k.path);
      }
      return;
    }
    for_each_key(value, name + ".",
                 [this](const std::string& path, const YAML::Node& k, const YAML::Node& v) {
                   load_key(path, k, v);
                 });
  }

  void load_key(const std::string& path, const YAML::Node& key, const YAML::Node& value) {
    const KeySpec* spec = find_key(path);
    if (spec == nullptr) {
      error(path, line_of(key), unknown_key_message(path));
      return;
    }
    key_lines_.emplace(path, line_of(key));
    if (result_.keys_set) result_.keys_set->push_back(path);
    const RawValue raw = to_raw(value);
    if (!spec->assign(raw, result_.config)) {
      error(path, line_of(key), bad_value_message(*spec, raw));
      bad_keys_.insert(path);
    }
  }

  void run_cross_checks() {
    for (const CrossCheck& c : cross_checks()) {
      const bool involved_bad = std::any_of(c.keys.begin(), c.keys.end(), [this](auto k) {
        return bad_keys_.find(k) != bad_keys_.end();
      });
      if (involved_bad) continue;
      auto message = c.check(result_.config);
      if (!message) continue;
      // Point at the first of its keys the file actually sets.
      int line = 0;
      for (const auto k : c.keys) {
        if (const auto it = key_lines_.find(k); it != key_lines_.end()) {
          line = it->second;
          break;
        }
      }
      error(std::string(c.keys.front()), line, std::move(*message));
    }
  }

  LoadResult& result_;
  std::map<std::string, int, std::less<>> key_lines_;  // keys the file sets -> line
  std::set<std::string, std::less<>> bad_keys_;        // keys with an error of their own
};

}  // namespace

std::string format_error(const ConfigError& error, std::string_view source) {
  std::string out(source);
  if (error.line > 0) {
    out += source.empty() ? fmt::format("line {}", error.line) : fmt::format(":{}", error.line);
  }
  if (!out.empty()) out += ": ";
  if (!error.key.empty()) out += error.key + ": ";
  out += error.message;
  return out;
}

std::string format_errors(std::span<const ConfigError> errors, std::string_view source) {
  std::string out;
  for (const ConfigError& e : errors) {
    out += format_error(e, source);
    out += '\n';
  }
  return out;
}

std::string LoadResult::error_report() const {
  return format_errors(errors, source);
}

LoadResult load_config_string(std::string_view yaml, std::string source_name) {
  LoadResult result;
  result.source = std::move(source_name);
  result.keys_set.emplace();
  result.lines = static_cast<int>(std::count(yaml.begin(), yaml.end(), '\n')) +
                 (yaml.empty() || yaml.back() == '\n' ? 0 : 1);
  YAML::Node root;
  if (auto error = parse_one_document(yaml, root)) {
    result.errors.push_back(std::move(*error));
    return result;
  }
  Loader(result).load(root);
  return result;
}

LoadResult load_config_file(const std::string& path) {
  std::string text;
  if (auto message = read_config_text(path, text)) {
    LoadResult result;
    result.source = path;
    result.errors.push_back({"", 0, std::move(*message)});
    return result;
  }
  return load_config_string(text, path);
}

LoadResult refuse_dropped_keys(const ZoneConfig& running, LoadResult next) {
  if (!next.ok() || !next.keys_set) return next;
  static const ZoneConfig defaults;
  std::vector<ConfigError> dropped;
  for (const KeySpec& k : schema()) {
    const auto& set = *next.keys_set;
    if (std::find(set.begin(), set.end(), k.path) != set.end()) continue;
    const std::string fallback = k.show(defaults);
    const std::string now = k.show(running);
    // Only a key that this reload would really put back to its default (a command-line
    // override keeps its value, so it is not one).
    if (k.show(next.config) != fallback || now == fallback) continue;
    dropped.push_back(
        {std::string(k.path), 0,
         fmt::format("missing from the file (it ends at line {}): the running zone has {}, and "
                     "this reload would reset it to the default {}; expected the key to be "
                     "set (a truncated file?). To return to the default on purpose, write "
                     "'{}: {}' under '{}:'",
                     next.lines, now, fallback, k.leaf(), fallback, k.section())});
  }
  if (!dropped.empty()) {
    next.errors.insert(next.errors.end(), std::make_move_iterator(dropped.begin()),
                       std::make_move_iterator(dropped.end()));
  }
  return next;
}

std::vector<ConfigError> validate(const ZoneConfig& config) {
  std::vector<ConfigError> errors;
  std::set<std::string_view> bad;
  for (const KeySpec& k : schema()) {
    if (k.valid(config)) continue;
    errors.push_back(
        {std::string(k.path), 0, fmt::format("expected {}, got {}", k.expected, k.show(config))});
    bad.insert(k.path);
  }
  for (const CrossCheck& c : cross_checks()) {
    if (std::any_of(c.keys.begin(), c.keys.end(), [&bad](auto k) { return bad.count(k) > 0; })) {
      continue;
    }
    if (auto message = c.check(config)) {
      errors.push_back({std::string(c.keys.front()), 0, std::move(*message)});
    }
  }
  return errors;
}

std::optional<ConfigError> set_value(ZoneConfig& config, std::string_view key,
                                     std::string_view value) {
  const KeySpec* spec = find_key(key);
  if (spec == nullptr) return ConfigError{std::string(key), 0, unknown_key_message(key)};
  RawValue raw;
  raw.kind = RawValue::Kind::kScalar;
  raw.text = std::string(value);
  if (!spec->assign(raw, config)) {
    return ConfigError{std::string(key), 0, bad_value_message(*spec, raw)};
  }
  return std::nullopt;
}

std::vector<KeyChange> diff(const ZoneConfig& before, const ZoneConfig& after) {
  std::vector<KeyChange> out;
  for (const KeySpec& k : schema()) {
    std::string a = k.show(before);
    std::string b = k.show(after);
    if (a != b) out.push_back({std::string(k.path), std::move(a), std::move(b)});
  }
  return out;
}

std::string describe(const ZoneConfig& config) {
  std::string out;
  std::string_view section;
  for (const KeySpec& k : schema()) {
    if (k.section() != section) {
      section = k.section();
      out += fmt::format("{}:\n", section);
    }
    out += fmt::format("  {}: {}\n", k.leaf(), k.show(config));
  }
  return out;
}

std::vector<KeyInfo> config_keys() {
  std::vector<KeyInfo> out;
  out.reserve(schema().size());
  for (const KeySpec& k : schema()) out.push_back({k.path, k.expected});
  return out;
}

}  // namespace zone::config
