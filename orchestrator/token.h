/*
 * token.h - what is kept of a metrics token: its SHA-256, in hex.
 *
 * A trial has its token in its environment (SWEEP_TOKEN); `sweep` keeps
 * only the hash, in memory and in the run's folder (`token.sha256`), so
 * that what another trial can read there does not let it post as that
 * run (docs/metrics.md says what a token protects against, and what not).
 */
#ifndef SW_TOKEN_H
#define SW_TOKEN_H

#include <stddef.h>

#define SW_TOKEN_HASH_LEN 64 /* hex digits of a SHA-256 */

/* The SHA-256 of the `len` bytes at `token`, as lowercase hex, into
 * `out`. Can't fail. */
void sw_token_hash(const char *token, size_t len,
                   char out[SW_TOKEN_HASH_LEN + 1]);

/* Whether `hash` (any string) is a hash sw_token_hash() writes: 64
 * lowercase hex digits. */
int sw_token_is_hash(const char *hash);

#endif
