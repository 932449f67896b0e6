#include "protocol/codec.hpp"

#include <algorithm>
#include <array>

#include <vector>

namespace zone::protocol {
namespace {

// Bounds on what the verifier will walk, far above any legal packet, so a crafted
// buffer cannot make verification expensive.
constexpr flatbuffers::uoffset_t kMaxDepth = 16;
constexpr flatbuffers::uoffset_t kMaxTables = 100000;

template <typename Root>
const Root* verified_root(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < sizeof(flatbuffers::uoffset_t)) return nullptr;
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), kMaxDepth, kMaxTables);
  if (!verifier.VerifyBuffer<Root>(nullptr)) return nullptr;
  return flatbuffers::GetRoot<Root>(bytes.data());
}

// The generated verifier accepts union types it does not know (forward compatibility);
// this side only reads the ones it does.
template <typename Root, typename Message>
const Root* parse(std::span<const std::uint8_t> bytes, ParseError* why) {
  const Root* p = verified_root<Root>(bytes);
  ParseError e = ParseError::kNone;
  if (p == nullptr || p->message() == nullptr || p->message_type() == Message::NONE) {
    e = ParseError::kMalformed;
  } else if (p->message_type() > Message::MAX) {
    e = ParseError::kUnknownMessage;
  }
  if (why != nullptr) *why = e;
  return e == ParseError::kNone ? p : nullptr;
}

}  // namespace

const ClientPacket* parse_client_packet(std::span<const std::uint8_t> bytes, ParseError* why) {
  return parse<ClientPacket, ClientMessage>(bytes, why);
}

const ServerPacket* parse_server_packet(std::span<const std::uint8_t> bytes, ParseError* why) {
  return parse<ServerPacket, ServerMessage>(bytes, why);
}

void build_hello(flatbuffers::FlatBufferBuilder& fbb, std::uint16_t protocol_version,
                 std::string_view player_name, std::span<const std::uint8_t> transfer_token,
                 std::span<const std::uint8_t> ticket, std::span<const std::uint8_t> resume_token) {
  fbb.Clear();
  const auto bytes = [&fbb](std::span<const std::uint8_t> b) {
    return b.empty() ? flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>>()
                     : fbb.CreateVector(b.data(), b.size());
  };
  const auto name = fbb.CreateString(player_name.data(), player_name.size());
  const auto token = bytes(transfer_token);
  const auto ticket_bytes = bytes(ticket);
  const auto resume = bytes(resume_token);
  const auto hello = CreateHello(fbb, protocol_version, name, token, ticket_bytes, resume);
  fbb.Finish(CreateClientPacket(fbb, ClientMessage::Hello, hello.Union()));
}

void build_join_party(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t key) {
  fbb.Clear();
  const auto join = CreateJoinParty(fbb, key);
  fbb.Finish(CreateClientPacket(fbb, ClientMessage::JoinParty, join.Union()));
}

void build_join_guild(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t key) {
  fbb.Clear();
  const auto join = CreateJoinGuild(fbb, key);
  fbb.Finish(CreateClientPacket(fbb, ClientMessage::JoinGuild, join.Union()));
}

void build_action(flatbuffers::FlatBufferBuilder& fbb, std::uint32_t sequence, std::uint16_t action,
                  std::uint32_t target, std::span<const std::int32_t> args) {
  fbb.Clear();
  const auto arg_vector = fbb.CreateVector(args.data(), args.size());
  const auto message = CreateAction(fbb, sequence, action, target, arg_vector);
  fbb.Finish(CreateClientPacket(fbb, ClientMessage::Action, message.Union()));
}

void build_chat(flatbuffers::FlatBufferBuilder& fbb, ChatChannel channel, std::string_view text,
                std::string_view to) {
  fbb.Clear();
  const auto to_string = fbb.CreateString(to.data(), to.size());
  const auto text_string = fbb.CreateString(text.data(), text.size());
  const auto message = CreateChat(fbb, static_cast<std::uint8_t>(channel), to_string, text_string);
  fbb.Finish(CreateClientPacket(fbb, ClientMessage::Chat, message.Union()));
}

void build_action_result(flatbuffers::FlatBufferBuilder& fbb, std::uint32_t sequence,
                         ActionStatus status, std::uint32_t server_tick) {
  fbb.Clear();
  const auto message = CreateActionResult(fbb, sequence, status, server_tick);
  fbb.Finish(CreateServerPacket(fbb, ServerMessage::ActionResult, message.Union()));
}

void build_chat_result(flatbuffers::FlatBufferBuilder& fbb, ChatStatus status,
                       std::uint8_t channel) {
  fbb.Clear();
  const auto message = CreateChatResult(fbb, status, channel);
  fbb.Finish(CreateServerPacket(fbb, ServerMessage::ChatResult, message.Union()));
}

void build_events(flatbuffers::FlatBufferBuilder& fbb, std::uint32_t server_tick,
                  std::span<const EventView> events) {
  fbb.Clear();
  // Offsets of at most kMaxEventsPerMessage events: on the stack, nothing allocated.
  std::array<flatbuffers::Offset<Event>, kMaxEventsPerMessage> built;
  const std::size_t n = std::min(events.size(), kMaxEventsPerMessage);
  for (std::size_t i = 0; i < n; ++i) {
    const EventView& e = events[i];
    const auto args = e.args.empty() ? flatbuffers::Offset<flatbuffers::Vector<std::int32_t>>()
                                     : fbb.CreateVector(e.args.data(), e.args.size());
    const auto text = e.text.empty() ? flatbuffers::Offset<flatbuffers::String>()
                                     : fbb.CreateString(e.text.data(), e.text.size());
    const auto name = e.name.empty() ? flatbuffers::Offset<flatbuffers::String>()
                                     : fbb.CreateString(e.name.data(), e.name.size());
    built[i] = CreateEvent(fbb, e.sequence, e.kind, e.entity, e.target, args, text, name);
  }
  const auto list = fbb.CreateVector(built.data(), n);
  fbb.Finish(
      CreateServerPacket(fbb, ServerMessage::Events, CreateEvents(fbb, server_tick, list).Union()));
}

flatbuffers::Offset<SchemaDef> build_schema(flatbuffers::FlatBufferBuilder& fbb,
                                            const Schema& schema) {
  std::vector<flatbuffers::Offset<FieldDef>> fields;
  fields.reserve(schema.size());
  for (const FieldSpec& f : schema.fields()) {
    fields.push_back(CreateFieldDef(fbb, fbb.CreateString(f.name), static_cast<FieldRule>(f.rule),
                                    f.bits, f.is_signed, static_cast<FieldAudience>(f.audience),
                                    static_cast<FieldUpdate>(f.update), fbb.CreateString(f.unit)));
  }
  std::vector<flatbuffers::Offset<EntityTypeDef>> types;
  types.reserve(schema.types().size());
  for (const EntityTypeSpec& t : schema.types()) {
    types.push_back(
        CreateEntityTypeDef(fbb, fbb.CreateString(t.name), static_cast<EntityKindDef>(t.kind)));
  }
  std::vector<flatbuffers::Offset<ActionDef>> actions;
  actions.reserve(schema.actions().size());
  for (const ActionSpec& a : schema.actions()) {
    actions.push_back(CreateActionDef(fbb, fbb.CreateString(a.name),
                                      static_cast<ActionTargetDef>(a.target), a.args,
                                      fbb.CreateString(a.unit)));
  }
  std::vector<flatbuffers::Offset<EventDef>> events;
  events.reserve(schema.events().size());
  for (const EventSpec& e : schema.events()) {
    events.push_back(
        CreateEventDef(fbb, fbb.CreateString(e.name), static_cast<FieldAudience>(e.audience),
                       fbb.CreateVectorOfStrings(e.args), e.text, fbb.CreateString(e.unit)));
  }
  return CreateSchemaDef(fbb, fbb.CreateVector(fields), fbb.CreateVector(types),
                         fbb.CreateVector(actions), fbb.CreateVector(events));
}

std::optional<Schema> read_schema(const SchemaDef* def, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<Schema> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  if (def == nullptr || def->fields() == nullptr || def->types() == nullptr) {
    return fail("the Welcome carries no schema");
  }
  const Schema engine;
  const auto& fields = *def->fields();
  if (fields.size() < kEngineFieldCount) return fail("fewer fields than the engine's eight");
  Schema schema;
  for (flatbuffers::uoffset_t i = 0; i < fields.size(); ++i) {
    const FieldDef* d = fields.Get(i);
    if (d->name() == nullptr) return fail("field " + std::to_string(i) + " has no name");
    FieldSpec f;
    f.name = d->name()->str();
    f.rule = static_cast<DeltaRule>(d->rule());
    f.bits = d->bits();
    f.is_signed = d->signed_();
    f.audience = static_cast<Audience>(d->audience());
    f.update = static_cast<UpdateTier>(d->update());
    f.unit = d->unit() ? d->unit()->str() : std::string();
    if (d->rule() > FieldRule::MAX || d->audience() > FieldAudience::MAX ||
        d->update() > FieldUpdate::MAX) {
      return fail("field '" + f.name + "' has an unknown rule, audience or update tier");
    }
    if (i < kEngineFieldCount) {
      const FieldSpec& e = engine.field(i);
      if (f.name != e.name || f.rule != e.rule || f.bits != e.bits || f.is_signed != e.is_signed) {
        return fail("field " + std::to_string(i) + " is not the engine's '" + e.name + "'");
      }
      continue;
    }
    if (auto error = schema.add_field(std::move(f))) return fail(*error);
  }
  std::vector<EntityTypeSpec> types;
  for (const EntityTypeDef* t : *def->types()) {
    if (t->name() == nullptr || t->kind() > EntityKindDef::MAX) {
      return fail("an entity type without a name or with an unknown kind");
    }
    types.push_back({t->name()->str(), static_cast<EntityKind>(t->kind())});
  }
  if (auto error = schema.set_types(std::move(types))) return fail(*error);
  if (def->actions() != nullptr) {
    for (const ActionDef* a : *def->actions()) {
      if (a->name() == nullptr || a->target() > ActionTargetDef::MAX) {
        return fail("an action without a name or with an unknown target rule");
      }
      ActionSpec spec{a->name()->str(), static_cast<ActionTarget>(a->target()), a->args(),
                      a->unit() ? a->unit()->str() : std::string()};
      if (auto error = schema.add_action(std::move(spec))) return fail(*error);
    }
  }
  // The engine's events come first, as the engine has them.
  if (def->events() == nullptr || def->events()->size() < kEngineEventCount) {
    return fail("the schema has no events (the engine's chat comes first)");
  }
  for (flatbuffers::uoffset_t i = 0; i < def->events()->size(); ++i) {
    const EventDef* d = def->events()->Get(i);
    if (d->name() == nullptr || d->audience() > FieldAudience::MAX) {
      return fail("an event without a name or with an unknown audience");
    }
    EventSpec e;
    e.name = d->name()->str();
    e.audience = static_cast<Audience>(d->audience());
    if (d->args() != nullptr) {
      for (const flatbuffers::String* arg : *d->args()) {
        e.args.push_back(arg != nullptr ? arg->str() : std::string());
      }
    }
    e.text = d->text();
    e.unit = d->unit() ? d->unit()->str() : std::string();
    if (i < kEngineEventCount) {
      const EventSpec& mine = engine.events()[i];
      if (e.name != mine.name || e.args.size() != mine.args.size() || e.text != mine.text) {
        return fail("event " + std::to_string(i) + " is not the engine's '" + mine.name + "'");
      }
      continue;
    }
    if (auto error = schema.add_event(std::move(e))) return fail(*error);
  }
  return schema;
}

const char* to_string(DisconnectReason reason) {
  switch (reason) {
    case DisconnectReason::None:
      return "none";
    case DisconnectReason::ServerShutdown:
      return "server shutting down";
    case DisconnectReason::ProtocolMismatch:
      return "protocol version mismatch";
    case DisconnectReason::ServerFull:
      return "server full";
    case DisconnectReason::MalformedPackets:
      return "too many malformed packets";
    case DisconnectReason::InputFlood:
      return "input flood";
    case DisconnectReason::BadHello:
      return "bad hello";
    case DisconnectReason::Timeout:
      return "timed out";
    case DisconnectReason::ClientQuit:
      return "client quit";
    case DisconnectReason::Transferred:
      return "transferred to another zone";
    case DisconnectReason::TicketRequired:
      return "a login ticket is required";
    case DisconnectReason::TicketInvalid:
      return "login ticket invalid";
    case DisconnectReason::TicketExpired:
      return "login ticket expired";
    case DisconnectReason::TicketWrongWorld:
      return "login ticket for another world";
    case DisconnectReason::LoggedInElsewhere:
      return "logged in elsewhere";
    case DisconnectReason::Kicked:
      return "kicked by an operator";
    case DisconnectReason::Banned:
      return "account banned";
    case DisconnectReason::StoreUnavailable:
      return "character store unavailable";
    case DisconnectReason::ResumeRefused:
      return "resume token refused";
  }
  return "unknown";
}

}  // namespace zone::protocol
