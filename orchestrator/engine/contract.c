/*
 * contract.c - the trial contract (contract.h): a trial's environment, its
 * argv as the store keeps it, and the files of its run folder.
 *
 * Everything here is a pure function of its arguments and the sweep home,
 * so `sweep reproduce` shows exactly what `sweep run` gave a trial. The
 * run's parameters are written twice: params.json for sweep's own
 * clients, and params.yaml in the format W&B's SDK reads from
 * WANDB_SWEEP_PARAM_PATH, so `wandb.config` holds them in an unchanged
 * W&B script.
 */
#include "orchestrator/engine/contract.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orchestrator/token.h"
#include "sweeps/buf.h"
#include "sweeps/error.h"
#include "sweeps/json.h"
#include "sweeps/value.h"

#define MAX_ENV 16

const char *sw_contract_home(void)
{
    const char *h = getenv("SWEEP_HOME");

    return h && h[0] ? h : ".sweep";
}

char *sw_contract_run_dir(const char *home, const char *run_id)
{
    return sw_aprintf("%s/runs/%s", home, run_id);
}

char **sw_contract_env(const sw_contract *c)
{
    char **env = sw_calloc(MAX_ENV, sizeof(char *));
    char *dir = sw_contract_run_dir(c->home, c->run_id);
    size_t n = 0;

    env[n++] = sw_aprintf("SWEEP_ID=%s", c->sweep_id);
    env[n++] = sw_aprintf("SWEEP_RUN_ID=%s", c->run_id);
    env[n++] = sw_aprintf("SWEEP_RUN_DIR=%s", dir);
    env[n++] = sw_aprintf("SWEEP_CHECKPOINT_DIR=%s/checkpoint", dir);
    env[n++] = sw_aprintf("SWEEP_PARAMS=%s/params.json", dir);
    env[n++] = sw_aprintf("SWEEP_ATTEMPT=%lld", (long long)c->attempt);
    env[n++] = sw_aprintf("SWEEP_HOME=%s", c->home);
    env[n++] = sw_aprintf("WANDB_SWEEP_ID=%s", c->sweep_id);
    env[n++] = sw_aprintf("WANDB_RUN_ID=%s", c->run_id);
    env[n++] = sw_aprintf("WANDB_SWEEP_PARAM_PATH=%s/params.yaml", dir);
    if (c->metrics_url) {
        env[n++] = sw_aprintf("SWEEP_METRICS_URL=%s", c->metrics_url);
        env[n++] = sw_aprintf("SWEEP_METRICS_URL_FILE=%s/metrics_url", dir);
    }
    if (c->token)
        env[n++] = sw_aprintf("SWEEP_TOKEN=%s", c->token);
    if (c->devices)
        env[n++] = sw_aprintf("CUDA_VISIBLE_DEVICES=%s", c->devices);
    if (c->train_until > 0)
        env[n++] =
            sw_aprintf("SWEEP_TRAIN_UNTIL=%lld", (long long)c->train_until);
    free(dir);
    return env;
}

char **sw_contract_argv(const char *argv_json)
{
    sw_value *v = NULL;
    char **argv;
    size_t i;

    if (!argv_json ||
        sw_json_parse(&v, argv_json, strlen(argv_json)) != SW_OK ||
        v->type != SW_LIST || v->u.list.len == 0) {
        sw_value_free(v);
        return NULL;
    }
    for (i = 0; i < v->u.list.len; i++)
        if (v->u.list.items[i]->type != SW_STR) {
            sw_value_free(v);
            return NULL;
        }
    argv = sw_calloc(v->u.list.len + 1, sizeof(char *));
    for (i = 0; i < v->u.list.len; i++)
        argv[i] = sw_strdup(v->u.list.items[i]->u.s);
    sw_value_free(v);
    return argv;
}

/* mkdir -p; the common case (the parent exists) costs one mkdir. Folders
 * are created 0700: everything under a sweep home (the store, logs,
 * params, code snapshots) may hold secrets. An existing folder keeps its
 * mode. */
int sw_contract_mkdirs(const char *path)
{
    char *parent, *slash;
    int error = SW_OK;

    if (mkdir(path, 0700) == 0 || errno == EEXIST)
        return SW_OK;
    if (errno != ENOENT)
        return sw_error_set(sw_error_io_code(errno), "cannot create %s: %s",
                            path, strerror(errno));
    parent = sw_strdup(path);
    slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        error = sw_contract_mkdirs(parent);
    }
    free(parent);
    if (!error && mkdir(path, 0700) != 0 && errno != EEXIST)
        error = sw_error_set(sw_error_io_code(errno), "cannot create %s: %s",
                             path, strerror(errno));
    return error;
}

int sw_contract_write_bytes(const char *path, const void *p, size_t len)
{
    char *tmp = sw_aprintf("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int error = SW_OK;

    if (fd < 0 || fchmod(fd, 0600) != 0 || sw_write_all(fd, p, len) < 0)
        error = sw_error_set(sw_error_io_code(errno), "cannot write %s: %s",
                             tmp, strerror(errno));
    if (fd >= 0 && close(fd) != 0 && !error)
        error = sw_error_set(sw_error_io_code(errno), "cannot write %s: %s",
                             tmp, strerror(errno));
    if (!error && rename(tmp, path) != 0)
        error = sw_error_set(sw_error_io_code(errno), "cannot write %s: %s",
                             path, strerror(errno));
    if (error)
        unlink(tmp);
    free(tmp);
    return error;
}

int sw_contract_write_file(const char *path, const char *text)
{
    return sw_contract_write_bytes(path, text, strlen(text));
}

/* ---- W&B's config file --------------------------------------------
 * PyYAML (YAML 1.1) reads it, so every scalar is written in a form that
 * reads back as the same JSON value: floats always with a dot or as
 * .inf/.nan (`1e-05` would be a string), strings double-quoted with any
 * character PyYAML refuses in a stream escaped, keys plain only when no
 * YAML 1.1 resolver could take them for anything but a string. */

/* The code point of the UTF-8 sequence at *p (advanced past it), or -1
 * for a byte that starts none (advanced by one). */
static long utf8_next(const unsigned char **p)
{
    const unsigned char *s = *p;
    int len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    long cp = len == 4 ? s[0] & 0x07 : len == 3 ? s[0] & 0x0f : s[0] & 0x1f;

    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            len = 0;
            break;
        }
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (len == 0 || s[0] >= 0xf8) {
        *p = s + 1;
        return -1;
    }
    *p = s + len;
    return cp;
}

/* Whether PyYAML's reader accepts `cp` as it is in a stream. */
static bool yaml_printable(long cp)
{
    return (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xd7ff) ||
           (cp >= 0xe000 && cp <= 0xfffd && cp != 0xfeff) ||
           (cp >= 0x10000 && cp <= 0x10ffff);
}

static void yaml_string(sw_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *at;
    long cp;

    sw_buf_putc(b, '"');
    while (*p) {
        at = p;
        cp = *p < 0x80 ? *p++ : utf8_next(&p);
        if (cp == '"' || cp == '\\')
            sw_buf_printf(b, "\\%c", (char)cp);
        else if (cp < 0)
            sw_buf_puts(b, "\\ufffd");
        else if (yaml_printable(cp))
            sw_buf_put(b, (const char *)at, (size_t)(p - at));
        else if (cp <= 0xff)
            sw_buf_printf(b, "\\x%02lx", cp);
        else
            sw_buf_printf(b, cp > 0xffff ? "\\U%08lx" : "\\u%04lx", cp);
    }
    sw_buf_putc(b, '"');
}

static void yaml_float(sw_buf *b, double f)
{
    sw_buf num;
    const char *s, *e;

    if (isnan(f) || isinf(f)) {
        sw_buf_puts(b, isnan(f) ? ".nan" : f < 0 ? "-.inf" : ".inf");
        return;
    }
    sw_buf_init(&num);
    sw_float_write_py(&num, f); /* "0.1", "1e-05", "1.5e+20" */
    s = sw_buf_cstr(&num);
    e = strchr(s, 'e');
    if (strchr(s, '.') || !e)
        sw_buf_puts(b, s);
    else
        sw_buf_printf(b, "%.*s.0%s", (int)(e - s), s, e);
    sw_buf_dispose(&num);
}

static void yaml_value(sw_buf *b, const sw_value *v)
{
    size_t i;

    switch (v->type) {
    case SW_NULL:
        sw_buf_puts(b, "null");
        break;
    case SW_BOOL:
        sw_buf_puts(b, v->u.b ? "true" : "false");
        break;
    case SW_INT:
        sw_buf_printf(b, "%lld", (long long)v->u.i);
        break;
    case SW_FLOAT:
        yaml_float(b, v->u.f);
        break;
    case SW_STR:
        yaml_string(b, v->u.s);
        break;
    case SW_LIST:
        sw_buf_putc(b, '[');
        for (i = 0; i < v->u.list.len; i++) {
            sw_buf_puts(b, i ? ", " : "");
            yaml_value(b, v->u.list.items[i]);
        }
        sw_buf_putc(b, ']');
        break;
    case SW_MAP:
        sw_buf_putc(b, '{');
        for (i = 0; i < v->u.map.len; i++) {
            sw_buf_puts(b, i ? ", " : "");
            yaml_string(b, v->u.map.keys[i]);
            sw_buf_puts(b, ": ");
            yaml_value(b, v->u.map.vals[i]);
        }
        sw_buf_putc(b, '}');
        break;
    }
}

/* A key as W&B's writer would show it (`lr:`) when that reads back as the
 * same string; quoted otherwise (`"yes":`, `"a b":`, `"1":`). */
static void yaml_key(sw_buf *b, const char *k)
{
    static const char *const words[] = {"yes", "no",  "true", "false",
                                        "on",  "off", "null"};
    bool plain = (k[0] >= 'a' && k[0] <= 'z') || (k[0] >= 'A' && k[0] <= 'Z') ||
                 k[0] == '_';
    size_t i;

    for (i = 1; plain && k[i]; i++)
        plain = (k[i] >= 'a' && k[i] <= 'z') || (k[i] >= 'A' && k[i] <= 'Z') ||
                (k[i] >= '0' && k[i] <= '9') || strchr("_.-", k[i]);
    for (i = 0; plain && i < sizeof(words) / sizeof(words[0]); i++)
        plain = strcasecmp(k, words[i]) != 0;
    if (plain)
        sw_buf_puts(b, k);
    else
        yaml_string(b, k);
}

int sw_contract_wandb_config(char **out, const char *params_json)
{
    sw_value *v = NULL;
    sw_buf b;
    size_t i;

    *out = NULL;
    if (sw_json_parse(&v, params_json, strlen(params_json)) != SW_OK ||
        v->type != SW_MAP) {
        sw_value_free(v);
        return sw_error_set(SW_EINVALID,
                            "the run's parameters are not a JSON object");
    }
    sw_buf_init(&b);
    sw_buf_puts(&b, "wandb_version: 1\n");
    for (i = 0; i < v->u.map.len; i++) {
        sw_buf_puts(&b, i ? "" : "\n");
        yaml_key(&b, v->u.map.keys[i]);
        sw_buf_puts(&b, ":\n  value: ");
        yaml_value(&b, v->u.map.vals[i]);
        sw_buf_putc(&b, '\n');
    }
    sw_value_free(v);
    *out = sw_buf_detach(&b);
    return SW_OK;
}

int sw_contract_prepare(const char *run_dir, const char *params_json,
                        bool checkpoint)
{
    char *ckpt = sw_aprintf("%s/checkpoint", run_dir);
    char *params = sw_aprintf("%s/params.json", run_dir);
    char *yaml_path = sw_aprintf("%s/params.yaml", run_dir), *yaml = NULL;
    int error = sw_contract_mkdirs(checkpoint ? ckpt : run_dir);

    if (!error)
        error = sw_contract_write_file(params, params_json);
    /* parameters sweep's JSON reader cannot take back (a NaN) get no W&B
     * file rather than a wrong one: the run starts all the same */
    if (!error && sw_contract_wandb_config(&yaml, params_json) == SW_OK)
        error = sw_contract_write_file(yaml_path, yaml);
    free(ckpt);
    free(params);
    free(yaml_path);
    free(yaml);
    return error;
}

static int write_hash(const char *run_dir, const char *hash)
{
    char *path = sw_aprintf("%s/token.sha256", run_dir);
    int error = sw_contract_write_bytes(path, hash, strlen(hash));

    free(path);
    return error;
}

int sw_contract_write_token(const char *run_dir, const char *token)
{
    char hash[SW_TOKEN_HASH_LEN + 1];

    sw_token_hash(token, strlen(token), hash);
    return write_hash(run_dir, hash);
}

int sw_contract_new_token(char out[SW_CONTRACT_TOKEN_LEN + 1])
{
    unsigned char raw[SW_CONTRACT_TOKEN_LEN / 2];
    size_t got = 0, i;
    ssize_t n;

    while (got < sizeof(raw)) {
        n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sw_error_set(SW_EIO, "cannot read random bytes: %s",
                                strerror(errno));
        got += (size_t)n;
    }
    for (i = 0; i < sizeof(raw); i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return SW_OK;
}

/* The first `cap - 1` bytes of run_dir/name, NUL-terminated; how many. */
static size_t read_small(const char *run_dir, const char *name, char *buf,
                         size_t cap)
{
    char *path = sw_aprintf("%s/%s", run_dir, name);
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;

    if (f)
        fclose(f);
    free(path);
    buf[n] = '\0';
    return n;
}

char *sw_contract_read_token_hash(const char *run_dir)
{
    char buf[SW_TOKEN_HASH_LEN + 2], hash[SW_TOKEN_HASH_LEN + 1], *path;

    if (read_small(run_dir, "token.sha256", buf, sizeof(buf)) &&
        sw_token_is_hash(buf))
        return sw_strdup(buf);
    if (read_small(run_dir, "token", buf, sizeof(buf)) != SW_CONTRACT_TOKEN_LEN)
        return NULL;
    sw_token_hash(buf, SW_CONTRACT_TOKEN_LEN, hash);
    if (write_hash(run_dir, hash) == SW_OK) { /* the clear one goes */
        path = sw_aprintf("%s/token", run_dir);
        unlink(path);
        free(path);
    }
    return sw_strdup(hash);
}
