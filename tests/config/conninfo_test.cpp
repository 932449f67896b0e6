// persist.backend postgres: the config's checks and persist.conninfo_file, a secret read
// at start-up (config::read_conninfo_file, which --check-config runs too).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/secret_file.hpp"
#include "config_test_util.hpp"

using namespace zone::config;
using zone::config::test::only_error;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "zone-conninfo-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text, mode_t mode) const {
    const std::string file = path + "/" + name;
    std::ofstream(file) << text;
    ::chmod(file.c_str(), mode);
    return file;
  }
};

ZoneConfig postgres(const std::string& file) {
  ZoneConfig c;
  c.persist.backend = PersistBackend::kPostgres;
  c.persist.conninfo_file = file;
  return c;
}

}  // namespace

TEST_CASE("persist.backend postgres needs persist.conninfo_file, sqlite does not") {
  const ConfigError e = only_error(load_config_string("persist:\n  backend: postgres\n", "z.yaml"));
  CHECK(e.key == "persist.conninfo_file");
  CHECK(e.message.find("persist.backend is postgres") != std::string::npos);
  CHECK(
      load_config_string("persist:\n  backend: postgres\n  conninfo_file: /run/zone/pg\n", "z.yaml")
          .ok());
  CHECK(load_config_string("persist:\n  backend: sqlite\n", "z.yaml").ok());
  CHECK(load_config_string("persist:\n  enabled: false\n  backend: postgres\n", "z.yaml").ok());
  const ConfigError bad = only_error(load_config_string("persist:\n  backend: mysql\n", "z.yaml"));
  CHECK(bad.message.find("postgres") != std::string::npos);
}

TEST_CASE(
    "persist.conninfo_file is read as a secret: one line, a regular file others cannot read") {
  TempDir dir;
  std::string conninfo;
  SUBCASE("a good file, its final newline ignored") {
    const auto file = dir.write("pg", "host=127.0.0.1 port=5432 user=zone password=s3cret\n", 0600);
    CHECK(read_conninfo_file(postgres(file), conninfo).empty());
    CHECK(conninfo == "host=127.0.0.1 port=5432 user=zone password=s3cret");
  }
  SUBCASE("readable by others: refused, without printing it") {
    const auto file = dir.write("pg", "host=db password=s3cret\n", 0644);
    const auto errors = read_conninfo_file(postgres(file), conninfo);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].key == "persist.conninfo_file");
    CHECK(errors[0].message.find("readable or writable by other users") != std::string::npos);
    CHECK(errors[0].message.find("s3cret") == std::string::npos);
    CHECK(conninfo.empty());
  }
  SUBCASE("two lines, or empty: refused") {
    for (const std::string text : {"host=db\nport=5\n", "", "\n"}) {
      const auto file = dir.write("pg", text, 0600);
      const auto errors = read_conninfo_file(postgres(file), conninfo);
      REQUIRE(errors.size() == 1);
      CHECK(errors[0].message.find("expected one line") != std::string::npos);
    }
  }
  SUBCASE("missing, or a directory: refused naming the key") {
    CHECK(read_conninfo_file(postgres(dir.path + "/none"), conninfo).front().key ==
          "persist.conninfo_file");
    CHECK(read_conninfo_file(postgres(dir.path), conninfo)
              .front()
              .message.find("not a regular file") != std::string::npos);
  }
  SUBCASE("sqlite, or the store off: nothing is read") {
    ZoneConfig c = postgres(dir.path + "/none");
    c.persist.backend = PersistBackend::kSqlite;
    CHECK(read_conninfo_file(c, conninfo).empty());
    c = postgres(dir.path + "/none");
    c.persist.enabled = false;
    CHECK(read_conninfo_file(c, conninfo).empty());
  }
}
