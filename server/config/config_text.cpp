#include "config/config_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include "config/config_schema.hpp"
#include "config/key_suggest.hpp"

namespace zone::config {
namespace {

// yaml-cpp 0.7 (Debian 12) never gets past some malformed text: a ',' where a document
// or its root node should start (a file holding only "," is enough). Each call to
// Parser::HandleNextDocument() then reports another empty document at the same place,
// and YAML::LoadAll() collects them until memory runs out (found by fuzz_config). So the
// documents are walked first, and the first one that does not move forward is an error.
class DocumentStarts : public YAML::EventHandler {
 public:
  YAML::Mark start;
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// Where the parser stops making progress, if it does. Throws what the parser throws.
std::optional<YAML::Mark> stalled_document(const std::string& yaml) {
  std::istringstream in(yaml);
  YAML::Parser parser(in);
  DocumentStarts starts;
  int previous = -1;
  while (parser.HandleNextDocument(starts)) {
    if (starts.start.pos <= previous) return starts.start;
    previous = starts.start.pos;
  }
  return std::nullopt;
}

// What a path names, for "it is ..." in errors about files that are not regular files.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

int line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

std::optional<ConfigError> parse_one_document(std::string_view yaml, YAML::Node& root) {
  std::vector<YAML::Node> documents;
  try {
    const std::string text(yaml);
    if (const auto stall = stalled_document(text)) {
      const auto at = static_cast<std::size_t>(stall->pos);
      return ConfigError{
          "", stall->line + 1,
          fmt::format("YAML syntax error: unexpected {} (column {})",
                      at < text.size() ? describe_found({RawValue::Kind::kScalar,
                                                         std::string(1, text[at]), false})
                                       : std::string("end of text"),
                      stall->column + 1)};
    }
    documents = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    const std::string column =
        e.mark.is_null() ? "" : fmt::format(" (column {})", e.mark.column + 1);
    return ConfigError{"", line, fmt::format("YAML syntax error: {}{}", e.msg, column)};
  }
  if (documents.size() > 1) {
    return ConfigError{"", line_of(documents[1]),
                       fmt::format("expected one YAML document, found {} (remove the "
                                   "'---' separators)",
                                   documents.size())};
  }
  root = documents.empty() ? YAML::Node() : documents.front();
  return std::nullopt;
}

std::optional<std::string> read_config_text(const std::string& path, std::string& text,
                                            std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer. Everything is checked on the
  // descriptor itself (fstat), so the path cannot be swapped between check and read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fmt::format("cannot open config file: {}", std::strerror(errno));
  const FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return fmt::format("cannot read config file: {}", std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return std::string("cannot read config file: it is a directory");
  if (!S_ISREG(st.st_mode)) {
    return fmt::format("cannot read config file: it is {}; expected a regular file",
                       file_kind(st.st_mode));
  }
  const auto too_large = [max_bytes](std::uint64_t size) {
    return fmt::format(
        "cannot read config file: it is {} bytes; expected at most {} bytes ({} MiB)", size,
        max_bytes, max_bytes / (1024 * 1024));
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return too_large(static_cast<std::uint64_t>(st.st_size));
  }
  // Read at most one byte past the cap: a file that grows while it is read is refused too.
  text.resize(max_bytes + 1);
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return fmt::format("cannot read config file: {}", std::strerror(errno));
    }
    got += static_cast<std::size_t>(n);
  }
  if (got > max_bytes) return too_large(got);
  text.resize(got);
  return std::nullopt;
}

RawValue to_raw(const YAML::Node& node) {
  RawValue raw;
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      raw.kind = RawValue::Kind::kScalar;
      raw.text = node.Scalar();
      // yaml-cpp tags quoted scalars "!" and plain ones "?".
      raw.quoted = node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
      break;
    case YAML::NodeType::Sequence:
      raw.kind = RawValue::Kind::kSequence;
      break;
    case YAML::NodeType::Map:
      raw.kind = RawValue::Kind::kMap;
      break;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      raw.kind = RawValue::Kind::kNull;
      break;
  }
  return raw;
}

bool KeyWalker::first_time(std::map<std::string, int, std::less<>>& seen, const std::string& key,
                           const std::string& full, int line) {
  const auto [it, fresh] = seen.emplace(key, line);
  if (!fresh) {
    error(full, line,
          fmt::format("duplicate key (first given on line {}); remove one", it->second));
  }
  return fresh;
}

bool KeyWalker::map(
    const YAML::Node& node, const std::string& path, int line,
    const std::vector<std::string_view>& keys,
    const std::function<void(const std::string& key, const YAML::Node& value, int line)>& fn) {
  if (!node.IsMap()) {
    std::string names;
    for (const auto k : keys) names += (names.empty() ? "" : ", ") + std::string(k);
    error(path, line,
          fmt::format("expected a map with keys {}, got {}", names, describe_found(to_raw(node))));
    return false;
  }
  std::map<std::string, int, std::less<>> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    const int key_line = line_of(key);
    if (!key.IsScalar()) {
      error(path, key_line,
            fmt::format("expected a key name, got {}", describe_found(to_raw(key))));
      continue;
    }
    const std::string full = path.empty() ? key.Scalar() : path + "." + key.Scalar();
    if (std::find(keys.begin(), keys.end(), key.Scalar()) == keys.end()) {
      const auto suggestions = suggest_keys(key.Scalar(), keys);
      std::string message = fmt::format("unknown key '{}'", key.Scalar());
      for (std::size_t i = 0; i < suggestions.size(); ++i) {
        message += fmt::format("{}'{}'", i == 0 ? " (did you mean " : " or ", suggestions[i]);
      }
      if (!suggestions.empty()) message += "?)";
      error(full, key_line, std::move(message));
      continue;
    }
    if (!first_time(seen, key.Scalar(), full, key_line)) continue;
    fn(key.Scalar(), entry.second, key_line);
  }
  return true;
}

bool KeyWalker::named_map(
    const YAML::Node& node, const std::string& path, int line,
    const std::function<void(const std::string& key, const YAML::Node& value, int line)>& fn) {
  if (!node.IsMap()) {
    error(path, line, fmt::format("expected a map of names, got {}", describe_found(to_raw(node))));
    return false;
  }
  std::map<std::string, int, std::less<>> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    const int key_line = line_of(key);
    if (!key.IsScalar()) {
      error(path, key_line, fmt::format("expected a name, got {}", describe_found(to_raw(key))));
      continue;
    }
    const std::string full = path.empty() ? key.Scalar() : path + "." + key.Scalar();
    if (!first_time(seen, key.Scalar(), full, key_line)) continue;
    fn(key.Scalar(), entry.second, key_line);
  }
  return true;
}

}  // namespace zone::config
