/* The C ABI compiled as C, through zoneclient.h alone, without a server: versions,
 * defaults, refusals, and that every function takes a client that is not playing (or
 * NULL) without harm. Prints "N passed, N failed" and exits non-zero on a failure. */
#include <stdio.h>
#include <string.h>

#include "zoneclient.h"

static int passed = 0, failed = 0;

#define EXPECT(cond)                                                     \
  do {                                                                   \
    if (cond) {                                                          \
      ++passed;                                                          \
    } else {                                                             \
      ++failed;                                                          \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                    \
  } while (0)

int main(void) {
  EXPECT(zc_abi_version() == ZC_ABI_VERSION);
  EXPECT(zc_protocol_version() == 10);

  zc_options options;
  memset(&options, 0xAB, sizeof options);
  zc_options_init(&options);
  EXPECT(options.player_name == NULL);
  EXPECT(options.ticket == NULL && options.ticket_size == 0);
  EXPECT(options.interpolation_delay > 0.0);
  EXPECT(options.correction_time > 0.0);
  EXPECT(options.player_speed == 0.0);
  EXPECT(options.resume_attempts == 0); /* the default: 3 tries */

  /* No name, no client. */
  EXPECT(zc_create(NULL) == NULL);
  EXPECT(zc_create(&options) == NULL);
  options.player_name = "";
  EXPECT(zc_create(&options) == NULL);

  options.player_name = "c-test";
  zc_client* c = zc_create(&options);
  EXPECT(c != NULL);
  if (c == NULL) return 1;
  EXPECT(zc_get_state(c) == ZC_STATE_IDLE);
  EXPECT(zc_disconnect_reason(c) == 0);

  zc_welcome w;
  zc_player p;
  zc_entity e;
  zc_event ev;
  zc_static_object so;
  zc_chunk ch;
  int32_t value = 0;
  EXPECT(zc_get_welcome(c, &w) == 0);
  EXPECT(zc_get_player(c, &p) == 0);
  EXPECT(zc_player_value(c, 0, &value) == 0);
  EXPECT(zc_entity_count(c) == 0);
  EXPECT(zc_entity_at(c, 0, &e) == 0);
  EXPECT(zc_entity_find(c, 1, &e) == 0);
  EXPECT(zc_entity_value(c, 1, 0, &value) == 0);
  EXPECT(zc_field_count(c) == 0);
  EXPECT(zc_field_name(c, 0) == NULL);
  EXPECT(zc_static_count(c) == 0 && zc_static_at(c, 0, &so) == 0);
  EXPECT(zc_chunk_count(c) == 0 && zc_chunk_at(c, 0, &ch) == 0);
  zc_chunk_layer layer;
  EXPECT(zc_get_chunk_layer(c, &layer) == 0);
  EXPECT(zc_get_chunk_layer(NULL, &layer) == 0 && zc_get_chunk_layer(c, NULL) == 0);
  EXPECT(zc_poll_event(c, &ev) == 0);

  /* Requests need a session: nothing is sent before the Welcome. */
  EXPECT(zc_send_chat(c, 0, "hello", NULL) == 0);
  EXPECT(zc_send_action(c, 0, 0, NULL, 0) == 0);
  EXPECT(zc_join_party(c, 42) == 0);
  EXPECT(zc_join_guild(c, 42) == 0);
  /* Bad arguments are refused, not trusted. */
  EXPECT(zc_send_chat(c, 9, "hello", NULL) == 0);
  EXPECT(zc_send_action(c, 0, 0, NULL, 3) == 0);
  EXPECT(zc_connect(c, NULL, 7777) == -1);

  /* An update with nothing to do is harmless, and so is a stats read. */
  zc_set_move(c, 1.0f, 0.0f);
  zc_update(c, 0.0);
  zc_update(c, 0.1);
  zc_stats stats;
  zc_get_stats(c, &stats);
  EXPECT(stats.frames == 0 && stats.corrections == 0);
  zc_disconnect(c);
  zc_destroy(c);

  /* NULL everywhere. */
  zc_destroy(NULL);
  zc_update(NULL, 0.0);
  zc_set_move(NULL, 0.0f, 0.0f);
  zc_disconnect(NULL);
  EXPECT(zc_get_state(NULL) == ZC_STATE_CLOSED);
  EXPECT(zc_poll_event(NULL, &ev) == 0);
  EXPECT(zc_entity_count(NULL) == 0);
  EXPECT(zc_connect(NULL, "127.0.0.1", 1) == -1);
  zc_get_stats(NULL, &stats);
  EXPECT(stats.frames == 0);

  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
