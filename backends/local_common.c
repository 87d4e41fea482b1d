/*
 * local_common.c - what the supervisor (local_supervisor.c) and the shim
 * program (local_shim.c) both do: write a status file whole, close the
 * descriptors they were not given, list a process's children, and the
 * full-disk fault point of the tests.
 *
 * The shim is a program of its own, linked statically from this file,
 * local_shim.c and local_logs.c, so nothing here may reach further into
 * sweep than sweeps/error.c.
 */
#define _GNU_SOURCE /* close_range */
#include "backends/local_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sweeps/error.h"

#ifdef SW_FAULT_INJECTION
static const char *nospace_flag;
static bool nospace_given;

void sw_local__fault_nospace_at(const char *flag)
{
    nospace_flag = flag && flag[0] ? flag : NULL;
    nospace_given = true;
}

bool sw_local__fault_nospace(void)
{
    const char *flag =
        nospace_given ? nospace_flag : getenv("SWEEP_FAULT_NOSPACE");

    return flag && access(flag, F_OK) == 0;
}
#else
void sw_local__fault_nospace_at(const char *flag)
{
    (void)flag;
}

bool sw_local__fault_nospace(void)
{
    return false;
}
#endif

int sw_local__put_file(int dirfd, const char *name, const char *text, bool keep)
{
    char tmp[32];
    size_t len = strlen(text);
    int fd;

    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    if (sw_local__fault_nospace()) {
        errno = ENOSPC;
        return -1;
    }
    fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (sw_write_all(fd, text, len) < 0 || (keep && flock(fd, LOCK_EX)) ||
        renameat(dirfd, tmp, dirfd, name) < 0) {
        int e = errno;

        close(fd);
        unlinkat(dirfd, tmp, 0);
        errno = e;
        return -1;
    }
    if (keep)
        return fd;
    close(fd);
    return 0;
}

static void close_from_to(unsigned int lo, unsigned int hi)
{
#ifdef SYS_close_range
    if (lo > hi || syscall(SYS_close_range, lo, hi, 0) == 0)
        return;
#endif
    for (; lo <= hi && lo < 65536; lo++)
        close((int)lo);
}

void sw_local__close_except(const int *keep, int n)
{
    unsigned int lo = 3, next;
    int i;

    for (;;) { /* the kept ones, smallest first: n is a handful */
        next = ~0U;
        for (i = 0; i < n; i++)
            if (keep[i] >= 0 && (unsigned int)keep[i] >= lo &&
                (unsigned int)keep[i] < next)
                next = (unsigned int)keep[i];
        if (next == ~0U)
            break;
        if (next > lo)
            close_from_to(lo, next - 1);
        lo = next + 1;
    }
    close_from_to(lo, ~0U);
}

/* Adds the pids listed in the children file `path` to kids[cap]. */
static size_t read_children(const char *path, pid_t *kids, size_t n, size_t cap)
{
    char buf[4096], *p, *end;
    size_t len = 0;
    ssize_t r;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return n;
    for (;;) { /* a pid cut between two reads is kept for the next */
        r = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        buf[len] = '\0';
        for (p = buf; n < cap; p = end) {
            long k = strtol(p, &end, 10);

            if (end == p || *end == '\0')
                break; /* none left, or perhaps cut short */
            if (k > 0)
                kids[n++] = (pid_t)k;
        }
        len = strlen(p);
        memmove(buf, p, len + 1);
    }
    close(fd);
    if (len > 0 && n < cap && strtol(buf, NULL, 10) > 0)
        kids[n++] = (pid_t)strtol(buf, NULL, 10);
    return n;
}

size_t sw_local__children(pid_t pid, pid_t *kids, size_t cap)
{
    char path[96];
    struct dirent *e;
    size_t n = 0;
    DIR *d;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(d = opendir(path)))
        return 0;
    while ((e = readdir(d)) && n < cap) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int)pid,
                 e->d_name);
        n = read_children(path, kids, n, cap);
    }
    closedir(d);
    return n;
}
