// Reading the deployment files of deploy/ for the tests: every YAML document of the
// Kubernetes manifests, the Dockerfile's stages and instructions, and the files a
// container's arguments name (from a ConfigMap mounted in the pod, or from configs/ in
// the image).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zone::deploy_test {

namespace fs = std::filesystem;

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> read_text(const fs::path& path);

// One YAML document of a manifest file.
struct Document {
  fs::path file;      // relative to the source tree, e.g. deploy/agones/fleet.yaml
  std::size_t index;  // 0-based, among the file's non-empty documents
  YAML::Node node;
  std::string where() const;  // "deploy/agones/fleet.yaml, document 2 (Fleet zone-east)"
  std::string kind() const;
  std::string name() const;  // metadata.name
};

// Every non-empty document of every file under deploy/agones, and of deploy/nats.yaml.
// A file that is not valid YAML throws (the test fails with the parser's message).
std::vector<Document> load_manifests(const fs::path& source_dir);

// node[k1][k2]... without yaml-cpp's exception when a key along the way is missing (it
// throws on a lookup in a missing node): an undefined node instead. Never inserts.
YAML::Node at(const YAML::Node& node, std::initializer_list<std::string> path);

// A scalar as text ("" when missing or not a scalar), and as an integer.
std::string text(const YAML::Node& node);
std::optional<long long> integer(const YAML::Node& node);

// A game server of the manifests: a GameServer, or the GameServer template of a Fleet.
struct GameServerSpec {
  const Document* document;  // the GameServer or Fleet
  YAML::Node spec;           // agones.dev/v1 GameServerSpec: container, ports, health, template
  YAML::Node pod_spec() const { return at(spec, {"template", "spec"}); }
  // The container named by spec.container (or the only one); an undefined node if none.
  YAML::Node game_container() const;
  // The labels of the pod Agones creates: the pod template's, and the two Agones adds
  // (agones.dev/role: gameserver, agones.dev/gameserver: the GameServer's name, which for
  // a Fleet's is generated: "<fleet>-*" here). Not the GameServer's own labels, such as
  // the agones.dev/fleet Agones gives a Fleet's GameServers: they stay off the pod.
  std::map<std::string, std::string> pod_labels() const;
  std::string where() const { return document->where(); }
};
std::vector<GameServerSpec> game_servers(const std::vector<Document>& documents);

// Whether a Service's spec.selector selects a pod with these labels: a non-empty map
// whose every key has its value among them (an empty selector selects no pods here: a
// Service without one gets no endpoints from Kubernetes).
bool selects(const YAML::Node& selector, const std::map<std::string, std::string>& labels);

// A container's port by name or number (a probe's httpGet.port): its containerPort.
std::optional<long long> container_port(const YAML::Node& container, const YAML::Node& port);

// The value of a container's environment variable given as a literal value.
std::optional<std::string> env_value(const YAML::Node& container, const std::string& name);

// A file a container names by path, and where its text comes from.
struct ResolvedFile {
  std::string text;
  std::string origin;  // "ConfigMap zone-world, key world.yaml" or "configs/zone.yaml"
};
// An absolute path must lie in a volume of the pod mounted in the container that holds a
// ConfigMap of the manifests, and name one of its keys; a relative path is relative to
// the image's working directory, which holds configs/ of the source tree. On failure,
// `why` says what is missing.
std::optional<ResolvedFile> resolve_file(const std::vector<Document>& documents,
                                         const YAML::Node& pod_spec, const YAML::Node& container,
                                         const std::string& path, const fs::path& source_dir,
                                         std::string& why);

// deploy/Dockerfile, instruction by instruction: continuation lines joined, comments and
// blank lines dropped.
struct Instruction {
  std::string op;    // upper case: FROM, RUN, COPY, ...
  std::string args;  // the rest of the (joined) line
  int line = 0;      // where it starts
};
struct Stage {
  std::string base;  // FROM's image
  std::string name;  // FROM ... AS name, or ""
  std::vector<Instruction> instructions;
  // Every instruction of this kind, in order.
  std::vector<const Instruction*> all(const std::string& op) const;
  // The last one of this kind, or nullptr.
  const Instruction* last(const std::string& op) const;
  // The words after "apt-get install" in this stage's RUN instructions, options left out.
  std::vector<std::string> apt_packages() const;
};
std::vector<Stage> parse_dockerfile(const std::string& text);

// An exec-form (JSON array) ENTRYPOINT or CMD; nullopt for the shell form.
std::optional<std::vector<std::string>> exec_form(const std::string& args);

// Splits at whitespace.
std::vector<std::string> words(const std::string& text);

}  // namespace zone::deploy_test
