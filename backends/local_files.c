/*
 * local_files.c - the files in a local attempt's folder, as the
 * orchestrator's side of the local executor (local.c) reads them.
 *
 * The supervisor (local_supervisor.c) writes them and renames each into
 * place, so a reader sees a whole file or none: `pid` holds the job
 * handle, "SUPERVISOR_PID TRIAL_PGID STARTTIME\n", then the boot id and
 * a newline, and stays flock()ed for as long as the attempt is watched
 * (older versions wrote only "SUPERVISOR_PID TRIAL_PGID\n"); `exit`
 * holds "exit N\n" or "signal N\n"; the folder itself is flock()ed while a
 * supervisor starts an attempt in it, until its pid file is in place. Nothing
 * here writes to the folder, waits, or keeps state: every call looks at the
 * files afresh.
 *
 * A recorded process group is signalled only once it is proven to be
 * the trial's still (sw_local__check_group): a group id is a pid, and
 * after the trial ended unseen (a reboot, a killed supervisor) it may
 * belong to anyone.
 */
#include "backends/local_internal.h"
#include "sweeps/error.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
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

int sw_local__parse_exit(const char *dir, const char *s, sw_exit *out)
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
    if (!num || end == num || *end != '\n' || errno || v < 0 || v > 255 ||
        (end[1] && strcmp(end + 1, "disk\n") != 0))
        return sw_error_set(SW_EIO, "%s/exit: malformed exit record", dir);
    out->disk = end[1] != '\0';
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
    rc = sw_local__parse_exit(dir, text, out);
    return rc < 0 ? rc : 1;
}

/* Takes a decimal number at *s, at most `max`: digits only, no sign, no
 * leading zero. */
static bool take_num(const char **s, uint64_t max, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;

    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
        return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (max - (uint64_t)(*p - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *s = p;
    *out = v;
    return true;
}

/* Parses a handle, "PID PGID START" or the older "PID PGID": the
 * supervisor (> 0), the trial's process group (0 when nothing ran; never
 * 1, init's) and its leader's start time (0 exactly when nothing ran). */
bool sw_local__parse_handle(const char *s, pid_t *pid, pid_t *pgid,
                            uint64_t *start)
{
    uint64_t a, b, c = 0;
    bool three;

    if (!take_num(&s, INT_MAX, &a) || *s++ != ' ' || !take_num(&s, INT_MAX, &b))
        return false;
    three = *s == ' ';
    if (three && (s++, !take_num(&s, UINT64_MAX / 2, &c)))
        return false;
    if (*s || a == 0 || b == 1 || (three && (b == 0) != (c == 0)))
        return false;
    *pid = (pid_t)a;
    *pgid = (pid_t)b;
    *start = c;
    return true;
}

/* Whether some process holds a lock on the file at path. */
static bool locked(const char *path, int flags)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
    bool held;

    if (fd < 0)
        return false;
    held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
    close(fd); /* also drops our lock, if we got it */
    return held;
}

/* Whether some supervisor still holds the lock on the attempt's pid
 * file: a pid alone may have been reused, or name a zombie. */
bool sw_local__watched(const char *dir)
{
    char path[PATH_MAX];

    return sw_local__join(path, sizeof(path), dir, "pid") == SW_OK &&
           locked(path, 0);
}

bool sw_local__launching(const char *dir)
{
    return locked(dir, O_DIRECTORY);
}

const char *sw_local__proc_stat(long pid, char *buf, size_t size)
{
    char path[64], *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return NULL;
    do
        n = read(fd, buf, size - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* the name before it may hold anything */
    return p ? p + 1 : NULL;
}

int sw_local__start_time(pid_t pid, uint64_t *start, pid_t *pgrp)
{
    char buf[1024];
    const char *p = sw_local__proc_stat(pid, buf, sizeof(buf));
    unsigned long long st;
    int pg;

    /* after the name: state(3) ppid pgrp session tty_nr tpgid flags
     * minflt cminflt majflt cmajflt utime stime cutime cstime priority
     * nice num_threads itrealvalue starttime(22) */
    if (!p || sscanf(p,
                     " %*c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u"
                     " %*d %*d %*d %*d %*d %*d %llu",
                     &pg, &st) != 2)
        return 0;
    *start = st;
    *pgrp = (pid_t)pg;
    return 1;
}

/* State and process group of pid from /proc/PID/stat; false when gone. */
static bool state_of(const char *pid, char *state, int *pgrp)
{
    char buf[512];
    const char *p =
        sw_local__proc_stat(strtol(pid, NULL, 10), buf, sizeof(buf));

    return p && sscanf(p, " %c %*d %d", state, pgrp) == 2;
}

bool sw_local__group_alive(pid_t pgid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    bool alive = false;
    char st;
    int pg;

    while (d && !alive && (e = readdir(d)))
        alive = e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
                state_of(e->d_name, &st, &pg) && pg == (int)pgid && st != 'Z' &&
                st != 'X';
    if (d)
        closedir(d);
    return alive;
}

void sw_local__boot_id(char *id, size_t size)
{
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, id, size - 1);

    if (fd >= 0)
        close(fd);
    id[n > 0 ? n : 0] = '\0';
    id[strcspn(id, "\n")] = '\0';
}

/* Whether the pid file names a boot other than this one; false when it
 * names none (older versions) or either cannot be read. */
static bool other_boot(const char *dir)
{
    char text[160], now[64], *rec;

    if (sw_local__read_small(dir, "pid", text, sizeof(text)) <= 0 ||
        !(rec = strchr(text, '\n')) || !*++rec)
        return false;
    rec[strcspn(rec, "\n")] = '\0';
    sw_local__boot_id(now, sizeof(now));
    return now[0] && strcmp(rec, now) != 0;
}

/* Proves that group pgid is still the attempt's trial. The proof is its
 * leader: the supervisor keeps it unreaped until the group is empty, and
 * its start time tells it from a later process given the same id. When
 * the leader is gone but members remain, nothing proves they are the
 * trial's (the id may be another's group by now): no signal. */
int sw_local__check_group(const char *dir, pid_t pgid, uint64_t start)
{
    uint64_t now;
    pid_t pgrp;

    if (start == 0) /* a handle from an older version: no start time */
        return sw_local__watched(dir)
                   ? SW_OK
                   : sw_error_set(SW_ERROR,
                                  "attempt in '%s': process group %d not "
                                  "signalled: its handle records no start "
                                  "time and no supervisor watches it",
                                  dir, (int)pgid);
    if (other_boot(dir))
        return sw_error_set(SW_ERROR,
                            "attempt in '%s': process group %d not "
                            "signalled: the trial ran before a reboot",
                            dir, (int)pgid);
    if (!sw_local__start_time(pgid, &now, &pgrp) || pgrp != pgid)
        return sw_error_set(SW_ERROR,
                            "attempt in '%s': process group %d not "
                            "signalled: its leader, the trial, is gone",
                            dir, (int)pgid);
    if (now != start)
        return sw_error_set(
            SW_ERROR,
            "attempt in '%s': process group %d not signalled: it is not the "
            "trial's (start time %" PRIu64 ", the trial's was %" PRIu64 ")",
            dir, (int)pgid, now, start);
    return SW_OK;
}
