/* zoneclient: the C interface of the zone server's client library (docs/client.md).
 *
 * One zc_client is one player's connection to a zone: it connects, says Hello (with a
 * login ticket if the zone wants one), rebuilds the world from the server's snapshots,
 * acknowledges them, predicts the own player's movement, interpolates everyone else's,
 * and follows the player through transfers between zones. The game drives it from one
 * thread with a poll loop:
 *
 *     zc_client* c = zc_create(&options);
 *     zc_connect(c, "127.0.0.1", 7777);
 *     for (;;) {
 *       zc_set_move(c, mx, my);             // the player's intent, any time
 *       zc_update(c, seconds_now);          // network, one input per server tick
 *       zc_event e;
 *       while (zc_poll_event(c, &e)) { ... } // what happened since the last update
 *       ... draw zc_player_position(), zc_entity_at(c, i, ...) ...
 *     }
 *     zc_destroy(c);
 *
 * Plain structs and opaque handles only; no function throws or longjmps. Strings and
 * arrays handed out stay valid until the next zc_update or zc_poll_event on the same
 * client. A client is not thread-safe; several clients may run on several threads.
 */
#ifndef ZONECLIENT_H
#define ZONECLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version: bumped on every change of a struct or a function (a new function
 * too: a binding built with it would not find it in an older library). A binding checks
 * zc_abi_version() == ZC_ABI_VERSION before anything else. */
#define ZC_ABI_VERSION 3
uint32_t zc_abi_version(void);
/* The wire protocol the library speaks (docs/protocol.md). */
uint32_t zc_protocol_version(void);

typedef struct zc_client zc_client;

typedef struct zc_options {
  const char* player_name; /* 1 to 32 bytes of UTF-8 (the zone's name rule) */
  const uint8_t* ticket;   /* the login ticket, or NULL (an open zone) */
  size_t ticket_size;
  double interpolation_delay; /* seconds others are shown in the past; 0: 0.1 */
  double correction_time;     /* seconds a prediction correction is blended over; 0: 0.25 */
  double player_speed;        /* the player's top speed (m/s); 0: the Welcome's max_speed */
  /* After a lost connection (not a goodbye from the zone), connections tried again with
   * the last Welcome's resume token to take the same entity back (docs/protocol.md,
   * "Reconnecting"): 0: the default, 3; -1: never. */
  int32_t resume_attempts;
} zc_options;

/* Fills `options` with the defaults (every field 0 or NULL but the delays). */
void zc_options_init(zc_options* options);
/* NULL when the options are unusable (no name) or ENet cannot open a socket. */
zc_client* zc_create(const zc_options* options);
void zc_destroy(zc_client* client);

/* Starts connecting; progress arrives as events. 0 on success, -1 on a bad address. */
int zc_connect(zc_client* client, const char* host, uint16_t port);
/* Says goodbye (reason 8, client quit) at once. */
void zc_disconnect(zc_client* client);
/* Services the network and sends one input per server tick; `now` in seconds of any
 * monotonic clock, never going backwards. Call it at least once per frame. */
void zc_update(zc_client* client, double now);

typedef enum zc_state {
  ZC_STATE_IDLE = 0,
  ZC_STATE_CONNECTING = 1,   /* ENet handshake, or Hello sent and no Welcome yet */
  ZC_STATE_PLAYING = 2,      /* welcomed: snapshots, inputs, requests */
  ZC_STATE_TRANSFERRING = 3, /* handed over: connecting to the next zone */
  ZC_STATE_CLOSED = 4,       /* see zc_disconnect_reason */
  ZC_STATE_RESUMING = 5      /* the connection was lost: connecting again to resume */
} zc_state;
zc_state zc_get_state(const zc_client* client);
/* The server's disconnect reason (docs/protocol.md, 1 to 18), 0 while connected. */
uint32_t zc_disconnect_reason(const zc_client* client);

/* ---- What the Welcome said ------------------------------------------------------ */
typedef struct zc_welcome {
  uint32_t entity_id;
  uint32_t server_tick;
  uint32_t tick_rate;
  float view_radius, hysteresis;
  float world_min_x, world_min_y, world_max_x, world_max_y;
  float max_speed;
  uint16_t entity_type;
  const char* zone; /* the zone's name */
} zc_welcome;
/* 0 before the first Welcome. */
int zc_get_welcome(const zc_client* client, zc_welcome* out);

/* ---- The schema (how to read the session's records) ------------------------------ */
uint32_t zc_field_count(const zc_client* client);
const char* zc_field_name(const zc_client* client, uint32_t row);  /* NULL past the end */
int32_t zc_find_field(const zc_client* client, const char* name);  /* -1: none */
int32_t zc_find_action(const zc_client* client, const char* name); /* -1: none */
int32_t zc_find_event(const zc_client* client, const char* name);  /* -1: none */
const char* zc_event_name(const zc_client* client, uint32_t kind); /* NULL: unknown */

/* ---- The own player --------------------------------------------------------------- */
/* The movement intent sent with every input until changed: length <= 1 (longer is
 * shortened), 1 = the player's top speed. */
void zc_set_move(zc_client* client, float move_x, float move_y);
typedef struct zc_player {
  uint32_t entity_id;
  double x, y;                 /* metres: where to draw it (predicted, corrections blended) */
  double server_x, server_y;   /* metres: the newest frame's own position */
  double heading;              /* radians, counter-clockwise from +x (newest frame) */
  uint32_t server_tick;        /* the newest complete frame's tick (what is acknowledged) */
  uint32_t last_input_applied; /* the newest input the server had applied in it */
  uint32_t last_input_sent;
} zc_player;
/* 0 before the first complete frame. */
int zc_get_player(const zc_client* client, zc_player* out);
/* A value of the own entity's row (engine rows and game properties), newest frame. */
int zc_player_value(const zc_client* client, uint32_t row, int32_t* out);

/* ---- Other entities: the newest frame, drawn a delay in the past ------------------ */
typedef struct zc_entity {
  uint32_t id;
  uint16_t type;     /* index into the schema's entity types */
  uint8_t is_player; /* the type's kind */
  double x, y;       /* metres, interpolated at the render time */
  double heading;    /* radians, interpolated */
  const char* name;
} zc_entity;
uint32_t zc_entity_count(const zc_client* client);
/* The i-th entity of the newest frame (ascending ids). 0 past the end. */
int zc_entity_at(const zc_client* client, uint32_t index, zc_entity* out);
/* By id; 0 when the newest frame does not hold it. */
int zc_entity_find(const zc_client* client, uint32_t id, zc_entity* out);
/* A value of an entity's row in the newest frame (not interpolated). */
int zc_entity_value(const zc_client* client, uint32_t id, uint32_t row, int32_t* out);
/* The server tick (fractional) entities are drawn at now: the clock sync's estimate of
 * the server's newest tick, less the interpolation delay. */
double zc_render_tick(const zc_client* client);

/* ---- Requests ----------------------------------------------------------------------- */
/* The schema's action `action` on `target` (0: none) with up to 4 arguments; returns the
 * Action's sequence (its ActionResult event carries it), 0 when not playing. */
uint32_t zc_send_action(zc_client* client, uint16_t action, uint32_t target, const int32_t* args,
                        uint32_t arg_count);
/* A chat line on a channel (0 say, 1 party, 2 guild, 3 whisper to `to`, 4 zone); a
 * refused one is answered by a ZC_EVENT_CHAT_RESULT. 0 when not playing. */
int zc_send_chat(zc_client* client, uint8_t channel, const char* text, const char* to);
/* Joins (key != 0) or leaves (0) a party or a guild; answered by ZC_EVENT_PARTY/GUILD. */
int zc_join_party(zc_client* client, uint64_t key);
int zc_join_guild(zc_client* client, uint64_t key);

/* ---- Static layer ------------------------------------------------------------------- */
typedef struct zc_static_object {
  uint32_t id;
  int32_t x, y;    /* centimetres */
  uint32_t radius; /* centimetres */
  uint8_t kind;    /* 0 tree, 1 rock, 2 resource */
} zc_static_object;
/* Every static object received this session (they never change). */
uint32_t zc_static_count(const zc_client* client);
int zc_static_at(const zc_client* client, uint32_t index, zc_static_object* out);

typedef struct zc_chunk {
  int32_t col, row;
} zc_chunk;
/* The chunks loaded now (ascending by column, then row). */
uint32_t zc_chunk_count(const zc_client* client);
int zc_chunk_at(const zc_client* client, uint32_t index, zc_chunk* out);
/* Where the chunks are: chunk (col, row) is the square of chunk_size metres whose
 * minimum corner is (world_min_x + col * chunk_size, world_min_y + row * chunk_size). */
typedef struct zc_chunk_layer {
  float chunk_size;    /* metres */
  float load_radius;   /* metres: chunks within it of the player are loaded */
  float unload_radius; /* metres: a loaded chunk is unloaded beyond it */
} zc_chunk_layer;
/* 0 until the session's first chunk update (the zone sends none: chunks.enabled false). */
int zc_get_chunk_layer(const zc_client* client, zc_chunk_layer* out);

/* ---- Events --------------------------------------------------------------------------- */
typedef enum zc_event_type {
  ZC_EVENT_NONE = 0,
  ZC_EVENT_WELCOME = 1,       /* welcomed (again, after a transfer): zc_get_welcome */
  ZC_EVENT_DISCONNECTED = 2,  /* reason */
  ZC_EVENT_TRANSFER = 3,      /* text: the new zone; the library reconnects by itself */
  ZC_EVENT_GAME = 4,          /* a game event or a chat line (kind 0) */
  ZC_EVENT_ACTION_RESULT = 5, /* sequence, status, tick */
  ZC_EVENT_CHAT_RESULT = 6,   /* a refused line: status, channel */
  ZC_EVENT_PARTY = 7,         /* group, status (GroupResult), members */
  ZC_EVENT_GUILD = 8,         /* the same for the guild */
  ZC_EVENT_CHUNKS = 9,        /* the loaded chunks changed: count (loads), arg_count (unloads) */
  ZC_EVENT_STATICS = 10,      /* count: new static objects (zc_static_at) */
  ZC_EVENT_ZONE_PARAMS = 11,  /* the view radius changed (zc_get_welcome) */
  ZC_EVENT_CORRECTION =
      12, /* the prediction was corrected: dx, dy metres; status 1: shown at once */
  ZC_EVENT_RESUMING = 13 /* the connection was lost; the library connects again with the
                          * resume token by itself: entity, count (attempts left after this
                          * one). A WELCOME follows (the same entity), or DISCONNECTED
                          * (reason 18: the zone no longer holds it; log in again) */
} zc_event_type;

typedef struct zc_event {
  zc_event_type type;
  uint32_t tick;     /* the server tick it belongs to */
  uint32_t sequence; /* GAME: the event's; ACTION_RESULT: the action's */
  uint16_t kind;     /* GAME: index into the schema's events (0: chat) */
  uint32_t entity;   /* GAME: who it is about (chat: the speaker) */
  uint32_t target;   /* GAME: another entity it names, 0: none */
  int32_t args[4];   /* GAME: arguments (chat: args[0] is the channel) */
  uint32_t arg_count;
  uint32_t status;         /* ACTION_RESULT, CHAT_RESULT, PARTY, GUILD: the server's code */
  uint32_t channel;        /* CHAT_RESULT */
  uint32_t reason;         /* DISCONNECTED */
  uint32_t group;          /* PARTY, GUILD: the group id, 0 none */
  const uint32_t* members; /* PARTY, GUILD: member entity ids, ascending */
  uint32_t count;          /* members; CHUNKS: loads; STATICS: objects */
  double dx, dy;           /* CORRECTION */
  const char* text;        /* GAME: the text (chat: the line); TRANSFER: the zone; else "" */
  const char* name;        /* GAME: chat speaker's name; else "" */
} zc_event;
/* Pops the oldest event; 0 when none is left. */
int zc_poll_event(zc_client* client, zc_event* out);

/* Counters for a game's debug overlay. */
typedef struct zc_stats {
  uint64_t packets_in, packets_out, bytes_in, bytes_out;
  uint64_t frames;           /* frames completed */
  uint64_t malformed;        /* server packets that did not parse */
  uint64_t corrections;      /* prediction corrections */
  double largest_correction; /* metres */
  uint32_t round_trip_ms;    /* ENet's estimate */
  uint32_t input_lead;       /* ticks between sending an input and the server applying it */
} zc_stats;
void zc_get_stats(const zc_client* client, zc_stats* out);

#ifdef __cplusplus
}
#endif

#endif /* ZONECLIENT_H */
