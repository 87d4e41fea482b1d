/*
 * contract.c - the trial contract (contract.h): a trial's environment, its
 * argv as the store keeps it, and the files of its run folder.
 *
 * Everything here is a pure function of its arguments and the sweep home,
 * so `sweep reproduce` shows exactly what `sweep run` gave a trial.
 */
#include "orchestrator/engine/contract.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orchestrator/token.h"
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

int sw_contract_prepare(const char *run_dir, const char *params_json)
{
    char *ckpt = sw_aprintf("%s/checkpoint", run_dir);
    char *params = sw_aprintf("%s/params.json", run_dir);
    int error = sw_contract_mkdirs(ckpt);

    if (!error)
        error = sw_contract_write_file(params, params_json);
    free(ckpt);
    free(params);
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
