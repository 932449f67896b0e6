// zone-ticket: holds the login tickets' signing key and issues tickets, for operators,
// tests and bots (a game's real login service does the same with its own accounts).
//
//   zone-ticket keygen --out DIR
//       writes DIR/ticket.key (the secret key, mode 0600) and DIR/ticket.pub (the public
//       key: the zones' auth.public_key), never overwriting either
//   zone-ticket issue --key DIR/ticket.key --account N --character N --name NAME
//                     --world W [--ttl SECONDS] [--max-name-length BYTES]
//       prints the ticket as hexadecimal digits on one line
//   zone-ticket verify --public-key HEX|FILE --world W [--ticket HEX]
//       checks a ticket (from --ticket, else the first line of standard input) as a zone
//       would, and prints its claims; exit 1 if a zone would refuse it
//
// Exit codes: 0 done; 1 a ticket refused (verify) or a file that cannot be read or
// written; 2 bad arguments.
#include <cstdio>
#include <ctime>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "auth/issue.hpp"
#include "auth/key_files.hpp"
#include "auth/keys.hpp"
#include "auth/verifier.hpp"
#include "protocol/player_name.hpp"

namespace {

using namespace zone;

std::uint64_t unix_now() {
  return static_cast<std::uint64_t>(std::time(nullptr));
}

int keygen(const std::string& dir) {
  const auth::KeyPair keys = auth::generate_key_pair();
  std::string error;
  if (!auth::write_key_files(dir, keys, error)) {
    std::fprintf(stderr, "zone-ticket keygen: %s\n", error.c_str());
    return 1;
  }
  std::printf("%s/%s: the secret key (mode 0600): keep it with the login service only\n",
              dir.c_str(), auth::kSecretKeyFile);
  std::printf("%s/%s: the public key; set auth.public_key to it:\n%s\n", dir.c_str(),
              auth::kPublicKeyFile, auth::to_hex(keys.public_key).c_str());
  return 0;
}

struct IssueArgs {
  std::string key_file;
  auth::TicketClaims claims;
  std::uint64_t ttl_s = 3600;
  std::size_t max_name_length = 32;
};

int issue(const IssueArgs& a) {
  // The zone refuses a name that breaks its rule: better to hear it now.
  const protocol::NameProblem problem =
      protocol::check_player_name(a.claims.name, a.max_name_length);
  if (problem != protocol::NameProblem::kNone) {
    std::fprintf(stderr, "zone-ticket issue: --name: %s (players.max_name_length %zu)\n",
                 protocol::to_string(problem), a.max_name_length);
    return 2;
  }
  std::string error;
  const std::optional<auth::SecretKey> secret = auth::read_secret_key_file(a.key_file, error);
  if (!secret) {
    std::fprintf(stderr, "zone-ticket issue: --key %s\n", error.c_str());
    return 1;
  }
  auth::TicketClaims claims = a.claims;
  claims.issued_at = unix_now();
  claims.expires_at = claims.issued_at + a.ttl_s;
  std::vector<std::uint8_t> ticket;
  const auth::LayoutError e = auth::issue_ticket(claims, *secret, ticket);
  if (e != auth::LayoutError::kNone) {
    std::fprintf(stderr, "zone-ticket issue: %s\n", auth::to_string(e));
    return 2;
  }
  std::printf("%s\n", auth::to_hex(ticket).c_str());
  return 0;
}

int verify(const std::string& key_text, const std::string& world, std::string ticket_hex) {
  std::optional<auth::PublicKey> key = auth::parse_public_key(key_text);
  std::string error;
  if (!key) key = auth::read_public_key_file(key_text, error);
  if (!key) {
    std::fprintf(stderr, "zone-ticket verify: --public-key: neither a key nor a key file: %s\n",
                 error.c_str());
    return 2;
  }
  if (ticket_hex.empty()) std::getline(std::cin, ticket_hex);
  while (!ticket_hex.empty() && std::isspace(static_cast<unsigned char>(ticket_hex.back())))
    ticket_hex.pop_back();
  const std::optional<std::string> bytes = auth::hex_to_bytes(ticket_hex);
  if (!bytes) {
    std::fprintf(stderr, "zone-ticket verify: the ticket is not hexadecimal digits\n");
    return 2;
  }
  const auth::TicketVerifier verifier(*key, world);
  auth::TicketClaims claims;
  const auth::TicketError e = verifier.verify(
      {reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()}, unix_now(), claims);
  if (e != auth::TicketError::kNone) {
    std::printf("refused: %s\n", auth::to_string(e));
    return 1;
  }
  std::printf(
      "ok\naccount %llu\ncharacter %llu\nname %s\nworld %s\nissued_at %llu\nexpires_at %llu\n",
      static_cast<unsigned long long>(claims.account_id),
      static_cast<unsigned long long>(claims.character_id), claims.name.c_str(),
      claims.world.c_str(), static_cast<unsigned long long>(claims.issued_at),
      static_cast<unsigned long long>(claims.expires_at));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zone-ticket: login tickets for zone-server (docs/protocol.md, \"Tickets\")"};
  app.require_subcommand(1);

  std::string out_dir;
  CLI::App* keygen_cmd = app.add_subcommand("keygen", "make a signing key pair");
  keygen_cmd->add_option("--out", out_dir, "directory for ticket.key and ticket.pub")
      ->required()
      ->check(CLI::ExistingDirectory);

  IssueArgs ia;
  CLI::App* issue_cmd = app.add_subcommand("issue", "issue a ticket (printed in hexadecimal)");
  issue_cmd->add_option("--key", ia.key_file, "secret key file (ticket.key)")->required();
  issue_cmd->add_option("--account", ia.claims.account_id, "account id")
      ->required()
      ->check(CLI::PositiveNumber);
  issue_cmd->add_option("--character", ia.claims.character_id, "character id")
      ->required()
      ->check(CLI::PositiveNumber);
  issue_cmd->add_option("--name", ia.claims.name, "the character's display name")->required();
  issue_cmd->add_option("--world", ia.claims.world, "the world it is for (the zones' auth.world)")
      ->required();
  issue_cmd->add_option("--ttl", ia.ttl_s, "seconds until it expires")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{10} * 365 * 86400));
  issue_cmd
      ->add_option("--max-name-length", ia.max_name_length,
                   "the zones' players.max_name_length, to check the name against")
      ->capture_default_str()
      ->check(CLI::Range(1, 255));

  std::string key_text, world, ticket_hex;
  CLI::App* verify_cmd = app.add_subcommand("verify", "check a ticket as a zone would");
  verify_cmd->add_option("--public-key", key_text, "the public key (hex) or its file")->required();
  verify_cmd->add_option("--world", world, "the zone's auth.world")->required();
  verify_cmd->add_option("--ticket", ticket_hex, "the ticket in hex (default: standard input)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*keygen_cmd) return keygen(out_dir);
    if (*issue_cmd) return issue(ia);
    return verify(key_text, world, ticket_hex);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zone-ticket: %s\n", e.what());
    return 1;
  }
}
