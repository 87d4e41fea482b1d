/*
 * local_files.c - the files in a local attempt's folder, as the
 * orchestrator's side of the local executor (local.c) reads them.
 *
 * The supervisor (local_supervisor.c) writes them and renames each into
 * place, so a reader sees a whole file or none: `pid` holds the job
 * handle, "SUPERVISOR_PID TRIAL_PGID\n", and stays flock()ed for as long
 * as the attempt is watched; `exit` holds "exit N\n" or "signal N\n".
 * Nothing here writes to the folder, waits, or keeps state: every call
 * looks at the files afresh.
 */
#include "backends/local_internal.h"
#include "sweeps/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/types.h>
#include <unistd.h>

int sw_local__join(char *buf, size_t n, const char *dir, const char *name)
{
    int len = snprintf(buf, n, "%s/%s", dir, name);

    if (len < 0 || (size_t)len >= n)
        return sw_error_set(SW_EINVALID, "attempt folder '%s': path too long",
                            dir);
    return SW_OK;
}

/* Reads the small file dir/name into `text`, NUL-terminated: 1, or 0
 * when it does not exist. */
int sw_local__read_small(const char *dir, const char *name, char *text,
                         size_t size)
{
    char path[PATH_MAX];
    ssize_t n;
    int fd, error;

    if ((error = sw_local__join(path, sizeof(path), dir, name)) < 0)
        return error;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0)
        return sw_error_set(SW_EIO, "cannot open '%s': %s", path,
                            strerror(errno));
    do
        n = read(fd, text, size - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n < 0)
        return sw_error_set(SW_EIO, "cannot read '%s': %s", path,
                            strerror(errno));
    text[n] = '\0';
    return 1;
}

static int parse_exit(const char *dir, const char *s, sw_exit *out)
{
    const char *num = NULL;
    char *end;
    long v;

    memset(out, 0, sizeof(*out));
    if (strncmp(s, "exit ", 5) == 0) {
        out->exited = true;
        num = s + 5;
    } else if (strncmp(s, "signal ", 7) == 0) {
        num = s + 7;
    }
    errno = 0;
    v = num ? strtol(num, &end, 10) : 0;
    if (!num || end == num || *end != '\n' || errno || v < 0 || v > 255)
        return sw_error_set(SW_EIO, "%s/exit: malformed exit record", dir);
    if (out->exited)
        out->exit_code = (int)v;
    else
        out->signal = (int)v;
    return SW_OK;
}

/* 1 and *out filled when `<dir>/exit` exists, 0 when it does not. */
int sw_local__read_exit(const char *dir, sw_exit *out)
{
    char text[64];
    int rc = sw_local__read_small(dir, "exit", text, sizeof(text));

    if (rc <= 0)
        return rc;
    rc = parse_exit(dir, text, out);
    return rc < 0 ? rc : 1;
}

/* Takes a decimal int at *s: digits only, no sign, no leading zero. */
static bool take_int(const char **s, long *out)
{
    const char *p = *s;
    long v = 0;

    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
        return false;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((v = v * 10 + (*p - '0')) > INT_MAX)
            return false;
    *s = p;
    *out = v;
    return true;
}

/* Parses a handle, "PID PGID": the supervisor (> 0) and the trial's
 * process group (0 when nothing ran; never 1, init's). */
bool sw_local__parse_handle(const char *s, pid_t *pid, pid_t *pgid)
{
    long a, b;

    if (!take_int(&s, &a) || *s++ != ' ' || !take_int(&s, &b) || *s)
        return false;
    if (a == 0 || b == 1)
        return false;
    *pid = (pid_t)a;
    *pgid = (pid_t)b;
    return true;
}

/* Whether some supervisor still holds the lock on the attempt's pid
 * file: a pid alone may have been reused, or name a zombie. */
bool sw_local__watched(const char *dir)
{
    char path[PATH_MAX];
    bool held;
    int fd;

    if (sw_local__join(path, sizeof(path), dir, "pid") < 0)
        return false;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
    close(fd); /* also drops our lock, if we got it */
    return held;
}
