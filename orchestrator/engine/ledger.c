/*
 * ledger.c - the machine's GPU ledger (ledger.h): one file per running
 * sweep process in a shared folder, each held under flock(2) by its
 * writer, and a lock file that makes "read the others, then write mine"
 * atomic across processes.
 *
 * Invariants: a sweep's file is created and locked while the ledger's
 * lock is held, so a reader never meets a live sweep's file unlocked;
 * every descriptor is close-on-exec, so a trial never inherits a lock
 * and a dead sweep's holdings free themselves. Files are small (a line
 * per device held): at most FILE_MAX bytes of one are read.
 */
#include "orchestrator/engine/ledger.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweeps/buf.h"
#include "sweeps/error.h"

#define FILE_MAX (64 * 1024)
#define PREFIX "sweep-"

struct sw_ledger {
    char *dir, *path, *name; /* name: this process's file, in dir */
    char *sweep_id;
    int fd, lock_fd;
};

const char *sw_ledger__dir(void)
{
    const char *d = getenv("SWEEP_GPU_LEDGER");

    if (d)
        return d[0] ? d : NULL;
    return "/tmp/sweep-gpus";
}

static int os_error(const char *what, const char *path)
{
    return sw_error_set(SW_EIO, "GPU ledger: %s %s: %s", what, path,
                        strerror(errno));
}

/* The folder, made open to all (sticky, as /tmp) when this call makes it. */
static int make_dir(const char *dir)
{
    if (mkdir(dir, 01777) == 0)
        return chmod(dir, 01777) == 0 ? SW_OK : os_error("chmod", dir);
    return errno == EEXIST ? SW_OK : os_error("mkdir", dir);
}

static int open_lock(sw_ledger *l)
{
    char *path = sw_aprintf("%s/lock", l->dir);
    int error = SW_OK;

    l->lock_fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
    if (l->lock_fd < 0)
        error = os_error("open", path);
    free(path);
    return error;
}

int sw_ledger__open(sw_ledger **out, const char *dir, const char *sweep_id)
{
    sw_ledger *l = sw_calloc(1, sizeof(*l));
    int error;

    l->fd = l->lock_fd = -1;
    l->dir = sw_strdup(dir);
    l->sweep_id = sw_strdup(sweep_id);
    l->name = sw_aprintf(PREFIX "%s-%ld", sweep_id, (long)getpid());
    l->path = sw_aprintf("%s/%s", dir, l->name);
    if ((error = make_dir(dir)) != SW_OK || (error = open_lock(l)) != SW_OK ||
        (error = sw_ledger__lock(l)) != SW_OK)
        goto done;
    l->fd = open(l->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (l->fd < 0 || flock(l->fd, LOCK_EX | LOCK_NB) != 0)
        error = os_error("open", l->path);
    sw_ledger__unlock(l);
done:
    if (error) {
        sw_ledger__close(l);
        return error;
    }
    *out = l;
    return SW_OK;
}

void sw_ledger__close(sw_ledger *l)
{
    if (!l)
        return;
    if (l->fd >= 0) {
        unlink(l->path);
        close(l->fd);
    }
    if (l->lock_fd >= 0)
        close(l->lock_fd);
    free(l->dir);
    free(l->path);
    free(l->name);
    free(l->sweep_id);
    free(l);
}

int sw_ledger__lock(sw_ledger *l)
{
    while (flock(l->lock_fd, LOCK_EX) != 0)
        if (errno != EINTR)
            return os_error("lock", l->dir);
    return SW_OK;
}

void sw_ledger__unlock(sw_ledger *l)
{
    flock(l->lock_fd, LOCK_UN);
}

/* The text of another sweep's file `path`, when its owner still holds
 * it; NULL when it is gone (the file is then removed, where we may). */
static char *read_live(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    char *buf;
    ssize_t n;

    if (fd < 0)
        return NULL;
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) { /* its owner is gone */
        unlink(path);
        close(fd);
        return NULL;
    }
    buf = sw_malloc(FILE_MAX + 1);
    n = pread(fd, buf, FILE_MAX, 0);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

/* Calls `each` for the device lines of one file's `text`. */
static void parse(char *text, sw_ledger_each each, void *ctx)
{
    char who[160] = "another sweep", key[256], *line, *nl;
    char id[64];
    unsigned long long share, bytes;
    long pid;

    for (line = text; *line; line = nl + 1) {
        if (!(nl = strchr(line, '\n')))
            break;
        *nl = '\0';
        if (sscanf(line, "sweep %63s pid %ld", id, &pid) == 2)
            snprintf(who, sizeof(who), "sweep %s, pid %ld", id, pid);
        else if (sscanf(line, "%255s %llu %llu", key, &share, &bytes) == 3)
            each(ctx, key, share > UINT32_MAX ? UINT32_MAX : (uint32_t)share,
                 (uint64_t)bytes, who);
    }
}

int sw_ledger__others(sw_ledger *l, sw_ledger_each each, void *ctx)
{
    DIR *d = opendir(l->dir);
    struct dirent *ent;
    char *path, *text;

    if (!d)
        return os_error("read", l->dir);
    while ((ent = readdir(d))) {
        if (strncmp(ent->d_name, PREFIX, strlen(PREFIX)) != 0 ||
            strcmp(ent->d_name, l->name) == 0)
            continue;
        path = sw_aprintf("%s/%s", l->dir, ent->d_name);
        if ((text = read_live(path)))
            parse(text, each, ctx);
        free(text);
        free(path);
    }
    closedir(d);
    return SW_OK;
}

int sw_ledger__publish(sw_ledger *l, const char *text)
{
    sw_buf b = SW_BUF_INIT;
    size_t len;
    int error = SW_OK;

    sw_buf_printf(&b, "sweep %s pid %ld\n%s", l->sweep_id, (long)getpid(),
                  text);
    len = b.len;
    if (ftruncate(l->fd, 0) != 0 ||
        pwrite(l->fd, sw_buf_cstr(&b), len, 0) != (ssize_t)len)
        error = os_error("write", l->path);
    sw_buf_dispose(&b);
    return error;
}
