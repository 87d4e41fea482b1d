/*
 * contract_copy.c - one run's checkpoint folder copied into another's:
 * how a run that a PBT exploit makes starts from its parent's
 * checkpoint (contract.h, sw_contract_copy_checkpoint).
 *
 * The copy is made beside the target, as checkpoint.copy, then renamed
 * over it, so the run never sees half a copy; a copy a crash left behind
 * is removed first, so copying again is always safe. Files are copied,
 * never linked: a trainer that rewrites a file in place must not change
 * its parent's. Regular files keep their mode, symbolic links are copied
 * as links, anything else (a socket, a FIFO) is left out. It is slow work
 * (it reads and writes the whole checkpoint): the engine runs it off its
 * loop.
 *
 * Test builds other than Release (SW_FAULT_INJECTION) read one variable,
 * for tests/cli/test_pbt.sh: SWEEP_FAULT_COPY_WAIT=FILE holds each copy,
 * made but not yet in place, while FILE exists, once it has created
 * FILE.waiting: the test kills `sweep` there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/engine/contract.h"
#include "sweeps/buf.h"
#include "sweeps/error.h"

#define COPY_BUF (1 << 20)

#ifdef SW_FAULT_INJECTION
/* SWEEP_FAULT_COPY_WAIT: wait while its file exists, saying so. */
static void fault_copy_wait(void)
{
    const char *flag = getenv("SWEEP_FAULT_COPY_WAIT");
    struct timespec nap = {0, 10 * 1000 * 1000};
    char *mark;
    int fd;

    if (!flag || access(flag, F_OK) != 0)
        return;
    mark = sw_aprintf("%s.waiting", flag);
    if ((fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0)
        close(fd);
    free(mark);
    while (access(flag, F_OK) == 0)
        nanosleep(&nap, NULL);
}
#else
static void fault_copy_wait(void)
{
}
#endif

static int io_error(const char *what, const char *path)
{
    return sw_error_set(sw_error_io_code(errno), "cannot %s %s: %s", what, path,
                        strerror(errno));
}

/* rm -rf `path`; a path that is not there is no error. */
static int remove_tree(const char *path)
{
    struct dirent *d;
    struct stat st;
    DIR *dir;
    char *sub;
    int error = SW_OK;

    if (lstat(path, &st) != 0)
        return errno == ENOENT ? SW_OK : io_error("remove", path);
    if (!S_ISDIR(st.st_mode))
        return unlink(path) == 0 ? SW_OK : io_error("remove", path);
    if (!(dir = opendir(path)))
        return io_error("read", path);
    while (!error && (d = readdir(dir))) {
        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
            continue;
        sub = sw_aprintf("%s/%s", path, d->d_name);
        error = remove_tree(sub);
        free(sub);
    }
    closedir(dir);
    if (!error && rmdir(path) != 0)
        error = io_error("remove", path);
    return error;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, error = SW_OK;
    char *buf = NULL;
    ssize_t n = 0;

    if (in < 0)
        return io_error("read", from);
    out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 07777);
    if (out < 0) {
        error = io_error("write", to);
        goto done;
    }
    buf = sw_malloc(COPY_BUF);
    while (!error && (n = read(in, buf, COPY_BUF)) > 0)
        if (sw_write_all(out, buf, (size_t)n) < 0)
            error = io_error("write", to);
    if (n < 0 && !error)
        error = io_error("read", from);
    if (close(out) != 0 && !error)
        error = io_error("write", to);
done:
    free(buf);
    close(in);
    return error;
}

static int copy_link(const char *from, const char *to)
{
    char target[PATH_MAX];
    ssize_t n = readlink(from, target, sizeof(target) - 1);

    if (n < 0)
        return io_error("read", from);
    target[n] = '\0';
    return symlink(target, to) == 0 ? SW_OK : io_error("write", to);
}

static int copy_tree(const char *from, const char *to);

/* One entry of a folder being copied, by its kind. */
static int copy_entry(const char *from, const char *to)
{
    struct stat st;

    if (lstat(from, &st) != 0)
        return io_error("read", from);
    if (S_ISDIR(st.st_mode))
        return copy_tree(from, to);
    if (S_ISREG(st.st_mode))
        return copy_file(from, to, st.st_mode);
    if (S_ISLNK(st.st_mode))
        return copy_link(from, to);
    return SW_OK; /* a socket, a FIFO, a device: not a checkpoint's */
}

/* cp -r `from` `to`, `to` not there yet. */
static int copy_tree(const char *from, const char *to)
{
    struct dirent *d;
    DIR *dir;
    char *a, *b;
    int error = SW_OK;

    if (mkdir(to, 0700) != 0)
        return io_error("create", to);
    if (!(dir = opendir(from)))
        return io_error("read", from);
    while (!error && (d = readdir(dir))) {
        if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
            continue;
        a = sw_aprintf("%s/%s", from, d->d_name);
        b = sw_aprintf("%s/%s", to, d->d_name);
        error = copy_entry(a, b);
        free(a);
        free(b);
    }
    closedir(dir);
    return error;
}

int sw_contract_copy_checkpoint(const char *from_run_dir,
                                const char *to_run_dir)
{
    char *from = sw_aprintf("%s/checkpoint", from_run_dir);
    char *tmp = sw_aprintf("%s/checkpoint.copy", to_run_dir);
    char *to = sw_aprintf("%s/checkpoint", to_run_dir);
    struct stat st;
    int error = sw_contract_mkdirs(to_run_dir);

    if (!error)
        error = remove_tree(tmp);
    if (!error && lstat(from, &st) != 0 && errno == ENOENT)
        error = mkdir(tmp, 0700) == 0 ? SW_OK : io_error("create", tmp);
    else if (!error)
        error = copy_tree(from, tmp);
    if (!error)
        fault_copy_wait();
    if (!error)
        error = remove_tree(to);
    if (!error && rename(tmp, to) != 0)
        error = io_error("rename", tmp);
    if (error)
        remove_tree(tmp); /* what was copied: the error is said already */
    free(from);
    free(tmp);
    free(to);
    return error;
}
