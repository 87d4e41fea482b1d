/*
 * local.c - the local executor: each attempt is a process of this machine,
 * started and watched by a supervisor process that outlives the
 * orchestrator (local_supervisor.c says what it keeps in the attempt's
 * folder, and why).
 *
 * This file is the orchestrator's side, and it never waits for the
 * supervisor. launch() writes one request on the supervisor's socket and
 * returns; the supervisor answers requests in order, so the launches
 * awaiting a reply are a FIFO, and process() reads replies as they come
 * (keeping a partial one) and answers them with SW_JOB_STARTED or
 * SW_JOB_START_FAILED. The supervisor writes a byte on its event pipe
 * each time an attempt ends; fd() is an epoll set holding the socket and
 * the pipe. The supervisor is forked when the executor is made, and again
 * by the first launch after it died.
 *
 * An attempt has ended when its exit file exists. One that has not is
 * still watched while some supervisor holds the lock on its pid file
 * (from before its start is answered until its exit file is in place);
 * watched by nobody and without an exit file, it is lost: its group is
 * SIGKILLed (once proven the trial's), and the loss told only once no
 * process of the group lives, so a rerun never meets the old copy. A
 * launch our supervisor died before answering started if its pid file
 * exists (a trial execs only after it is in place); if not, and no
 * supervisor holds its folder locked, it never ran: SW_JOB_NOT_STARTED.
 * An end the supervisor could not write to its exit file (a full disk)
 * comes over the socket instead. Our living supervisor wakes us when one
 * of its attempts ends; the others (adopted from an earlier orchestrator,
 * or left by our supervisor when it died) are polled, on next_wake(). cancel()
 * signals the trial's process group directly, and only once its leader's start
 * time (and the boot) prove it is still the trial's: never a group id that
 * another process took over after the trial ended unseen. Time is only what
 * process() was last given, so a fake clock can drive it. Reading the attempt's
 * files (and its job handle) is local_files.c's business.
 */
#define _GNU_SOURCE /* pipe2 */
#include "backends/executor.h"
#include "backends/local_internal.h"
#include "sweeps/buf.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define WATCH_POLL                                                             \
    0.25 /* s between checks of attempts no supervisor of                      \
            ours watches */
#define SEEK_POLL                                                              \
    0.02               /* s between looks for the pid file of an attempt       \
                          adopted without a handle */
#define SEEK_GRACE 2.0 /* s it may take that file to appear */
#define KILL_WAIT 60.0 /* s a killed group may take to go, at most */

typedef enum {
    A_PENDING, /* launched: the supervisor has not replied */
    A_SEEKING, /* adopted without a handle: no pid file seen yet */
    A_RUNNING, /* started: its end has not been seen */
    A_ENDING,  /* lost: its group was SIGKILLed, and its loss is told
                  once nothing of it runs (a rerun must not meet it) */
    A_DONE,    /* answered for good: sweep() frees it */
} astate;

typedef struct {
    char *key;
    char *dir;
    astate state;
    bool ours;       /* A_RUNNING under our living supervisor: its pipe
                        wakes us; else next_wake() polls it */
    pid_t pid, pgid; /* the handle; pgid 0: nothing ran */
    uint64_t start;  /* and the start time of the group's leader; 0: not
                        recorded (a handle from an older version) */
    int cancel;      /* the signal a cancel asked for before the start */
    bool orphaned;   /* A_SEEKING: launched, its supervisor died before
                        answering: no grace (see seek()) */
    bool timed;      /* A_SEEKING: `deadline` is set (first process());
                        A_ENDING: when to stop waiting */
    double deadline;
    double next_look; /* A_RUNNING, not ours: when to look for its end */
} attempt;

typedef struct {
    sw_executor base;
    int epfd;         /* what fd() returns: the socket and the pipe */
    pid_t supervisor; /* 0: none; sock and events are then -1 */
    int sock;         /* requests out, replies in (ours non-blocking) */
    int events;       /* a byte per ended attempt (non-blocking) */
    unsigned char reply[sizeof(sw_local__reply)]; /* one being read */
    size_t got;
    attempt **all; /* every attempt not forgotten yet */
    size_t n, cap;
    attempt **fifo; /* the A_PENDING ones, in the order of the replies */
    size_t fhead, fn, fcap;
    sw_job_event *queue; /* events not taken by next_event() yet */
    size_t qhead, qn, qcap;
    pid_t *dead; /* supervisors seen to end, not reaped yet */
    size_t ndead, deadcap;
    double now; /* what process() was last given */
} local;

/* ---- attempts and events ---- */

static attempt *find(local *lx, const char *key)
{
    size_t i;

    for (i = 0; i < lx->n; i++)
        if (lx->all[i]->state != A_DONE && strcmp(lx->all[i]->key, key) == 0)
            return lx->all[i];
    return NULL;
}

static attempt *add(local *lx, const char *key, const char *dir, astate st)
{
    attempt *a = sw_calloc(1, sizeof(*a));

    a->key = sw_strdup(key);
    a->dir = sw_strdup(dir);
    a->state = st;
    sw_grow(&lx->all, &lx->cap, lx->n + 1, sizeof(*lx->all));
    lx->all[lx->n++] = a;
    return a;
}

static void free_attempt(attempt *a)
{
    free(a->key);
    free(a->dir);
    free(a);
}

/* Forgets the attempts that have had their last event. */
static void sweep(local *lx)
{
    size_t i = 0;

    while (i < lx->n) {
        if (lx->all[i]->state != A_DONE) {
            i++;
            continue;
        }
        free_attempt(lx->all[i]);
        lx->all[i] = lx->all[--lx->n];
    }
}

static void push_pending(local *lx, attempt *a)
{
    if (lx->fhead == lx->fn)
        lx->fhead = lx->fn = 0;
    sw_grow(&lx->fifo, &lx->fcap, lx->fn + 1, sizeof(*lx->fifo));
    lx->fifo[lx->fn++] = a;
}

static attempt *pop_pending(local *lx)
{
    return lx->fhead < lx->fn ? lx->fifo[lx->fhead++] : NULL;
}

/* Queues an event about `a`; consumes `message` (may be NULL). */
static sw_job_event *emit(local *lx, sw_job_event_kind kind, const attempt *a,
                          char *message)
{
    sw_job_event *ev;

    if (lx->qhead > 0 && lx->qhead == lx->qn)
        lx->qhead = lx->qn = 0;
    sw_grow(&lx->queue, &lx->qcap, lx->qn + 1, sizeof(*lx->queue));
    ev = &lx->queue[lx->qn++];
    memset(ev, 0, sizeof(*ev));
    ev->kind = kind;
    ev->key = sw_strdup(a->key);
    ev->message = message;
    if (kind == SW_JOB_STARTED)
        ev->handle =
            sw_aprintf("%d %d %" PRIu64, (int)a->pid, (int)a->pgid, a->start);
    return ev;
}

/* ---- the supervisor ---- */

static void lose_supervisor(local *lx);

/* Makes our end of the socket non-blocking and puts it and the pipe in
 * the epoll set (level-triggered: readable while either is). */
static int hook(local *lx)
{
    struct epoll_event e = {.events = EPOLLIN};
    int flags = fcntl(lx->sock, F_GETFL), error;

    if (flags < 0 || fcntl(lx->sock, F_SETFL, flags | O_NONBLOCK) < 0)
        goto fail;
    e.data.fd = lx->sock;
    if (epoll_ctl(lx->epfd, EPOLL_CTL_ADD, lx->sock, &e) < 0)
        goto fail;
    e.data.fd = lx->events;
    if (epoll_ctl(lx->epfd, EPOLL_CTL_ADD, lx->events, &e) < 0)
        goto fail;
    return SW_OK;
fail:
    error = sw_error_set(SW_ERROR, "local executor: %s", strerror(errno));
    lose_supervisor(lx); /* it reads EOF and exits */
    return error;
}

/* Forks a supervisor. */
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
    lx->sock = sv[0];
    lx->events = ev[0];
    lx->got = 0;
    return hook(lx);
}

/* Closes our ends of the socket and the pipe. Removed from the epoll set
 * first: a forked child may keep them open, and epoll would still report
 * them. */
static void unhook(local *lx)
{
    if (lx->sock >= 0) {
        epoll_ctl(lx->epfd, EPOLL_CTL_DEL, lx->sock, NULL);
        close(lx->sock);
    }
    if (lx->events >= 0) {
        epoll_ctl(lx->epfd, EPOLL_CTL_DEL, lx->events, NULL);
        close(lx->events);
    }
    lx->sock = lx->events = -1;
    lx->got = 0;
}

/* Reaps the supervisors seen to end, without waiting for any. */
static void reap_dead(local *lx)
{
    size_t i = 0;
    pid_t r;

    while (i < lx->ndead) {
        r = waitpid(lx->dead[i], NULL, WNOHANG);
        if (r == 0 || (r < 0 && errno == EINTR))
            i++;
        else /* reaped, or not ours to reap */
            lx->dead[i] = lx->dead[--lx->ndead];
    }
}

/* ---- starts and ends ---- */

/* Sends `sig` to the trial's process group, unless nothing ran or it has
 * ended (its group id may be someone else's now). */
static int signal_group(const attempt *a, int sig)
{
    char path[PATH_MAX];
    int error;

    if (a->pgid <= 1)
        return SW_OK; /* nothing ran */
    if (a->pgid == getpgrp())
        return sw_error_set(
            SW_EINVALID,
            "attempt in '%s': its process group is the orchestrator's", a->dir);
    if ((error = sw_local__join(path, sizeof(path), a->dir, "exit")) < 0)
        return error;
    if (access(path, F_OK) == 0)
        return SW_OK;
    if ((error = sw_local__check_group(a->dir, a->pgid, a->start)) < 0)
        return error; /* never signal what may not be the trial */
    if (kill(-a->pgid, sig) < 0 && errno != ESRCH)
        return sw_error_set(
            SW_ERROR, "cannot signal the trial in '%s' (process group %d): %s",
            a->dir, (int)a->pgid, strerror(errno));
    return SW_OK;
}

/* Tells that attempt `a` is lost: nothing recorded how it ended. */
static void lost(local *lx, attempt *a)
{
    emit(lx, SW_JOB_LOST, a,
         sw_aprintf("nothing recorded how the trial in '%s' ended: its "
                    "shim or its supervisor (pid %d) was killed",
                    a->dir, (int)a->pid));
    a->state = A_DONE;
}

/* Queues the end of running attempt `a` if it has come: SW_JOB_ENDED
 * when its exit file says how, SW_JOB_LOST when nobody watches it (the
 * lock also tells of our own supervisor failing to write the file). A
 * lost trial may still run: its group is killed, and the loss told only
 * once the group is gone (A_ENDING), as the engine reruns its run. */
static void check_end(local *lx, attempt *a)
{
    sw_exit e;
    int rc = sw_local__read_exit(a->dir, &e);

    if (rc == 0 && sw_local__watched(a->dir))
        return;
    if (rc == 0)
        rc = sw_local__read_exit(a->dir, &e); /* it may have ended meanwhile */
    if (rc == 0 && a->pgid > 1 && signal_group(a, SIGKILL) == SW_OK) {
        a->state = A_ENDING;
        a->deadline = lx->now + KILL_WAIT;
        return;
    }
    if (rc > 0) {
        emit(lx, SW_JOB_ENDED, a, NULL)->exit = e;
        a->state = A_DONE;
    } else if (rc == 0) {
        lost(lx, a);
    } else {
        emit(lx, SW_JOB_LOST, a, sw_strdup(sw_error_last()));
        a->state = A_DONE;
    }
}

/* `a` (pid and pgid set) has started: SW_JOB_STARTED, the cancel that
 * came before, and a first look for its end (a program that could not be
 * executed has ended already, and no byte on the pipe says so). */
static void started(local *lx, attempt *a)
{
    a->state = A_RUNNING;
    emit(lx, SW_JOB_STARTED, a, NULL);
    if (a->cancel)
        (void)signal_group(a, a->cancel); /* its end comes either way */
    check_end(lx, a);
}

/* For an attempt whose start was not answered: it started if its pid
 * file exists (written before the answer), then watched through that
 * file. 1: started; 0: no pid file; < 0: the file is unusable. */
static int start_from_pid_file(local *lx, attempt *a)
{
    char text[160];
    int rc = sw_local__read_small(a->dir, "pid", text, sizeof(text));

    if (rc <= 0)
        return rc;
    text[strcspn(text, "\n")] = '\0'; /* the handle; the boot id follows */
    if (!sw_local__parse_handle(text, &a->pid, &a->pgid, &a->start))
        return sw_error_set(SW_EIO, "%s/pid: malformed pid file", a->dir);
    a->ours = false;
    started(lx, a);
    return 1;
}

/* Looks for the pid file of an attempt whose start is unknown: adopted
 * without a handle, or launched by a supervisor that died before
 * answering. While a supervisor holds its folder locked, it is starting
 * it; otherwise no pid file means it never ran, and never will (a
 * supervisor refuses a request whose orchestrator has gone, and a trial
 * runs nothing before its pid file is in place). Adopted attempts are
 * still given SEEK_GRACE of process() time, once timed. Gives up at
 * once when the folder is gone. */
static void seek(local *lx, attempt *a)
{
    struct stat st;
    int rc = start_from_pid_file(lx, a);

    if (rc == 0 && !sw_local__launching(a->dir))
        rc = start_from_pid_file(lx, a); /* written before the unlock */
    else if (rc == 0 && stat(a->dir, &st) == 0)
        return; /* being started: its pid file comes next */
    if (rc < 0) {
        emit(lx, a->orphaned ? SW_JOB_START_FAILED : SW_JOB_LOST, a,
             sw_strdup(sw_error_last()))
            ->code = SW_EIO;
        a->state = A_DONE;
    }
    if (rc != 0)
        return;
    if (!a->orphaned && stat(a->dir, &st) == 0 && S_ISDIR(st.st_mode) &&
        !(a->timed && lx->now >= a->deadline))
        return;
    emit(lx, SW_JOB_NOT_STARTED, a,
         a->orphaned ? sw_aprintf("local executor: the supervisor died "
                                  "before starting the attempt in '%s'; "
                                  "it never ran",
                                  a->dir)
                     : NULL);
    a->state = A_DONE;
}

/* Settles a launch whose supervisor died before answering it. */
static void orphan(local *lx, attempt *a)
{
    a->state = A_SEEKING;
    a->orphaned = true;
    seek(lx, a);
}

/* Our supervisor has died (EOF on its socket or pipe, or a write to it
 * failed): stop listening, watch its attempts through their pid files,
 * and settle the launches it did not answer. */
static void lose_supervisor(local *lx)
{
    attempt *a;
    size_t i;

    if (lx->supervisor == 0)
        return;
    unhook(lx);
    sw_grow(&lx->dead, &lx->deadcap, lx->ndead + 1, sizeof(*lx->dead));
    lx->dead[lx->ndead++] = lx->supervisor;
    lx->supervisor = 0;
    reap_dead(lx);
    for (i = 0; i < lx->n; i++)
        lx->all[i]->ours = false;
    while ((a = pop_pending(lx)) != NULL)
        orphan(lx, a);
}

/* One of our supervisor's trials ended, and its exit file cannot be
 * written (the disk is full): its end is what the supervisor says. */
static void unrecorded(local *lx, const sw_local__reply *r)
{
    char rec[sizeof(r->msg) + 1];
    attempt *a;
    sw_exit e;
    size_t i;

    memcpy(rec, r->msg, sizeof(r->msg));
    rec[sizeof(r->msg)] = '\0';
    for (i = 0; i < lx->n; i++) {
        a = lx->all[i];
        if (a->state != A_RUNNING || !a->ours || a->pgid != (pid_t)r->pgid ||
            a->start != r->start)
            continue;
        if (sw_local__parse_exit(a->dir, rec, &e) < 0)
            emit(lx, SW_JOB_LOST, a, sw_strdup(sw_error_last()));
        else
            emit(lx, SW_JOB_ENDED, a, NULL)->exit = e;
        a->state = A_DONE;
        return;
    }
}

/* Answers the oldest launch awaiting its reply with reply `r`. */
static void answer(local *lx, const sw_local__reply *r)
{
    attempt *a;

    if (r->kind == SW_LOCAL_UNRECORDED) {
        unrecorded(lx, r);
        return;
    }
    if (!(a = pop_pending(lx)))
        return; /* nothing asked for it */
    if (r->code < 0) {
        emit(lx, SW_JOB_START_FAILED, a, sw_strndup(r->msg, sizeof(r->msg)))
            ->code = r->code;
        a->state = A_DONE;
        return;
    }
    a->pid = lx->supervisor;
    a->pgid = (pid_t)r->pgid;
    a->start = r->start;
    a->ours = true;
    started(lx, a);
}

/* Reads what the socket holds, without blocking, and answers the
 * launches whose replies are complete; EOF: the supervisor has died. */
static void pump(local *lx)
{
    sw_local__reply r;
    ssize_t n;

    for (;;) {
        n = read(lx->sock, lx->reply + lx->got, sizeof(lx->reply) - lx->got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        lx->got += (size_t)n;
        if (lx->got == sizeof(lx->reply)) {
            memcpy(&r, lx->reply, sizeof(r));
            lx->got = 0;
            answer(lx, &r);
        }
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
        lose_supervisor(lx);
}

/* Empties the event pipe (its bytes only wake us); EOF: the supervisor
 * has died. */
/* Empties the pipe; true when it said some attempt ended (a byte each),
 * or that the supervisor is gone. */
static bool drain_events(local *lx)
{
    char sink[256];
    bool ended = false;
    ssize_t n;

    do {
        n = read(lx->events, sink, sizeof(sink));
        ended = ended || n > 0;
    } while (n > 0 || (n < 0 && errno == EINTR));
    if (n == 0)
        lose_supervisor(lx);
    return ended || n == 0;
}

/* ---- launch() ---- */

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

/* The request for launch `l` (local_internal.h), its length filled in.
 * `resources` and `devices` are the engine's business here: the
 * environment it passes already says which devices the trial may use. */
static int make_request(sw_buf *b, const sw_launch *l)
{
    size_t argc = 0, i;
    uint32_t len;
    char num[24];
    int error;

    if (!l->argv || !l->argv[0] || !l->argv[0][0])
        return sw_error_set(SW_EINVALID, "local executor: empty command");
    if (!l->stdout_path || !l->stderr_path)
        return sw_error_set(SW_EINVALID, "local executor: no log path");
    for (; l->argv[argc]; argc++)
        ;
    sw_buf_put(b, "\0\0\0\0", 4);
    put_field(b, l->dir);
    put_field(b, l->stdout_path);
    put_field(b, l->stderr_path);
    put_field(b, l->cwd);
    snprintf(num, sizeof(num), "%" PRId64, l->log_limit > 0 ? l->log_limit : 0);
    put_field(b, num);
    snprintf(num, sizeof(num), "%zu", argc);
    put_field(b, num);
    for (i = 0; i < argc; i++)
        put_field(b, l->argv[i]);
    if ((error = put_env(b, l->env)) < 0)
        return error;
    if (b->len - 4 > SW_LOCAL_MAX_REQUEST)
        return sw_error_set(SW_EINVALID, "local executor: command and "
                                         "environment too long");
    len = (uint32_t)(b->len - 4);
    memcpy(b->ptr, &len, 4);
    return SW_OK;
}

/* Writes a whole request, reading replies while the socket is full: the
 * supervisor answers each request before it reads the next, so neither
 * side may wait on the other. -1 when the supervisor has died. */
static int send_request(local *lx, const char *p, size_t n)
{
    struct pollfd pfd;
    ssize_t w;

    while (n > 0) {
        w = send(lx->sock, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        pfd.fd = lx->sock;
        pfd.events = POLLIN | POLLOUT;
        if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
            return -1;
        if (pfd.revents & (POLLIN | POLLHUP | POLLERR))
            pump(lx);
        if (lx->sock < 0)
            return -1;
    }
    return 0;
}

/* Sends the request of `a` to a living supervisor, starting one when
 * none runs or the one found has died; START_FAILED when that fails. */
static void deliver(local *lx, const sw_buf *b, attempt *a)
{
    int tries;

    sw_error_clear();
    for (tries = 0; tries < 2; tries++) {
        if (lx->sock < 0 && start_supervisor(lx) < 0)
            break;
        if (send_request(lx, b->ptr, b->len) == 0) {
            push_pending(lx, a);
            return;
        }
        lose_supervisor(lx); /* the next try starts another */
        sw_error_set(SW_ERROR, "local executor: the supervisor does not "
                               "answer");
    }
    emit(lx, SW_JOB_START_FAILED, a, sw_strdup(sw_error_last()))->code =
        SW_ERROR;
    a->state = A_DONE;
}

/* Checks what launch() and adopt() are given: a key not in use, and a
 * folder whose files' paths fit in PATH_MAX. */
static int check_new(local *lx, const char *key, const char *dir)
{
    if (!key || !key[0])
        return sw_error_set(SW_EINVALID, "local executor: no attempt key");
    if (!dir || !dir[0])
        return sw_error_set(SW_EINVALID, "local executor: no attempt folder");
    if (strlen(dir) + sizeof("/exit.tmp") > PATH_MAX)
        return sw_error_set(SW_EINVALID, "attempt folder '%s': path too long",
                            dir);
    if (find(lx, key))
        return sw_error_set(
            SW_EINVALID, "local executor: attempt '%s' is already in use", key);
    return SW_OK;
}

static int local_launch(sw_executor *ex, const sw_launch *l)
{
    local *lx = (local *)ex;
    sw_buf b = SW_BUF_INIT;
    int error;

    if ((error = check_new(lx, l->key, l->dir)) < 0 ||
        (error = make_request(&b, l)) < 0)
        goto done;
    deliver(lx, &b, add(lx, l->key, l->dir, A_PENDING));
done:
    sw_buf_dispose(&b);
    sweep(lx);
    return error;
}

/* ---- the rest of the interface ---- */

/* With a handle, the engine already knows the attempt started: nothing
 * is queued until its end (SW_JOB_ENDED or SW_JOB_LOST). Without one,
 * SW_JOB_STARTED (the handle read from its pid file) or, when the folder
 * is gone or no pid file appears within SEEK_GRACE of process() time,
 * SW_JOB_NOT_STARTED comes first. SW_EINVALID for a malformed handle. */
static int local_adopt(sw_executor *ex, const char *key, const char *dir,
                       const char *handle)
{
    local *lx = (local *)ex;
    pid_t pid = 0, pgid = 0;
    uint64_t start = 0;
    attempt *a;
    int error;

    if ((error = check_new(lx, key, dir)) < 0)
        return error;
    if (handle && !sw_local__parse_handle(handle, &pid, &pgid, &start))
        return sw_error_set(SW_EINVALID,
                            "local executor: '%s' is not a local job handle "
                            "(\"SUPERVISOR_PID TRIAL_PGID STARTTIME\")",
                            handle);
    a = add(lx, key, dir, handle ? A_RUNNING : A_SEEKING);
    a->pid = pid;
    a->pgid = pgid;
    a->start = start;
    if (!handle)
        seek(lx, a);
    sweep(lx);
    return SW_OK;
}

/* Before the start is known, the cancel waits for it (a forced one wins
 * over a gentle one). */
static int local_cancel(sw_executor *ex, const char *key, bool force)
{
    local *lx = (local *)ex;
    attempt *a = key ? find(lx, key) : NULL;
    int sig = force ? SIGKILL : SIGTERM;

    if (!a)
        return sw_error_set(SW_ENOTFOUND, "local executor: no attempt '%s'",
                            key ? key : "");
    if (a->state == A_RUNNING)
        return signal_group(a, sig);
    if (a->cancel != SIGKILL)
        a->cancel = sig;
    return SW_OK;
}

/* Readable while the supervisor's socket or pipe is (a reply, an ended
 * attempt, or its death); never changes. */
static int local_fd(sw_executor *ex)
{
    return ((local *)ex)->epfd;
}

static double earliest(double w, double t)
{
    return w == 0 || t < w ? t : w;
}

/* Due now when events wait; else the next poll of an attempt that our
 * living supervisor does not watch, or of a pid file being sought. */
static double local_next_wake(sw_executor *ex)
{
    local *lx = (local *)ex;
    double w = 0, t;
    size_t i;

    if (lx->qhead < lx->qn)
        return lx->now > 0 ? lx->now : 1e-9; /* 0 would mean "never" */
    for (i = 0; i < lx->n; i++) {
        attempt *a = lx->all[i];

        if (a->state == A_SEEKING) {
            t = lx->now + SEEK_POLL;
            w = earliest(w, a->timed && a->deadline < t ? a->deadline : t);
        } else if (a->state == A_ENDING) {
            w = earliest(w, lx->now + SEEK_POLL);
        } else if (a->state == A_RUNNING && !a->ours) {
            w = earliest(w, lx->now + WATCH_POLL);
        }
    }
    return w;
}

/* Looks for the ends of running attempts: those our supervisor watches
 * only when its pipe said one ended (the engine calls process() on every
 * wake, and a look costs two files an attempt), the others every
 * WATCH_POLL. */
static int local_process(sw_executor *ex, double now)
{
    local *lx = (local *)ex;
    bool ended = false;
    size_t i;

    lx->now = now;
    reap_dead(lx);
    if (lx->sock >= 0)
        pump(lx);
    if (lx->events >= 0)
        ended = drain_events(lx);
    for (i = 0; i < lx->n; i++) {
        attempt *a = lx->all[i];

        if (a->state == A_SEEKING && !a->timed) {
            a->timed = true;
            a->deadline = now + SEEK_GRACE;
        }
        if (a->state == A_SEEKING) {
            seek(lx, a);
        } else if (a->state == A_RUNNING &&
                   (a->ours ? ended : now >= a->next_look)) {
            a->next_look = now + WATCH_POLL;
            check_end(lx, a);
        } else if (a->state == A_ENDING &&
                   (!sw_local__group_alive(a->pgid) || now >= a->deadline)) {
            lost(lx, a);
        }
    }
    sweep(lx);
    return SW_OK;
}

static int local_next_event(sw_executor *ex, sw_job_event *out)
{
    local *lx = (local *)ex;

    if (lx->qhead == lx->qn)
        return 0;
    *out = lx->queue[lx->qhead++];
    return 1;
}

/* Lets the supervisor go: at EOF on its socket it keeps watching its
 * trials and exits after the last one. */
static void local_free(sw_executor *ex)
{
    local *lx = (local *)ex;
    size_t i;

    unhook(lx);
    if (lx->supervisor > 0)
        waitpid(lx->supervisor, NULL, WNOHANG);
    reap_dead(lx);
    for (i = 0; i < lx->n; i++)
        free_attempt(lx->all[i]);
    for (i = lx->qhead; i < lx->qn; i++)
        sw_job_event_dispose(&lx->queue[i]);
    if (lx->epfd >= 0)
        close(lx->epfd);
    free(lx->all);
    free(lx->fifo);
    free(lx->queue);
    free(lx->dead);
    free(lx);
}

static const sw_executor_methods local_methods = {
    SW_EXECUTOR_VERSION,
    "local",
    local_launch,
    local_adopt,
    local_cancel,
    local_fd,
    local_next_wake,
    local_process,
    local_next_event,
    local_free,
    NULL,
    NULL,
    false,
};

/* Makes a local executor and its supervisor process. Make executors before
 * starting threads: the supervisor is forked. */
int sw_executor_local_new(sw_executor **out)
{
    local *lx = sw_calloc(1, sizeof(*lx));
    int error;

    lx->base.methods = &local_methods;
    lx->sock = lx->events = -1;
    lx->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (lx->epfd < 0)
        error = sw_error_set(SW_ERROR, "local executor: epoll: %s",
                             strerror(errno));
    else
        error = start_supervisor(lx);
    if (error < 0) {
        local_free(&lx->base);
        return error;
    }
    *out = &lx->base;
    return SW_OK;
}
