/*
 * local.c - the local executor: each attempt is a process of this machine,
 * started and watched by a supervisor process that outlives the
 * orchestrator (local_supervisor.c says what it keeps in the attempt's
 * folder, and why).
 *
 * This file is the orchestrator's side. The supervisor is forked once,
 * when the executor is made (so make executors before starting threads);
 * a launch is one request and one reply on a socket, so starting a trial
 * costs the orchestrator no fork of its own memory. check() reads the
 * attempt's exit file; whether an attempt is still watched is told by the
 * supervisor being alive (our own) or by the lock on its pid file (an
 * attempt adopted from an earlier orchestrator). cancel() signals the
 * trial's process group directly.
 */
#define _GNU_SOURCE /* pipe2, posix_spawn_file_actions_addchdir_np */
#include "backends/executor.h"
#include "backends/local_internal.h"
#include "sweeps/buf.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    sw_executor base;
    pid_t supervisor; /* the latest supervisor started; 0: none */
    bool alive;       /* it has not been seen to end */
    int sock;         /* requests and replies; -1: none */
    int events;       /* a byte per ended attempt */
} local;

int sw_local__send(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    ssize_t w;

    while (n > 0) {
        w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int sw_local__recv(int fd, void *buf, size_t n)
{
    char *p = buf;
    ssize_t r;

    while (n > 0) {
        r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Forks the supervisor. */
static int start_supervisor(local *lx)
{
    int sv[2], ev[2];
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return sw_error_set(SW_ERROR, "local executor: socketpair: %s",
                            strerror(errno));
    if (pipe2(ev, O_CLOEXEC | O_NONBLOCK) < 0) {
        close(sv[0]);
        close(sv[1]);
        return sw_error_set(SW_ERROR, "local executor: pipe: %s",
                            strerror(errno));
    }
    pid = fork();
    if (pid == 0)
        sw_local__supervise(sv[1], ev[1]);
    close(sv[1]);
    close(ev[1]);
    if (pid < 0) {
        close(sv[0]);
        close(ev[0]);
        return sw_error_set(SW_ERROR, "local executor: fork: %s",
                            strerror(errno));
    }
    lx->supervisor = pid;
    lx->alive = true;
    lx->sock = sv[0];
    lx->events = ev[0];
    return SW_OK;
}

/* Lets the supervisor go: it exits once its trials have ended. */
static void stop_supervisor(local *lx)
{
    if (lx->sock < 0)
        return;
    close(lx->sock);
    close(lx->events);
    if (lx->alive && waitpid(lx->supervisor, NULL, WNOHANG) == lx->supervisor)
        lx->alive = false;
    lx->sock = lx->events = -1;
}

/* Appends "NAME=value" entries: the inherited environment with `add` on
 * top (same names replaced, the last addition winning). */
static int put_env(sw_buf *b, char *const *add)
{
    size_t n = 0, m = 0, i, j, name;

    for (; environ[n]; n++)
        ;
    for (; add && add[m]; m++)
        if (!strchr(add[m], '=') || add[m][0] == '=')
            return sw_error_set(SW_EINVALID,
                                "trial environment: '%s' is not NAME=value",
                                add[m]);
    for (i = 0; i < n + m; i++) {
        const char *e = i < n ? environ[i] : add[i - n];

        name = strcspn(e, "=") + 1;
        for (j = i < n ? 0 : i - n + 1; j < m; j++)
            if (strncmp(add[j], e, name) == 0)
                break;
        if (j == m)
            sw_buf_put(b, e, strlen(e) + 1);
    }
    return SW_OK;
}

static void put_field(sw_buf *b, const char *s)
{
    sw_buf_put(b, s ? s : "", strlen(s ? s : "") + 1);
}

/* The request for launch `l`, after room for its 4-byte length; the
 * environment follows. */
static int make_request(sw_buf *b, const sw_launch *l)
{
    size_t argc = 0, i;
    char num[24];

    if (!l->argv || !l->argv[0] || !l->argv[0][0] || !l->dir)
        return sw_error_set(SW_EINVALID, "local executor: %s",
                            l->dir ? "empty command" : "no attempt folder");
    if (!l->stdout_path || !l->stderr_path)
        return sw_error_set(SW_EINVALID, "local executor: no log path");
    for (; l->argv[argc]; argc++)
        ;
    sw_buf_put(b, "\0\0\0\0", 4);
    put_field(b, l->dir);
    put_field(b, l->stdout_path);
    put_field(b, l->stderr_path);
    put_field(b, l->cwd);
    snprintf(num, sizeof(num), "%zu", argc);
    put_field(b, num);
    for (i = 0; i < argc; i++)
        put_field(b, l->argv[i]);
    return SW_OK;
}

/* Sends a request and reads its reply; restarts a supervisor that died. */
static int exchange(local *lx, const sw_buf *b, sw_local__reply *r)
{
    int tries;

    for (tries = 0; tries < 2; tries++) {
        if (lx->sock < 0) {
            int error = start_supervisor(lx);
            if (error)
                return error;
        }
        if (sw_local__send(lx->sock, b->ptr, b->len) == 0 &&
            sw_local__recv(lx->sock, r, sizeof(*r)) == 0)
            return SW_OK;
        stop_supervisor(lx); /* it died: the next try starts another */
    }
    return sw_error_set(SW_ERROR, "local executor: the supervisor does not "
                                  "answer");
}

static int local_launch(sw_executor *ex, const sw_launch *l, sw_job *job)
{
    local *lx = (local *)ex;
    sw_buf b = SW_BUF_INIT;
    sw_local__reply r;
    uint32_t envlen;
    int error;

    if ((error = make_request(&b, l)) < 0 || (error = put_env(&b, l->env)) < 0)
        goto done;
    if (b.len - 4 > SW_LOCAL_MAX_REQUEST) {
        error = sw_error_set(SW_EINVALID, "local executor: command and "
                                          "environment too long");
        goto done;
    }
    envlen = (uint32_t)(b.len - 4);
    memcpy(b.ptr, &envlen, 4);
    if ((error = exchange(lx, &b, &r)) < 0)
        goto done;
    if (r.code < 0) {
        r.msg[sizeof(r.msg) - 1] = '\0';
        error = sw_error_set(r.code, "%s", r.msg);
        goto done;
    }
    job->pid = lx->supervisor;
    job->pgid = r.pgid;
    job->dir = l->dir;
done:
    sw_buf_dispose(&b);
    return error;
}

/* ---- check() and cancel() ---- */

static int join(char *buf, size_t n, const char *dir, const char *name)
{
    int len = snprintf(buf, n, "%s/%s", dir, name);

    if (len < 0 || (size_t)len >= n)
        return sw_error_set(SW_EINVALID, "attempt folder '%s': path too long",
                            dir);
    return SW_OK;
}

static int parse_exit(const char *path, const char *s, sw_exit *out)
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
        return sw_error_set(SW_EIO, "%s: malformed exit record", path);
    if (out->exited)
        out->exit_code = (int)v;
    else
        out->signal = (int)v;
    return SW_OK;
}

/* 1 and *out filled when `<dir>/exit` exists, 0 when it does not. */
static int read_exit(const char *dir, sw_exit *out)
{
    char path[PATH_MAX], text[64];
    ssize_t n;
    int fd, error;

    if ((error = join(path, sizeof(path), dir, "exit")) < 0)
        return error;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0)
        return sw_error_set(SW_EIO, "cannot open '%s': %s", path,
                            strerror(errno));
    do
        n = read(fd, text, sizeof(text) - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n < 0)
        return sw_error_set(SW_EIO, "cannot read '%s': %s", path,
                            strerror(errno));
    text[n] = '\0';
    error = parse_exit(path, text, out);
    return error < 0 ? error : 1;
}

/* Whether some supervisor still holds the lock on the attempt's pid
 * file: a pid alone may have been reused, or name a zombie. */
static int watched(const sw_job *job)
{
    char path[PATH_MAX];
    int fd, error, alive;

    if ((error = join(path, sizeof(path), job->dir, "pid")) < 0)
        return error;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    alive = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
    close(fd); /* also drops our lock, if we got it */
    return alive;
}

/* Whether the attempt is still watched by a living supervisor: ours is
 * asked cheaply; another's (or ours, dead) by the lock it held. */
static int supervised(local *lx, const sw_job *job)
{
    pid_t r;

    if ((pid_t)job->pid == lx->supervisor && lx->alive) {
        do
            r = waitpid(lx->supervisor, NULL, WNOHANG);
        while (r < 0 && errno == EINTR);
        if (r == 0)
            return 1;
        lx->alive = false;
        stop_supervisor(lx); /* its event pipe is at EOF: stop polling it;
                                the next launch starts another */
    }
    return watched(job);
}

static int check_job(const sw_job *job)
{
    if (!job || !job->dir || job->pid <= 0 || job->pgid < 0 || job->pgid == 1 ||
        job->pid > INT_MAX || job->pgid > INT_MAX)
        return sw_error_set(SW_EINVALID, "local executor: not a local job");
    return SW_OK;
}

static int local_check(sw_executor *ex, const sw_job *job, sw_exit *out)
{
    local *lx = (local *)ex;
    int rc;

    if ((rc = check_job(job)) < 0)
        return rc;
    rc = read_exit(job->dir, out);
    if (rc == 0 && (rc = supervised(lx, job)) > 0)
        return 0;
    if (rc == 0)
        rc = read_exit(job->dir, out); /* it may have ended meanwhile */
    if (rc == 0)
        return sw_error_set(SW_ENOTFOUND,
                            "attempt in '%s' is lost: its supervisor (pid "
                            "%lld) ended without recording how the trial "
                            "ended",
                            job->dir, (long long)job->pid);
    return rc;
}

static int local_cancel(sw_executor *ex, const sw_job *job, bool force)
{
    char path[PATH_MAX];
    int error;

    (void)ex;
    if ((error = check_job(job)) < 0 ||
        (error = join(path, sizeof(path), job->dir, "exit")) < 0)
        return error;
    if (job->pgid == 0)
        return SW_OK; /* nothing ran */
    if ((pid_t)job->pgid == getpgrp())
        return sw_error_set(
            SW_EINVALID,
            "attempt in '%s': its process group is the orchestrator's",
            job->dir);
    if (access(path, F_OK) == 0)
        return SW_OK; /* ended: its group id may belong to others now */
    if (kill(-(pid_t)job->pgid, force ? SIGKILL : SIGTERM) < 0 &&
        errno != ESRCH)
        return sw_error_set(
            SW_ERROR,
            "cannot signal the trial in '%s' (process group %lld): %s",
            job->dir, (long long)job->pgid, strerror(errno));
    return SW_OK;
}

/* ---- the executor ---- */

/* Readable when an attempt this executor launched may have ended: the
 * engine reads and discards every byte (non-blocking), then calls check()
 * on its running jobs. Attempts adopted from an earlier orchestrator send
 * nothing here: poll those on a tick. At end of file the supervisor has
 * died; the check() that finds it so stops this descriptor (-1). */
static int local_wait_fd(sw_executor *ex)
{
    return ((local *)ex)->events;
}

static void local_free(sw_executor *ex)
{
    local *lx = (local *)ex;

    stop_supervisor(lx);
    free(lx);
}

static const sw_executor_methods local_methods = {
    SW_EXECUTOR_VERSION, "local",       local_launch, local_check,
    local_cancel,        local_wait_fd, local_free,
};

/* Makes a local executor and its supervisor process. Make executors before
 * starting threads: the supervisor is forked. */
int sw_executor_local_new(sw_executor **out)
{
    local *lx = sw_calloc(1, sizeof(*lx));
    int error;

    lx->sock = lx->events = -1;
    if ((error = start_supervisor(lx)) < 0) {
        free(lx);
        return error;
    }
    lx->base.methods = &local_methods;
    *out = &lx->base;
    return SW_OK;
}
