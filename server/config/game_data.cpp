#include "config/game_data.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "config/config_text.hpp"

namespace zone::config {

namespace {

struct ValueType {
  std::string_view name;
  std::uint8_t bits;
  bool is_signed;
};
constexpr ValueType kValueTypes[] = {{"bool", 1, false}, {"u8", 8, false}, {"u16", 16, false},
                                     {"u32", 32, false}, {"i8", 8, true},  {"i16", 16, true},
                                     {"i32", 32, true}};
constexpr std::string_view kValueTypeNames = "bool, u8, u16, u32, i8, i16 or i32";

// The range of a property's values (a u32 is held in 32 bits: its values above
// 2^31 - 1 are not accepted as defaults, so a value always reads the same in both).
std::int64_t min_of(const protocol::FieldSpec& f) {
  return f.is_signed ? -(std::int64_t{1} << (f.bits - 1)) : 0;
}
std::int64_t max_of(const protocol::FieldSpec& f) {
  if (f.is_signed) return (std::int64_t{1} << (f.bits - 1)) - 1;
  return f.bits >= 32 ? 0x7FFFFFFF : (std::int64_t{1} << f.bits) - 1;
}

std::optional<std::int64_t> integer_of(const YAML::Node& node) {
  const RawValue raw = to_raw(node);
  if (raw.kind != RawValue::Kind::kScalar || raw.quoted) return std::nullopt;
  if (raw.text == "true") return 1;
  if (raw.text == "false") return 0;
  std::int64_t value = 0;
  const char* end = raw.text.data() + raw.text.size();
  const auto [ptr, ec] = std::from_chars(raw.text.data(), end, value);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

std::optional<std::string> word_of(const YAML::Node& node) {
  const RawValue raw = to_raw(node);
  if (raw.kind != RawValue::Kind::kScalar) return std::nullopt;
  return raw.text;
}

class GameDataLoader {
 public:
  explicit GameDataLoader(GameDataResult& out) : out_(out), walk_(out.errors) {}

  void load(const YAML::Node& root) {
    if (root.IsNull()) {
      walk_.error("", 0, "expected the sections properties and types; the file is empty");
      return;
    }
    YAML::Node properties, types, actions, events;
    bool has_properties = false, has_types = false, has_actions = false, has_events = false;
    int types_line = line_of(root);
    walk_.map(root, "", line_of(root), {"properties", "types", "actions", "events"},
              [&](const std::string& key, const YAML::Node& value, int line) {
                if (key == "properties") {
                  properties = value;
                  has_properties = true;
                }
                if (key == "actions") {
                  actions = value;
                  has_actions = true;
                }
                if (key == "events") {
                  events = value;
                  has_events = true;
                }
                if (key == "types") {
                  types = value;
                  types_line = line;
                  has_types = true;
                }
              });
    if (has_properties) {
      walk_.named_map(properties, "properties", line_of(properties),
                      [&](const std::string& name, const YAML::Node& value, int line) {
                        property(name, value, line);
                      });
    }
    if (has_actions) {
      walk_.named_map(actions, "actions", line_of(actions),
                      [&](const std::string& name, const YAML::Node& value, int line) {
                        action(name, value, line);
                      });
    }
    if (has_events) {
      walk_.named_map(events, "events", line_of(events),
                      [&](const std::string& name, const YAML::Node& value, int line) {
                        event(name, value, line);
                      });
    }
    if (!has_types) {
      walk_.error("types", types_line, "missing: expected at least one entity type of kind player");
      return;
    }
    std::vector<protocol::EntityTypeSpec> specs;
    walk_.named_map(types, "types", line_of(types),
                    [&](const std::string& name, const YAML::Node& value, int line) {
                      type(name, value, line, specs);
                    });
    if (!out_.errors.empty()) return;
    if (auto error = out_.data.schema.set_types(std::move(specs))) {
      walk_.error("types", types_line, *error);
    }
  }

 private:
  void property(const std::string& name, const YAML::Node& node, int line) {
    const std::string path = "properties." + name;
    protocol::FieldSpec f;
    f.name = name;
    bool has_type = false;
    const std::size_t errors_before = out_.errors.size();
    walk_.map(node, path, line,
              {"type", "audience", "update", "persistent", "encoding", "description"},
              [&](const std::string& key, const YAML::Node& value, int key_line) {
                const std::string full = path + "." + key;
                const auto word = word_of(value);
                auto bad = [&](std::string_view expected) {
                  walk_.error(
                      full, key_line,
                      fmt::format("expected {}, got {}", expected, describe_found(to_raw(value))));
                };
                if (key == "type") {
                  for (const ValueType& t : kValueTypes) {
                    if (word && *word == t.name) {
                      f.bits = t.bits;
                      f.is_signed = t.is_signed;
                      has_type = true;
                    }
                  }
                  if (!has_type) bad(kValueTypeNames);
                } else if (key == "audience") {
                  if (word == "everyone") {
                    f.audience = protocol::Audience::kEveryone;
                  } else if (word == "owner") {
                    f.audience = protocol::Audience::kOwner;
                  } else if (word == "party") {
                    f.audience = protocol::Audience::kParty;
                  } else {
                    bad("everyone, owner or party");
                  }
                } else if (key == "update") {
                  if (word == "immediate") {
                    f.update = protocol::UpdateTier::kImmediate;
                  } else if (word == "tiered") {
                    f.update = protocol::UpdateTier::kTiered;
                  } else {
                    bad("immediate or tiered");
                  }
                } else if (key == "persistent") {
                  if (word == "true" || word == "false") {
                    f.persistent = *word == "true";
                  } else {
                    bad("true or false");
                  }
                } else if (key == "encoding") {
                  if (word == "absolute") {
                    f.rule = protocol::DeltaRule::kAbsolute;
                  } else if (word == "delta") {
                    f.rule = protocol::DeltaRule::kDelta;
                  } else {
                    bad("absolute or delta");
                  }
                } else if (key == "description") {
                  if (!word || word->size() > protocol::kMaxUnitBytes) {
                    bad(fmt::format("a text of at most {} bytes", protocol::kMaxUnitBytes));
                  } else {
                    f.unit = *word;
                  }
                }
              });
    if (out_.errors.size() != errors_before || !node.IsMap()) {
      refused_.push_back(name);  // reported: its defaults are not reported again
      return;
    }
    if (!has_type) {
      walk_.error(path + ".type", line, fmt::format("missing: expected {}", kValueTypeNames));
      return;
    }
    if (auto error = out_.data.schema.add_field(f)) {
      walk_.error(path, line, *error);
      refused_.push_back(name);
    }
  }

  // A text of at most kMaxUnitBytes (a description), or an error.
  void description(const std::string& full, const YAML::Node& value, int line, std::string& out) {
    const auto word = word_of(value);
    if (!word || word->size() > protocol::kMaxUnitBytes) {
      walk_.error(full, line,
                  fmt::format("expected a text of at most {} bytes, got {}", protocol::kMaxUnitBytes,
                              describe_found(to_raw(value))));
      return;
    }
    out = *word;
  }

  void action(const std::string& name, const YAML::Node& node, int line) {
    const std::string path = "actions." + name;
    protocol::ActionSpec a;
    a.name = name;
    const std::size_t errors_before = out_.errors.size();
    walk_.map(node, path, line, {"target", "args", "description"},
              [&](const std::string& key, const YAML::Node& value, int key_line) {
                const std::string full = path + "." + key;
                const auto word = word_of(value);
                if (key == "target") {
                  if (word == "none") {
                    a.target = protocol::ActionTarget::kNone;
                  } else if (word == "entity") {
                    a.target = protocol::ActionTarget::kEntity;
                  } else if (word == "optional") {
                    a.target = protocol::ActionTarget::kOptional;
                  } else {
                    walk_.error(full, key_line,
                                fmt::format("expected none, entity or optional, got {}",
                                            describe_found(to_raw(value))));
                  }
                } else if (key == "args") {
                  const auto n = integer_of(value);
                  if (!n || *n < 0 || *n > static_cast<std::int64_t>(protocol::kMaxArgs)) {
                    walk_.error(full, key_line,
                                fmt::format("expected an integer >= 0 and <= {}, got {}",
                                            protocol::kMaxArgs, describe_found(to_raw(value))));
                  } else {
                    a.args = static_cast<std::uint8_t>(*n);
                  }
                } else if (key == "description") {
                  description(full, value, key_line, a.unit);
                }
              });
    if (out_.errors.size() != errors_before || !node.IsMap()) return;
    if (auto error = out_.data.schema.add_action(a)) walk_.error(path, line, *error);
  }

  void event(const std::string& name, const YAML::Node& node, int line) {
    const std::string path = "events." + name;
    protocol::EventSpec e;
    e.name = name;
    const std::size_t errors_before = out_.errors.size();
    walk_.map(node, path, line, {"audience", "args", "text", "description"},
              [&](const std::string& key, const YAML::Node& value, int key_line) {
                const std::string full = path + "." + key;
                const auto word = word_of(value);
                if (key == "audience") {
                  if (word == "everyone") {
                    e.audience = protocol::Audience::kEveryone;
                  } else if (word == "owner") {
                    e.audience = protocol::Audience::kOwner;
                  } else if (word == "party") {
                    e.audience = protocol::Audience::kParty;
                  } else {
                    walk_.error(full, key_line,
                                fmt::format("expected everyone, owner or party, got {}",
                                            describe_found(to_raw(value))));
                  }
                } else if (key == "args") {
                  if (!value.IsSequence()) {
                    walk_.error(full, key_line,
                                fmt::format("expected a list of argument names, got {}",
                                            describe_found(to_raw(value))));
                    return;
                  }
                  for (const YAML::Node& arg : value) {
                    const auto arg_name = word_of(arg);
                    if (!arg_name) {
                      walk_.error(full, line_of(arg),
                                  fmt::format("expected an argument name, got {}",
                                              describe_found(to_raw(arg))));
                      return;
                    }
                    e.args.push_back(*arg_name);
                  }
                } else if (key == "text") {
                  if (word == "true" || word == "false") {
                    e.text = *word == "true";
                  } else {
                    walk_.error(full, key_line,
                                fmt::format("expected true or false, got {}",
                                            describe_found(to_raw(value))));
                  }
                } else if (key == "description") {
                  description(full, value, key_line, e.unit);
                }
              });
    if (out_.errors.size() != errors_before || !node.IsMap()) return;
    if (auto error = out_.data.schema.add_event(e)) walk_.error(path, line, *error);
  }

  void type(const std::string& name, const YAML::Node& node, int line,
            std::vector<protocol::EntityTypeSpec>& specs) {
    const std::string path = "types." + name;
    const protocol::Schema& schema = out_.data.schema;
    GameTypeData t;
    t.name = name;
    t.defaults.assign(schema.size() - protocol::kEngineFieldCount, 0);
    bool has_kind = false, kind_given = false;
    walk_.map(node, path, line, {"kind", "defaults"},
              [&](const std::string& key, const YAML::Node& value, int key_line) {
                const std::string full = path + "." + key;
                if (key == "kind") {
                  kind_given = true;
                  const auto word = word_of(value);
                  if (word == "player" || word == "npc") {
                    t.kind = *word == "player" ? protocol::EntityKind::kPlayer
                                               : protocol::EntityKind::kNpc;
                    has_kind = true;
                  } else {
                    walk_.error(full, key_line,
                                fmt::format("expected player or npc, got {}",
                                            describe_found(to_raw(value))));
                  }
                  return;
                }
                walk_.named_map(value, full, key_line,
                                [&](const std::string& property, const YAML::Node& v, int l) {
                                  default_value(full + "." + property, property, v, l, t);
                                });
              });
    if (!node.IsMap()) return;
    if (!has_kind) {
      if (!kind_given) walk_.error(path + ".kind", line, "missing: expected player or npc");
      return;
    }
    specs.push_back({name, t.kind});
    out_.data.types.push_back(std::move(t));
  }

  void default_value(const std::string& full, const std::string& property, const YAML::Node& v,
                     int line, GameTypeData& t) {
    const protocol::Schema& schema = out_.data.schema;
    const auto row = schema.find_field(property);
    if (std::find(refused_.begin(), refused_.end(), property) != refused_.end()) return;
    if (!row || *row < protocol::kEngineFieldCount) {
      std::string names;
      for (std::size_t i = protocol::kEngineFieldCount; i < schema.size(); ++i) {
        names += (names.empty() ? "" : ", ") + schema.field(i).name;
      }
      walk_.error(full, line,
                  fmt::format("'{}' is not a property of this game (its properties: {})", property,
                              names.empty() ? "none" : names));
      return;
    }
    const protocol::FieldSpec& f = schema.field(*row);
    const auto value = integer_of(v);
    if (!value || *value < min_of(f) || *value > max_of(f)) {
      walk_.error(full, line,
                  fmt::format("expected an integer >= {} and <= {}, got {}", min_of(f), max_of(f),
                              describe_found(to_raw(v))));
      return;
    }
    t.defaults[*row - protocol::kEngineFieldCount] = static_cast<std::int32_t>(*value);
  }

  GameDataResult& out_;
  KeyWalker walk_;
  std::vector<std::string> refused_;  // properties declared with an error
};

}  // namespace

std::size_t GameData::player_type() const {
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i].kind == protocol::EntityKind::kPlayer) return i;
  }
  return 0;
}

std::size_t GameData::npc_type() const {
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i].kind == protocol::EntityKind::kNpc) return i;
  }
  return player_type();
}

const GameTypeData* GameData::find_type(std::string_view name) const {
  for (const GameTypeData& t : types) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

GameData builtin_game_data() {
  GameData game;
  protocol::FieldSpec health;
  health.name = "health";
  health.bits = 16;
  health.update = protocol::UpdateTier::kImmediate;
  health.persistent = true;
  health.unit = "hit points";
  protocol::FieldSpec max_health;
  max_health.name = "max_health";
  max_health.bits = 16;
  max_health.unit = "hit points when unhurt";
  game.schema.add_field(health);
  game.schema.add_field(max_health);
  game.types = {{"player", protocol::EntityKind::kPlayer, {100, 100}},
                {"npc", protocol::EntityKind::kNpc, {100, 100}}};
  return game;
}

std::string GameDataResult::error_report() const {
  return format_errors(errors, source);
}

GameDataResult load_game_data_string(std::string_view yaml, std::string source_name) {
  GameDataResult result;
  result.source = std::move(source_name);
  YAML::Node root;
  if (auto error = parse_one_document(yaml, root)) {
    result.errors.push_back(std::move(*error));
    return result;
  }
  GameDataLoader(result).load(root);
  if (!result.ok()) result.data = GameData{};
  return result;
}

GameDataResult load_game_data_file(const std::string& path) {
  std::string text;
  if (auto message = read_config_text(path, text, kMaxGameDataBytes)) {
    GameDataResult result;
    result.source = path;
    result.errors.push_back({"", 0, std::move(*message)});
    return result;
  }
  return load_game_data_string(text, path);
}

}  // namespace zone::config
