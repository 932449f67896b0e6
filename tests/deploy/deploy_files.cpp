#include "deploy_files.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace zone::deploy_test {

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Document::kind() const {
  return text(node["kind"]);
}

std::string Document::name() const {
  return text(at(node, {"metadata", "name"}));
}

std::string Document::where() const {
  return file.string() + ", document " + std::to_string(index + 1) + " (" + kind() + " " + name() +
         ")";
}

std::vector<Document> load_manifests(const fs::path& source_dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir / "deploy" / "agones")) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  files.push_back(source_dir / "deploy" / "nats.yaml");
  std::sort(files.begin(), files.end());
  std::vector<Document> out;
  for (const fs::path& file : files) {
    std::size_t index = 0;
    for (const YAML::Node& node : YAML::LoadAllFromFile(file.string())) {
      if (!node || node.IsNull()) continue;
      out.push_back({fs::relative(file, source_dir), index++, node});
    }
  }
  return out;
}

YAML::Node at(const YAML::Node& node, std::initializer_list<std::string> path) {
  // reset(), not operator=: assigning one Node to another rewrites the tree.
  YAML::Node current;
  current.reset(node);
  for (const std::string& key : path) {
    if (!current || !current.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node& map = current;
    const YAML::Node next = map[key];
    if (!next) return YAML::Node(YAML::NodeType::Undefined);
    current.reset(next);
  }
  return current;
}

std::string text(const YAML::Node& node) {
  return node && node.IsScalar() ? node.Scalar() : std::string();
}

std::optional<long long> integer(const YAML::Node& node) {
  const std::string s = text(node);
  if (s.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const long long v = std::stoll(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

YAML::Node GameServerSpec::game_container() const {
  const YAML::Node containers = pod_spec()["containers"];
  const std::string wanted = text(spec["container"]);
  if (!containers || !containers.IsSequence()) return YAML::Node(YAML::NodeType::Undefined);
  if (wanted.empty() && containers.size() == 1) return containers[0];
  for (const YAML::Node& c : containers) {
    if (text(c["name"]) == wanted) return c;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::map<std::string, std::string> GameServerSpec::pod_labels() const {
  std::map<std::string, std::string> out;
  const YAML::Node labels = at(spec, {"template", "metadata", "labels"});
  if (labels && labels.IsMap()) {
    for (const auto& kv : labels) out[kv.first.Scalar()] = text(kv.second);
  }
  out["agones.dev/role"] = "gameserver";
  out["agones.dev/gameserver"] =
      document->kind() == "Fleet" ? document->name() + "-*" : document->name();
  return out;
}

bool selects(const YAML::Node& selector, const std::map<std::string, std::string>& labels) {
  if (!selector || !selector.IsMap() || selector.size() == 0) return false;
  for (const auto& kv : selector) {
    const auto found = labels.find(kv.first.Scalar());
    if (found == labels.end() || found->second != text(kv.second)) return false;
  }
  return true;
}

std::vector<GameServerSpec> game_servers(const std::vector<Document>& documents) {
  std::vector<GameServerSpec> out;
  for (const Document& d : documents) {
    if (d.kind() == "GameServer") out.push_back({&d, d.node["spec"]});
    if (d.kind() == "Fleet") out.push_back({&d, at(d.node, {"spec", "template", "spec"})});
  }
  return out;
}

std::optional<long long> container_port(const YAML::Node& container, const YAML::Node& port) {
  if (const auto number = integer(port)) return number;
  const std::string name = text(port);
  for (const YAML::Node& p : container["ports"]) {
    if (text(p["name"]) == name) return integer(p["containerPort"]);
  }
  return std::nullopt;
}

std::optional<std::string> env_value(const YAML::Node& container, const std::string& name) {
  for (const YAML::Node& e : container["env"]) {
    if (text(e["name"]) == name && e["value"]) return text(e["value"]);
  }
  return std::nullopt;
}

namespace {

const Document* find_document(const std::vector<Document>& documents, const std::string& kind,
                              const std::string& name) {
  for (const Document& d : documents) {
    if (d.kind() == kind && d.name() == name) return &d;
  }
  return nullptr;
}

}  // namespace

std::optional<ResolvedFile> resolve_file(const std::vector<Document>& documents,
                                         const YAML::Node& pod_spec, const YAML::Node& container,
                                         const std::string& path, const fs::path& source_dir,
                                         std::string& why) {
  if (path.empty()) {
    why = "an empty path";
    return std::nullopt;
  }
  if (path.front() != '/') {
    // The image's working directory holds configs/ (deploy/Dockerfile: COPY configs/).
    const fs::path relative = fs::path(path).lexically_normal();
    if (relative.begin() == relative.end() || *relative.begin() != "configs") {
      why = path + " is relative to the image's working directory, which holds only configs/";
      return std::nullopt;
    }
    if (const auto content = read_text(source_dir / relative)) {
      return ResolvedFile{*content, relative.string()};
    }
    why = (source_dir / relative).string() + " does not exist";
    return std::nullopt;
  }
  for (const YAML::Node& mount : container["volumeMounts"]) {
    const std::string mount_path = text(mount["mountPath"]);
    const std::string sub_path = text(mount["subPath"]);
    std::string key;
    if (!sub_path.empty()) {
      if (path != mount_path) continue;  // the mount is that one file
      key = sub_path;
    } else {
      const std::string prefix = mount_path.back() == '/' ? mount_path : mount_path + "/";
      if (path.rfind(prefix, 0) != 0) continue;
      key = path.substr(prefix.size());
    }
    const std::string volume_name = text(mount["name"]);
    YAML::Node volume(YAML::NodeType::Undefined);
    for (const YAML::Node& v : pod_spec["volumes"]) {
      if (text(v["name"]) == volume_name) volume.reset(v);
    }
    if (!volume) {
      why = path + ": the container mounts a volume '" + volume_name + "' the pod does not have";
      return std::nullopt;
    }
    const std::string config_map = text(at(volume, {"configMap", "name"}));
    if (config_map.empty()) {
      why = path + ": volume '" + volume_name + "' is not a ConfigMap";
      return std::nullopt;
    }
    // With items, only the listed keys appear, each at its own path.
    if (const YAML::Node items = at(volume, {"configMap", "items"})) {
      std::string listed;
      for (const YAML::Node& item : items) {
        if (text(item["path"]) == key) listed = text(item["key"]);
      }
      if (listed.empty()) {
        why = path + ": no item of ConfigMap " + config_map + " is mounted at " + key;
        return std::nullopt;
      }
      key = listed;
    }
    const Document* cm = find_document(documents, "ConfigMap", config_map);
    if (cm == nullptr) {
      why = path + ": the manifests have no ConfigMap " + config_map;
      return std::nullopt;
    }
    const YAML::Node value = at(cm->node, {"data", key});
    if (!value || !value.IsScalar()) {
      why = path + ": ConfigMap " + config_map + " has no key '" + key + "'";
      return std::nullopt;
    }
    return ResolvedFile{value.Scalar(), "ConfigMap " + config_map + ", key " + key};
  }
  why = path +
        " is in no volume mounted in the container (the image holds configs/ only, "
        "under its working directory)";
  return std::nullopt;
}

std::vector<const Instruction*> Stage::all(const std::string& op) const {
  std::vector<const Instruction*> out;
  for (const Instruction& i : instructions) {
    if (i.op == op) out.push_back(&i);
  }
  return out;
}

const Instruction* Stage::last(const std::string& op) const {
  const auto found = all(op);
  return found.empty() ? nullptr : found.back();
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> Stage::apt_packages() const {
  std::vector<std::string> out;
  for (const Instruction* run : all("RUN")) {
    const std::vector<std::string> w = words(run->args);
    for (std::size_t i = 0; i + 1 < w.size(); ++i) {
      if (w[i] != "apt-get" || w[i + 1] != "install") continue;
      for (std::size_t j = i + 2; j < w.size(); ++j) {
        if (w[j] == "&&" || w[j] == ";" || w[j] == "||") break;
        if (w[j].front() == '-') continue;
        out.push_back(w[j]);
      }
    }
  }
  return out;
}

std::vector<Stage> parse_dockerfile(const std::string& content) {
  std::vector<Stage> stages;
  std::istringstream in(content);
  std::string line, joined;
  int number = 0, start = 0;
  const auto trim = [](std::string s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return std::string();
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
  };
  const auto finish = [&](const std::string& instruction) {
    const std::string t = trim(instruction);
    if (t.empty()) return;
    const auto space = t.find_first_of(" \t");
    std::string op = t.substr(0, space);
    std::transform(op.begin(), op.end(), op.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const std::string args = space == std::string::npos ? "" : trim(t.substr(space));
    if (op == "FROM") {
      Stage s;
      const std::vector<std::string> w = words(args);
      for (std::size_t i = 0; i < w.size(); ++i) {
        if (w[i].rfind("--", 0) == 0) continue;  // --platform=...
        s.base = w[i];
        if (i + 2 < w.size() && (w[i + 1] == "AS" || w[i + 1] == "as")) s.name = w[i + 2];
        break;
      }
      stages.push_back(s);
    }
    if (stages.empty()) return;  // ARG before the first FROM
    stages.back().instructions.push_back({op, args, start});
  };
  while (std::getline(in, line)) {
    ++number;
    const std::string t = trim(line);
    if (t.empty() || t.front() == '#') continue;  // also inside a continued instruction
    if (joined.empty()) start = number;
    if (t.back() == '\\') {
      joined += t.substr(0, t.size() - 1) + " ";
      continue;
    }
    joined += t;
    finish(joined);
    joined.clear();
  }
  finish(joined);
  return stages;
}

std::optional<std::vector<std::string>> exec_form(const std::string& args) {
  if (args.empty() || args.front() != '[') return std::nullopt;
  try {
    const YAML::Node node = YAML::Load(args);  // a JSON array is YAML
    if (!node.IsSequence()) return std::nullopt;
    std::vector<std::string> out;
    for (const YAML::Node& n : node) out.push_back(n.as<std::string>());
    return out;
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

}  // namespace zone::deploy_test
