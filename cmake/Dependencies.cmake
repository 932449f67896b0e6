# Finds every external dependency. Each one comes from a Debian package; when one is
# missing the configure step stops and names the package to install
# (or run scripts/install-deps.sh, which installs them all).

function(zone_require found package)
  if(NOT ${found})
    message(FATAL_ERROR
      "Missing dependency: Debian package '${package}'.\n"
      "Install it with: apt-get install ${package}  (or run scripts/install-deps.sh)")
  endif()
endfunction()

find_package(PkgConfig QUIET)
zone_require(PkgConfig_FOUND pkg-config)

pkg_check_modules(ENET QUIET IMPORTED_TARGET libenet)
zone_require(ENET_FOUND libenet-dev)

find_package(FlatBuffers CONFIG QUIET)
zone_require(FlatBuffers_FOUND libflatbuffers-dev)
find_program(FLATC_EXECUTABLE flatc)
zone_require(FLATC_EXECUTABLE flatbuffers-compiler)

find_package(fmt CONFIG QUIET)
zone_require(fmt_FOUND libfmt-dev)

find_package(yaml-cpp CONFIG QUIET)
zone_require(yaml-cpp_FOUND libyaml-cpp-dev)

find_package(CLI11 CONFIG QUIET)
zone_require(CLI11_FOUND libcli11-dev)

find_package(nlohmann_json CONFIG QUIET)
zone_require(nlohmann_json_FOUND nlohmann-json3-dev)

pkg_check_modules(HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
zone_require(HTTPLIB_FOUND libcpp-httplib-dev)

# NATS C client (3.4 in Debian 12): the message bus between the zones of a world
# (server/bus). Its pkg-config file names it libnats.
pkg_check_modules(NATS QUIET IMPORTED_TARGET libnats)
zone_require(NATS_FOUND libnats-dev)

# Lua 5.4 (the reference interpreter, built as C): the sandboxed host for game rules
# (server/script). LuaJIT is not used by the server: see docs/scripting.md.
pkg_check_modules(LUA QUIET IMPORTED_TARGET lua5.4)
zone_require(LUA_FOUND liblua5.4-dev)

# libsodium: Ed25519 signatures of login tickets (server/auth, docs/protocol.md "Tickets").
pkg_check_modules(SODIUM QUIET IMPORTED_TARGET libsodium)
zone_require(SODIUM_FOUND libsodium-dev)

# SQLite 3: the character store (server/persist, docs/persistence.md), an embedded file, so
# `make run` needs no database server.
pkg_check_modules(SQLITE3 QUIET IMPORTED_TARGET sqlite3)
zone_require(SQLITE3_FOUND libsqlite3-dev)

# libpq: the PostgreSQL client library, for a character store the zones of a world share
# (persist.backend: postgres). Only the client is linked; the server is the operator's.
pkg_check_modules(LIBPQ QUIET IMPORTED_TARGET libpq)
zone_require(LIBPQ_FOUND libpq-dev)

find_package(Threads REQUIRED)

if(ZONE_BUILD_TESTS)
  find_package(doctest CONFIG QUIET)
  zone_require(doctest_FOUND doctest-dev)
endif()
