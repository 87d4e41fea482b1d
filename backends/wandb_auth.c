/*
 * wandb_auth.c - the W&B API key: where it is read from and how it is
 * sent.
 *
 * The key comes from WANDB_API_KEY, else from the netrc file (NETRC, else
 * ~/.netrc) where `wandb login` writes it: the password of the entry whose
 * machine is the base URL's host (with its port, then without). Every
 * copy this file makes is wiped before it is freed; the key never reaches
 * a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/wandb_internal.h"

void sw_wandb__wipe(char *s)
{
    volatile char *p = s;

    if (!s)
        return;
    while (*p)
        *p++ = 0;
    free(s);
}

/* The URL's host with its port ("127.0.0.1:8080"); the caller frees. */
static char *url_netloc(const char *url)
{
    const char *p = strstr(url, "://"), *at;
    size_t n;

    p = p ? p + 3 : url;
    n = strcspn(p, "/?#");
    at = memchr(p, '@', n); /* user info is never part of the match */
    if (at) {
        n -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    return sw_strndup(p, n);
}

/* Reads the next whitespace-separated token of `*p` into `tok`; false at
 * the end. */
static bool next_token(const char **p, char *tok, size_t cap)
{
    const char *s = *p;
    size_t n;

    s += strspn(s, " \t\r\n");
    if (!*s)
        return false;
    n = strcspn(s, " \t\r\n");
    if (n >= cap)
        n = cap - 1;
    memcpy(tok, s, n);
    tok[n] = 0;
    *p = s + strcspn(s, " \t\r\n");
    return true;
}

/* The password of the entry for `host` (or the `default` entry, when
 * `dflt`) in the netrc text; NULL when there is none. */
static char *netrc_password(const char *text, const char *host, bool dflt)
{
    char tok[1024], *found = NULL;
    const char *p = text;
    bool inside = false;

    while (!found && next_token(&p, tok, sizeof(tok))) {
        if (strcmp(tok, "machine") == 0) {
            inside = next_token(&p, tok, sizeof(tok)) && !dflt &&
                     strcmp(tok, host) == 0;
        } else if (strcmp(tok, "default") == 0) {
            inside = dflt;
        } else if (strcmp(tok, "macdef") == 0) {
            const char *end = strstr(p, "\n\n");
            p = end ? end + 2 : p + strlen(p);
        } else if (strcmp(tok, "password") == 0) {
            if (next_token(&p, tok, sizeof(tok)) && inside)
                found = sw_strdup(tok);
        } else if (strcmp(tok, "login") == 0 || strcmp(tok, "account") == 0) {
            next_token(&p, tok, sizeof(tok));
        }
    }
    memset(tok, 0, sizeof(tok));
    return found;
}

static char *netrc_key(const char *base_url)
{
    const char *env = getenv("NETRC"), *home = getenv("HOME");
    char *path, *text, *netloc, *colon, *key = NULL;

    if (env && env[0])
        path = sw_strdup(env);
    else if (home && home[0])
        path = sw_aprintf("%s/.netrc", home);
    else
        return NULL;
    text = sw_buf_read_file(path, NULL);
    free(path);
    if (!text)
        return NULL;
    netloc = url_netloc(base_url);
    key = netrc_password(text, netloc, false);
    if (!key && (colon = strrchr(netloc, ':')) != NULL) {
        *colon = 0;
        key = netrc_password(text, netloc, false);
    }
    if (!key)
        key = netrc_password(text, "", true);
    free(netloc);
    sw_wandb__wipe(text);
    return key;
}

/* A key is printable ASCII without spaces: anything else would break
 * the header (or be a newline someone pasted). */
static bool key_ok(const char *key)
{
    for (const char *p = key; *p; p++)
        if (*p <= ' ' || *p > '~')
            return false;
    return key[0] != 0;
}

int sw_wandb__key(char **out, const char *base_url)
{
    const char *env = getenv("WANDB_API_KEY");
    char *key = env && env[0] ? sw_strdup(env) : netrc_key(base_url);
    char *netloc;
    int error;

    *out = NULL;
    if (key && key_ok(key)) {
        *out = key;
        return SW_OK;
    }
    netloc = url_netloc(base_url);
    if (key)
        error = sw_error_set(SW_EINVALID,
                             "the W&B API key %s holds spaces or control "
                             "characters",
                             env && env[0] ? "in WANDB_API_KEY" : "in netrc");
    else
        error = sw_error_set(SW_ENOTFOUND,
                             "no W&B API key: set WANDB_API_KEY, or run "
                             "`wandb login` (a `machine %s` entry in "
                             "~/.netrc)",
                             netloc);
    free(netloc);
    sw_wandb__wipe(key);
    return error;
}

char *sw_wandb__basic(const char *key)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *plain = sw_aprintf("api:%s", key);
    size_t n = strlen(plain), i, o = 6;
    char *out = sw_malloc(6 + 4 * ((n + 2) / 3) + 1);

    memcpy(out, "Basic ", 6);
    for (i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)plain[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)(unsigned char)plain[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)plain[i + 2];
        out[o++] = b64[(v >> 18) & 63];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[o] = 0;
    sw_wandb__wipe(plain);
    return out;
}
