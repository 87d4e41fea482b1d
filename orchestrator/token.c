/*
 * token.c - metrics tokens hashed with SHA-256: the only file that
 * includes <nettle/sha2.h>.
 *
 * Nettle is already in every build of sweep: libmicrohttpd's Debian
 * package is built with GnuTLS, which is built on Nettle, so its headers
 * and library come with libmicrohttpd-dev. A token is 256 bits from the
 * OS, so one unsalted hash of it is enough: nothing can be guessed.
 */
#include "orchestrator/token.h"

#include <nettle/sha2.h>
#include <stdio.h>
#include <string.h>

void sw_token_hash(const char *token, size_t len,
                   char out[SW_TOKEN_HASH_LEN + 1])
{
    uint8_t digest[SHA256_DIGEST_SIZE];
    struct sha256_ctx ctx;
    size_t i;

    sha256_init(&ctx);
    sha256_update(&ctx, len, (const uint8_t *)token);
    sha256_digest(&ctx, sizeof(digest), digest);
    for (i = 0; i < sizeof(digest); i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
}

int sw_token_is_hash(const char *hash)
{
    size_t n = strspn(hash, "0123456789abcdef");

    return n == SW_TOKEN_HASH_LEN && hash[n] == '\0';
}
