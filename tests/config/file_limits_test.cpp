// load_config_file() refuses, at once and with a clear message, anything that is not a
// small regular file: /dev/zero, a FIFO, a directory, a huge file (issue 9, item 12).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "config/config_loader.hpp"
#include "config_test_util.hpp"

using namespace zone::config;
using namespace std::chrono_literals;
using zone::config::test::only_error;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "zone-config-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Loads `path` on another thread; fails the test if that takes more than 5 s.
LoadResult load_quickly(const std::string& path) {
  auto loading = std::async(std::launch::async, [path] { return load_config_file(path); });
  const bool in_time = loading.wait_for(5s) == std::future_status::ready;
  CHECK_MESSAGE(in_time, "load_config_file(\"", path, "\") took more than 5 s");
  if (!in_time) {
    // A loader blocked in open() on a FIFO waits for a writer: be one, so the test ends.
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    if (loading.wait_for(2s) != std::future_status::ready) {
      // Still reading (/dev/zero has no end): the thread cannot be stopped.
      std::fprintf(stderr, "load_config_file(\"%s\") does not return\n", path.c_str());
      std::_Exit(1);
    }
  }
  return loading.get();
}

}  // namespace

TEST_CASE("config file: /dev/zero is refused at once, not read for ever") {
  const LoadResult r = load_quickly("/dev/zero");
  CHECK(r.error_report() ==
        "/dev/zero: cannot read config file: it is a character device; expected a regular "
        "file\n");
}

TEST_CASE("config file: a FIFO is refused without waiting for a writer") {
  TempDir dir;
  const std::string fifo = dir.path + "/zone.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const LoadResult r = load_quickly(fifo);
  CHECK(only_error(r).message ==
        "cannot read config file: it is a FIFO (named pipe); expected a regular file");
}

TEST_CASE("config file: a directory is refused") {
  TempDir dir;
  CHECK(only_error(load_quickly(dir.path)).message == "cannot read config file: it is a directory");
}

TEST_CASE("config file: the size cap is 1 MiB - at the cap it loads, one byte more it does not") {
  TempDir dir;
  CHECK(kMaxConfigFileBytes == 1024 * 1024);
  // A valid file of exactly the cap: a key, then comment lines to fill it up.
  const std::string path = dir.path + "/big.yaml";
  std::string text = "aoi:\n  view_radius: 41.5\n";
  while (text.size() < kMaxConfigFileBytes) {
    text += "# " + std::string(std::min<std::size_t>(60, kMaxConfigFileBytes - text.size()), 'x');
    text.back() = '\n';
  }
  text.resize(kMaxConfigFileBytes);
  text.back() = '\n';
  std::ofstream(path, std::ios::binary) << text;
  REQUIRE(std::filesystem::file_size(path) == kMaxConfigFileBytes);
  const LoadResult ok = load_quickly(path);
  INFO(ok.error_report());
  CHECK(ok.ok());
  CHECK(ok.config.aoi.view_radius == 41.5);

  std::ofstream(path, std::ios::binary | std::ios::app) << '#';
  CHECK(only_error(load_quickly(path)).message ==
        "cannot read config file: it is 1048577 bytes; expected at most 1048576 bytes (1 MiB)");
}

TEST_CASE("config file: a huge (sparse) file is refused by its size, without reading it") {
  TempDir dir;
  const std::string path = dir.path + "/huge.yaml";
  { std::ofstream create(path); }
  std::filesystem::resize_file(path, 8ull << 30);  // 8 GiB of holes: no disk used
  const auto start = std::chrono::steady_clock::now();
  const LoadResult r = load_quickly(path);
  CHECK(std::chrono::steady_clock::now() - start < 1s);
  CHECK(only_error(r).message ==
        "cannot read config file: it is 8589934592 bytes; expected at most 1048576 bytes (1 MiB)");
}

TEST_CASE("config file: a symlink to a regular file is followed") {
  TempDir dir;
  const std::string target = dir.path + "/real.yaml";
  std::ofstream(target) << "tick:\n  rate_hz: 25\n";
  const std::string link = dir.path + "/zone.yaml";
  std::filesystem::create_symlink(target, link);
  const LoadResult r = load_quickly(link);
  INFO(r.error_report());
  REQUIRE(r.ok());
  CHECK(r.config.tick.rate_hz == 25);
  CHECK(r.source == link);
}
