// The bus subjects of a world, and what each zone may do on them (docs/world.md,
// "Subjects"; docs/security.md, "The bus").
//
// Every subject names both ends: "<prefix>.ghosts.<to>.<from>" carries the ghost lists
// zone <from> sends zone <to>, "<prefix>.handoff.<to>.<from>" its handoff messages. A zone
// subscribes to what is sent to it and publishes only subjects that end in its own name;
// NATS permits exactly that (bus_permissions()), so one zone's credentials cannot speak
// for another, and a zone drops a message whose sender is not the subject's <from>.
// "<prefix>.chat.<from>" carries zone <from>'s chat lines for the whole world, and
// "<prefix>.logins.<from>" the ticket logins it let in (one character, online once).
// Zone names are letters, digits, '-' and '_' (config::WorldMap), never a NATS wildcard.
#pragma once

#include <string>
#include <vector>

namespace zone::cluster {

inline std::string ghost_subject(const std::string& prefix, const std::string& to,
                                 const std::string& from) {
  return prefix + ".ghosts." + to + "." + from;
}

inline std::string handoff_subject(const std::string& prefix, const std::string& to,
                                   const std::string& from) {
  return prefix + ".handoff." + to + "." + from;
}

// Chat lines that cross zones (whispers, guild lines): every zone of the world listens to
// every other zone's.
inline std::string chat_subject(const std::string& prefix, const std::string& from) {
  return prefix + ".chat." + from;
}

// Ticket logins: every zone of the world listens to every other zone's.
inline std::string login_subject(const std::string& prefix, const std::string& from) {
  return prefix + ".logins." + from;
}

// The subjects the NATS user of `zone` may publish to and subscribe to, nothing else.
struct BusPermissions {
  std::vector<std::string> publish;
  std::vector<std::string> subscribe;
};

inline BusPermissions bus_permissions(const std::string& prefix, const std::string& zone) {
  return {.publish = {ghost_subject(prefix, "*", zone), handoff_subject(prefix, "*", zone),
                      chat_subject(prefix, zone), login_subject(prefix, zone)},
          .subscribe = {ghost_subject(prefix, zone, "*"), handoff_subject(prefix, zone, "*"),
                        chat_subject(prefix, "*"), login_subject(prefix, "*")}};
}

}  // namespace zone::cluster
