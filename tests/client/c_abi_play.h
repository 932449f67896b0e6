/* A play session through the C ABI alone (c_abi_play.c), for the C++ test that starts
 * the server around it. */
#ifndef ZONECLIENT_TEST_C_ABI_PLAY_H
#define ZONECLIENT_TEST_C_ABI_PLAY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Two clients join the zone at host:port, the first walks and says a line in chat, joins
 * a party with the second and asks for an action. Returns 0 when everything was seen,
 * otherwise 1 with what went wrong in `why`. `report` gets the figures measured. */
int zc_test_play(const char* host, uint16_t port, char* why, size_t why_size, char* report,
                 size_t report_size);

/* One client joins with `ticket` (NULL: none) and waits for its first frame. Returns 1
 * when it played, 0 when the zone refused it (the reason in *reason). */
int zc_test_join(const char* host, uint16_t port, const char* name, const uint8_t* ticket,
                 size_t ticket_size, uint32_t* reason);

#ifdef __cplusplus
}
#endif

#endif
