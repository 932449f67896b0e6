// Login tickets (server/auth): the byte layout, issuing, verifying, keys and key files.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "auth/issue.hpp"
#include "auth/key_files.hpp"
#include "auth/keys.hpp"
#include "auth/ticket.hpp"
#include "auth/verifier.hpp"

using namespace zone::auth;

namespace {

constexpr std::uint64_t kNow = 1'800'000'000;  // a fixed "now": verification takes it

TicketClaims alice() {
  TicketClaims c;
  c.account_id = 42;
  c.character_id = 7;
  c.issued_at = kNow - 10;
  c.expires_at = kNow + 600;
  c.name = "Alice";
  c.world = "emerald";
  return c;
}

std::vector<std::uint8_t> issued(const TicketClaims& c, const SecretKey& key) {
  std::vector<std::uint8_t> t;
  REQUIRE(issue_ticket(c, key, t) == LayoutError::kNone);
  return t;
}

TicketError check(const TicketVerifier& v, const std::vector<std::uint8_t>& t,
                  std::uint64_t now = kNow) {
  TicketClaims out;
  return v.verify(t, now, out);
}

// A directory of its own under the system's temporary directory, removed at the end.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "zone-ticket-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("ticket: a good ticket verifies and carries its claims") {
  const KeyPair keys = generate_key_pair();
  const std::vector<std::uint8_t> t = issued(alice(), keys.secret);
  // The layout of docs/protocol.md: 35 fixed bytes + name + world + 64 signature bytes.
  CHECK(t.size() == kTicketFixedBytes + 5 + 7 + kSignatureBytes);
  CHECK(t[0] == kTicketVersion);
  CHECK(t[1] == 42);  // account id, little-endian
  CHECK(t[9] == 7);   // character id
  CHECK(t[33] == 5);  // name length
  CHECK(std::string(t.begin() + 34, t.begin() + 39) == "Alice");
  CHECK(t[39] == 7);  // world length
  CHECK(std::string(t.begin() + 40, t.begin() + 47) == "emerald");

  const TicketVerifier v(keys.public_key, "emerald");
  TicketClaims out;
  REQUIRE(v.verify(t, kNow, out) == TicketError::kNone);
  CHECK(out.account_id == 42);
  CHECK(out.character_id == 7);
  CHECK(out.issued_at == kNow - 10);
  CHECK(out.expires_at == kNow + 600);
  CHECK(out.name == "Alice");
  CHECK(out.world == "emerald");
  // Within its expiry a ticket may be presented again (docs/protocol.md).
  CHECK(check(v, t) == TicketError::kNone);
}

TEST_CASE("ticket: expired from its expiry second on") {
  const KeyPair keys = generate_key_pair();
  const TicketVerifier v(keys.public_key, "emerald");
  const std::vector<std::uint8_t> t = issued(alice(), keys.secret);
  CHECK(check(v, t, kNow + 599) == TicketError::kNone);
  CHECK(check(v, t, kNow + 600) == TicketError::kExpired);
  CHECK(check(v, t, kNow + 100000) == TicketError::kExpired);
}

TEST_CASE("ticket: forged or altered tickets fail the signature") {
  const KeyPair keys = generate_key_pair();
  const KeyPair other = generate_key_pair();
  const TicketVerifier v(keys.public_key, "emerald");
  SUBCASE("signed by another key") {
    CHECK(check(v, issued(alice(), other.secret)) == TicketError::kBadSignature);
  }
  SUBCASE("any bit of the signed bytes or the signature changed") {
    const std::vector<std::uint8_t> good = issued(alice(), keys.secret);
    for (std::size_t i = 0; i < good.size(); ++i) {
      for (const std::uint8_t bit : {0x01, 0x80}) {
        std::vector<std::uint8_t> t = good;
        t[i] ^= bit;
        CAPTURE(i);
        const TicketError e = check(v, t);
        // A changed length or version byte may break the layout first; nothing is ever
        // let through, and no claim (world, expiry) is ever judged before the signature.
        CHECK((e == TicketError::kBadSignature || e == TicketError::kMalformed ||
               e == TicketError::kUnknownVersion));
      }
    }
  }
  SUBCASE("an expired ticket for another world, forged: only the signature is reported") {
    TicketClaims c = alice();
    c.world = "ruby";
    c.expires_at = kNow - 1;
    CHECK(check(v, issued(c, other.secret)) == TicketError::kBadSignature);
  }
  SUBCASE("a longer expiry spliced into a good ticket") {
    std::vector<std::uint8_t> t = issued(alice(), keys.secret);
    t[25 + 4] = 0x7f;  // expires_at, a high byte
    CHECK(check(v, t) == TicketError::kBadSignature);
  }
}

TEST_CASE("ticket: issued for another world") {
  const KeyPair keys = generate_key_pair();
  const TicketVerifier v(keys.public_key, "emerald");
  TicketClaims c = alice();
  c.world = "ruby";
  CHECK(check(v, issued(c, keys.secret)) == TicketError::kWrongWorld);
  c.world = "emerald ";  // exact match only
  CHECK(check(v, issued(c, keys.secret)) == TicketError::kWrongWorld);
}

TEST_CASE("ticket: truncated, padded and garbage bytes are malformed, never accepted") {
  const KeyPair keys = generate_key_pair();
  const TicketVerifier v(keys.public_key, "emerald");
  const std::vector<std::uint8_t> good = issued(alice(), keys.secret);
  for (std::size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    const std::vector<std::uint8_t> t(good.begin(), good.begin() + static_cast<long>(n));
    CHECK(check(v, t) == TicketError::kMalformed);
  }
  std::vector<std::uint8_t> padded = good;
  padded.push_back(0);
  CHECK(check(v, padded) == TicketError::kMalformed);

  std::vector<std::uint8_t> other_version = good;
  other_version[0] = 2;
  CHECK(check(v, other_version) == TicketError::kUnknownVersion);

  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::uint8_t> t(rng() % 300);
    for (auto& b : t) b = static_cast<std::uint8_t>(rng());
    if (!t.empty() && (i % 2) == 0) t[0] = kTicketVersion;  // past the version check
    const TicketError e = check(v, t);
    CHECK(e != TicketError::kNone);
    CHECK(e != TicketError::kExpired);
    CHECK(e != TicketError::kWrongWorld);
  }
}

TEST_CASE("ticket: ids 0 and bad lengths cannot be issued or read") {
  const KeyPair keys = generate_key_pair();
  std::vector<std::uint8_t> t;
  TicketClaims c = alice();
  c.account_id = 0;
  CHECK(issue_ticket(c, keys.secret, t) == LayoutError::kZeroId);
  CHECK(t.empty());
  c = alice();
  c.character_id = 0;
  CHECK(issue_ticket(c, keys.secret, t) == LayoutError::kZeroId);
  c = alice();
  c.name = "";
  CHECK(issue_ticket(c, keys.secret, t) == LayoutError::kNameLength);
  c.name = std::string(256, 'a');
  CHECK(issue_ticket(c, keys.secret, t) == LayoutError::kNameLength);
  c.name = std::string(255, 'a');
  CHECK(issue_ticket(c, keys.secret, t) == LayoutError::kNone);
  CHECK(t.size() == kMaxTicketBytes - kMaxTicketWorldBytes + 7);
  c = alice();
  c.world = std::string(65, 'w');
  CHECK(issue_ticket(c, keys.secret, t) == LayoutError::kWorldLength);

  // A signed ticket with character id 0 (a login service that ignored the rule) is
  // malformed: 0 means "no character" to the zone.
  c = alice();
  std::vector<std::uint8_t> body;
  REQUIRE(encode_claims(c, body) == LayoutError::kNone);
  for (int i = 9; i < 17; ++i) body[static_cast<std::size_t>(i)] = 0;
  body.resize(body.size() + kSignatureBytes);
  TicketLayout layout;
  CHECK(read_ticket(body, layout) == LayoutError::kZeroId);
}

TEST_CASE("ticket: the name is carried as bytes - the zone applies its own name rule") {
  // A name the zone would refuse still verifies here: Sessions refuses it (bad_name).
  const KeyPair keys = generate_key_pair();
  const TicketVerifier v(keys.public_key, "emerald");
  TicketClaims c = alice();
  c.name = "bad\nname";
  TicketClaims out;
  CHECK(v.verify(issued(c, keys.secret), kNow, out) == TicketError::kNone);
  CHECK(out.name == "bad\nname");
}

TEST_CASE("keys: hex public keys, valid curve points only") {
  const KeyPair keys = generate_key_pair();
  const std::string hex = to_hex(keys.public_key);
  CHECK(hex.size() == 64);
  REQUIRE(parse_public_key(hex).has_value());
  CHECK(*parse_public_key(hex) == keys.public_key);
  std::string upper = hex;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  CHECK(parse_public_key(upper) == keys.public_key);
  CHECK_FALSE(parse_public_key(hex.substr(1)).has_value());
  CHECK_FALSE(parse_public_key(hex + "0").has_value());
  CHECK_FALSE(parse_public_key(" " + hex.substr(1)).has_value());
  CHECK_FALSE(parse_public_key("zz" + hex.substr(2)).has_value());
  // The all-zero key (a small-order point) would verify signatures nobody made.
  CHECK_FALSE(parse_public_key(std::string(64, '0')).has_value());
  CHECK(public_key_of(keys.secret) == keys.public_key);
  CHECK(hex_to_bytes("00ff10") == std::string("\x00\xff\x10", 3));
  CHECK_FALSE(hex_to_bytes("abc").has_value());
}

TEST_CASE(
    "key files: written once with the secret 0600 and read back - a readable secret is refused") {
  TempDir dir;
  const KeyPair keys = generate_key_pair();
  std::string error;
  REQUIRE(write_key_files(dir.path.string(), keys, error));
  const std::string secret = (dir.path / kSecretKeyFile).string();
  const std::string pub = (dir.path / kPublicKeyFile).string();
  struct stat st {};
  REQUIRE(::stat(secret.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  const auto read_secret = read_secret_key_file(secret, error);
  REQUIRE(read_secret.has_value());
  CHECK(read_secret->seed == keys.secret.seed);
  const auto read_pub = read_public_key_file(pub, error);
  REQUIRE(read_pub.has_value());
  CHECK(*read_pub == keys.public_key);

  // Never overwrites a key in use.
  CHECK_FALSE(write_key_files(dir.path.string(), generate_key_pair(), error));
  CHECK(error.find("exists") != std::string::npos);
  CHECK(read_secret_key_file(secret, error)->seed == keys.secret.seed);

  REQUIRE(::chmod(secret.c_str(), 0644) == 0);
  CHECK_FALSE(read_secret_key_file(secret, error).has_value());
  CHECK(error.find("chmod 600") != std::string::npos);

  std::ofstream(dir.path / "junk") << "not a key\n";
  CHECK_FALSE(read_public_key_file((dir.path / "junk").string(), error).has_value());
  CHECK_FALSE(read_public_key_file((dir.path / "missing").string(), error).has_value());
}
