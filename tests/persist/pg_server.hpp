// A throwaway PostgreSQL server for one test (scripts/pg-throwaway.sh): initdb into a
// temp dir, the server on a free loopback port, removed at the end. A test that makes one
// exits 77 (skipped) when PostgreSQL is not installed.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace zone::persist::test {

class PgServer {
 public:
  PgServer() {
    std::string pattern = (std::filesystem::temp_directory_path() / "zone-pg-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    conninfo_ = run("start");
    while (!conninfo_.empty() && conninfo_.back() == '\n') conninfo_.pop_back();
  }
  ~PgServer() { run("destroy"); }
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  const std::string& conninfo() const { return conninfo_; }
  // The database going down and coming back (same port, same data).
  void stop() { run("stop"); }
  void start() { run("start"); }

 private:
  std::string run(const std::string& command) {
    // fsync off: these tests check the store's logic, not the disk's durability.
    const std::string line = "PG_SERVER_OPTIONS='-c fsync=off' bash " ZONE_SOURCE_DIR
                             "/scripts/pg-throwaway.sh " +
                             command + " '" + dir_ + "'";
    FILE* p = ::popen(line.c_str(), "r");
    if (p == nullptr) throw std::runtime_error("popen failed");
    std::string out;
    std::array<char, 256> buf{};
    while (std::fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
    const int status = ::pclose(p);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) std::exit(77);
    if (command != "destroy" && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
      FAIL("pg-throwaway.sh " << command << " failed");
    }
    return out;
  }

  std::string dir_;
  std::string conninfo_;
};

}  // namespace zone::persist::test
