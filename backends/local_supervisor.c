/*
 * local_supervisor.c - the process that starts and watches the trials of
 * a local executor, and outlives the orchestrator.
 *
 * One supervisor per executor, forked when the executor is made, in a
 * session of its own (Ctrl-C and a closing terminal don't reach it). It
 * starts each trial under a shim of its own (local_shim.c), which leads
 * the trial's process group, and keeps two files in the attempt's folder:
 *   pid   "SUPERVISOR_PID TRIAL_PGID STARTTIME\nBOOT_ID\n" (the job
 *         handle, with a newline, then the boot id), renamed into place
 *         before the trial's program runs, and flock()ed (by the
 *         supervisor and the shim both) for as long as the attempt runs,
 *         so any process can tell whether it is still watched. The group
 *         is the shim's, and STARTTIME its start time (field 22 of
 *         /proc/PID/stat): with the boot id, it tells the group's leader
 *         from a later process that got its id, so nobody signals a group
 *         that is not the trial's;
 *   exit  "exit N\n" or "signal N\n", renamed into place when the trial
 *         ends, after the rest of its group is killed. When the program
 *         cannot be executed nothing ran: "exit 127\n" is written, then
 *         the pid file is replaced by one with group 0.
 * The shim ends as its trial ended, so the supervisor records the
 * trial's end from the shim's; a shim whose supervisor has died records
 * it itself. Killing the supervisor (or it and `sweep`) loses no trial.
 * A shim killed on its own (it said neither that it recorded the end
 * nor that it could not) says nothing of its trial: the trial's own end
 * is recorded where it is known (it died with its shim, a SIGKILL of the
 * group), and otherwise nothing is, so that the attempt is lost (rerun
 * without using a retry), never failed with the shim's signal 9.
 *
 * An attempt starts at most once. The shim, a small static program the
 * supervisor keeps in a memfd (local_internal.h), is started with
 * posix_spawn, and waits on a pipe (the gate) before it starts the
 * trial; the supervisor opens the gate only once the pid file is in
 * place. Should the supervisor die before that, the shim reads end of
 * file and exits without running anything: so whoever finds no pid file
 * after the supervisor's death knows the trial's code never ran, and
 * whoever finds one finds the attempt (watched by its shim, or to kill
 * before a rerun). The gate was chosen over a marker found later in
 * /proc (a trial that ran for a moment has done work; a search can race
 * with the exec): it makes the pid file durable before a single
 * instruction of the trial's runs. A program of its own was chosen over
 * a fork of the supervisor running the shim's code: that copied the
 * supervisor's page tables (the orchestrator's, some 300 mappings) for
 * every trial, and cost more CPU than the trial itself. The shims come
 * from a factory (local_factory.c): one copy of the shim program, started
 * as the supervisor starts, that clones each new shim as the
 * supervisor's child, which spares each trial an exec and glibc's start;
 * without it (it failed, or died), the supervisor spawns each shim
 * itself. A factory that fails mid-request may have cloned a shim: its
 * gate is closed unopened, and the shim leaves without running anything.
 * The exec's outcome comes back on a second close-on-exec pipe. The
 * attempt folder itself is flock()ed from the check that it holds no
 * attempt until the pid file is in place, and a request is refused once
 * the orchestrator that sent it has gone: so a resumed orchestrator that
 * finds the folder unlocked and without a pid file knows no supervisor
 * will start it.
 *
 * Requests are served one at a time, each answered by one reply, in
 * order; the orchestrator reads the replies when it can.
 * When a trial ends, what is left of its process group is killed while
 * the unreaped leader still pins the group id, so an ended attempt leaves
 * nothing running and its group id is never signalled after the exit file
 * exists. When the exit file cannot be written (a full disk), the end is
 * not dropped: the supervisor keeps it, and the lock on the pid file (the
 * attempt stays watched), tells the orchestrator over the socket, and
 * writes the file again every second until it can; a new launch in the
 * same folder (the orchestrator has the end, then) lets it go. When the
 * orchestrator goes (its socket closes), the supervisor keeps watching the
 * trials it started and exits after the last one is recorded.
 *
 * A trial's descendants may leave its group (setsid, setpgid). Its shim
 * is a child subreaper, and ends them all with the trial; should the
 * shim itself be killed, the supervisor, a child subreaper too, gets
 * them: whatever of a trial loses its parent (and shim) becomes the
 * supervisor's child, an orphan. It tells whose orphan it
 * is by a tag every trial gets in its environment,
 * SWEEP_LOCAL_TRIAL=SUPERVISOR_PID.N (N unique to the trial), which
 * descendants inherit and /proc/PID/environ shows. A tag was chosen over
 * following parent links in /proc while a trial runs: a parent that
 * exits in between (a double fork, a short-lived setsid) breaks the
 * chain for good, while the tag survives it and says which trial at
 * once. When a trial ends, before its exit file, its orphans are
 * SIGKILLed with their own groups; a killed orphan's children come next,
 * as they are orphaned in turn. An orphan without a tag of ours (it
 * cleared its environment, or it cannot be read) is tied to no trial: it
 * is killed only when no trial runs, since then every orphan descends
 * from an ended one. Orphans of running trials (their workers) are left
 * alone; orphans are reaped as they die, never taken for trials.
 *
 * Test builds other than Release (SW_FAULT_INJECTION) read two
 * variables, for the fault tests: SWEEP_FAULT_LAUNCH_STOP=FILE stops the
 * supervisor (SIGSTOP) between a trial's fork and its pid file, once,
 * when it can remove FILE; SWEEP_FAULT_NOSPACE=FILE makes every status
 * file write fail with ENOSPC while FILE exists.
 */
#define _GNU_SOURCE /* pipe2, POLLRDHUP */
#include "backends/local_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sweeps/error.h"

extern char **environ;

typedef struct {
    pid_t pid;  /* the trial, leader of its process group; 0 once
                   reaped */
    pid_t pgid; /* its group, and the start time of its leader */
    uint64_t start;
    int dirfd;         /* its attempt folder */
    int lockfd;        /* its pid file, flock()ed */
    int donefd;        /* its shim's words (SW_LOCAL_SHIM_...) */
    pid_t child;       /* the trial's own process, once its shim said */
    unsigned long tag; /* N of its SWEEP_LOCAL_TRIAL; 0 once it has ended */
    bool disk;         /* its shim said the disk failed it */
    char exit[32];     /* once reaped: the exit record its file lacks */
} trial;

typedef struct {
    int sock, events, sigfd, devnull;
    int shim;          /* the shim program (a memfd, read-only) */
    int factory;       /* the socket to the shim factory; -1: none */
    pid_t factory_pid; /* 0: none */
    bool strays;       /* orphans may be among its children (cull()) */
    char boot[64];     /* the boot id, for the pid files */
    trial *trials;
    size_t n, cap;
    unsigned long last_tag; /* the tag of the latest launch */
} supervisor;

#define TAG_NAME "SWEEP_LOCAL_TRIAL"
#define RETRY_MS 1000 /* between writes of exit files that failed */

#ifdef SW_FAULT_INJECTION
/* SWEEP_FAULT_LAUNCH_STOP: stop once, between fork and pid file. */
static void fault_launch_stop(void)
{
    const char *flag = getenv("SWEEP_FAULT_LAUNCH_STOP");

    if (flag && unlink(flag) == 0)
        raise(SIGSTOP);
}
#else
static void fault_launch_stop(void)
{
}
#endif

/* A parsed launch request; strings point into the request buffer. */
typedef struct {
    const char *dir, *out, *err, *cwd;
    int64_t log_limit;
    char **argv;
    char **envp;
} request;

/* Writes all of buf to a socket, never raising SIGPIPE; -1 with errno
 * on failure. */
static int send_all(int fd, const void *buf, size_t n)
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

static int reply(supervisor *s, int code, int64_t pgid, uint64_t start,
                 const char *msg)
{
    sw_local__reply r;

    memset(&r, 0, sizeof(r));
    r.code = code;
    r.kind = SW_LOCAL_REPLY;
    r.pgid = pgid;
    r.start = start;
    if (msg)
        snprintf(r.msg, sizeof(r.msg), "%s", msg);
    return send_all(s->sock, &r, sizeof(r));
}

static int fail(supervisor *s, int code, const char *fmt, ...) SW_PRINTF(3, 4);

static int fail(supervisor *s, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return reply(s, code, 0, 0, msg);
}

/* Splits a request into its fields; false when it is malformed. */
static bool parse(char *buf, size_t len, request *r)
{
    char *p = buf, *end = buf + len, *fields[6], *q;
    size_t i, argc, nenv = 0;

    if (len == 0 || buf[len - 1] != '\0')
        return false;
    for (i = 0; i < 6; i++) {
        if (p >= end)
            return false;
        fields[i] = p;
        p += strlen(p) + 1;
    }
    r->dir = fields[0];
    r->out = fields[1];
    r->err = fields[2];
    r->cwd = fields[3][0] ? fields[3] : NULL;
    r->log_limit = strtoll(fields[4], NULL, 10);
    argc = strtoul(fields[5], NULL, 10);
    if (argc == 0 || argc > len)
        return false;
    r->argv = sw_calloc(argc + 1, sizeof(char *));
    for (i = 0; i < argc; i++) {
        if (p >= end) {
            free(r->argv);
            return false;
        }
        r->argv[i] = p;
        p += strlen(p) + 1;
    }
    for (q = p; q < end; q += strlen(q) + 1)
        nenv++;
    r->envp = sw_calloc(nenv + 2, sizeof(char *)); /* and the tag */
    for (i = 0; p < end; p += strlen(p) + 1)
        r->envp[i++] = p;
    return true;
}

/* Puts a new tag in the environment of request r (parse left room for
 * it), in place of any it inherited; buf holds the entry. */
static void tag_env(supervisor *s, request *r, char *buf, size_t size)
{
    size_t i, j;

    for (i = j = 0; r->envp[i]; i++)
        if (strncmp(r->envp[i], TAG_NAME "=", sizeof(TAG_NAME)) != 0)
            r->envp[j++] = r->envp[i];
    snprintf(buf, size, TAG_NAME "=%d.%lu", (int)getpid(), ++s->last_tag);
    r->envp[j++] = buf;
    r->envp[j] = NULL;
}

/* The shim's command line (SW_LOCAL_SHIM_ARGS) for request r and the
 * descriptors `d` (gate, report, dirfd, lockfd, done), into av (r's argc
 * + SW_LOCAL_SHIM_ARGS + 1 entries); the numbers are written into num. */
static void shim_args(const request *r, const int d[5], pid_t self,
                      char num[7][24], char **av)
{
    const char *flag = getenv("SWEEP_FAULT_NOSPACE");
    size_t i;

    for (i = 0; i < 5; i++)
        snprintf(num[i], sizeof(num[i]), "%d", d[i]);
    snprintf(num[5], sizeof(num[5]), "%" PRId64, r->log_limit);
    snprintf(num[6], sizeof(num[6]), "%d", (int)self);
    av[0] = "sweep-shim";
    for (i = 0; i < 7; i++)
        av[1 + i] = num[i];
    av[8] = (char *)(r->cwd ? r->cwd : "");
#ifdef SW_FAULT_INJECTION
    av[9] = (char *)(flag ? flag : "");
#else
    (void)flag;
    av[9] = "";
#endif
    for (i = 0; r->argv[i]; i++)
        av[SW_LOCAL_SHIM_ARGS + i] = r->argv[i];
    av[SW_LOCAL_SHIM_ARGS + i] = NULL;
}

/* posix_spawn of the shim av (from the memfd s->shim), leading a group
 * of its own, /dev/null and the logs its 0, 1 and 2, the descriptors d
 * kept open at their numbers (adddup2 onto itself clears close-on-exec). */
static int spawn_shim(const supervisor *s, const request *r, const int fds[4],
                      const int d[5], char **av, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    char path[64];
    sigset_t none;
    int e, i;

    snprintf(path, sizeof(path), "/proc/self/fd/%d", s->shim);
    sigemptyset(&none);
    if ((e = posix_spawnattr_init(&at)) != 0)
        return e;
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at,
                             POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    if ((e = posix_spawn_file_actions_init(&fa)) == 0) {
        posix_spawn_file_actions_adddup2(&fa, s->devnull, 0);
        posix_spawn_file_actions_adddup2(&fa, fds[0], 1);
        posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
        for (i = 0; i < 5; i++)
            posix_spawn_file_actions_adddup2(&fa, d[i], d[i]);
        e = posix_spawn(pid, path, &fa, &at, av, r->envp);
        posix_spawn_file_actions_destroy(&fa);
    }
    posix_spawnattr_destroy(&at);
    return e;
}

/* Lets the factory go: it ends, and is reaped as any orphan. */
static void drop_factory(supervisor *s)
{
    if (s->factory >= 0)
        close(s->factory);
    s->factory = -1;
    s->factory_pid = 0;
}

/* Starts the shim of r with the descriptors d: from the factory, or, when
 * there is none, with posix_spawn. 0 and *pid, an errno (nothing
 * started), or -1: the factory failed, a shim may have started with d. */
static int start_shim(supervisor *s, const request *r, const int fds[4],
                      const int d[5], pid_t *pid)
{
    int sent[SW_LOCAL_FACTORY_FDS] = {s->devnull, fds[0], fds[1], d[0],
                                      d[1],       d[2],   d[3],   d[4]};
    char num[7][24], **av;
    size_t argc = 0;
    int e;

    while (r->argv[argc])
        argc++;
    av = sw_calloc(argc + SW_LOCAL_SHIM_ARGS + 1, sizeof(char *));
    shim_args(r, d, getpid(), num, av);
    if (s->factory >= 0) {
        e = sw_local__factory_ask(s->factory, av, r->envp, sent, pid);
        if (e == 0)
            setpgid(*pid, *pid); /* as the shim does: whichever first */
        else if (e < 0)
            drop_factory(s);
    } else {
        e = spawn_shim(s, r, fds, d, av, pid);
    }
    free(av);
    return e;
}

/* Starts the shim of `r` (local_shim.c), held at its gate, leading the
 * trial's group and sharing the lock on its pid file: *pid, the write
 * end of the gate, the read end of the exec's report and of the shim's
 * words. -1 with errno. */
static int fork_trial(supervisor *s, const request *r, const int fds[4],
                      pid_t *pid, int *gate, int *report, int *done)
{
    int g[2], rp[2], dn[2], e, tries;

    for (tries = 0; tries < 2; tries++) {
        g[0] = g[1] = rp[0] = rp[1] = dn[0] = dn[1] = -1;
        if (pipe2(dn, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(g, O_CLOEXEC) < 0 ||
            pipe2(rp, O_CLOEXEC) < 0)
            e = errno;
        else
            e = start_shim(s, r, fds,
                           (const int[5]){g[0], rp[1], fds[2], fds[3], dn[1]},
                           pid);
        if (g[0] >= 0) /* the shim's ends */
            close(g[0]);
        if (rp[1] >= 0)
            close(rp[1]);
        if (dn[1] >= 0)
            close(dn[1]);
        if (e == 0) {
            *gate = g[1];
            *report = rp[0];
            *done = dn[0];
            return 0;
        }
        /* closing the gate ends a shim the factory may have started */
        if (g[1] >= 0)
            close(g[1]);
        if (rp[0] >= 0)
            close(rp[0]);
        if (dn[0] >= 0)
            close(dn[0]);
        if (e > 0)
            break;
    }
    errno = e > 0 ? e : EIO;
    return -1;
}

/* Opens the gate of trial pid; its exec's outcome: 0, or the errno it
 * failed with (the trial has then exited 127, and is reaped here). */
static int open_gate(pid_t pid, int gate, int report)
{
    ssize_t n;
    int e = 0;

    if (write(gate, "g", 1) != 1)
        e = errno ? errno : EIO;
    close(gate);
    do
        n = read(report, &e, sizeof(e));
    while (n < 0 && errno == EINTR);
    close(report);
    if (n == (ssize_t)sizeof(e) || e != 0) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        return e ? e : ENOEXEC;
    }
    return 0;
}

static int open_log(supervisor *s, const char *path, const char *what)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

    if (fd < 0)
        fail(s, SW_EIO, "cannot open %s log '%s': %s", what, path,
             strerror(errno));
    return fd;
}

/* Whether the orchestrator has closed its end of the socket. */
static bool orchestrator_gone(const supervisor *s)
{
    struct pollfd p = {s->sock, POLLRDHUP, 0};

    return poll(&p, 1, 0) > 0 &&
           (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

static void forget(supervisor *s, size_t i);

/* Lets go of the ended trials whose exit file is still unwritten in the
 * folder dirfd: a launch there means the orchestrator has their end. */
static void release_folder(supervisor *s, int dirfd)
{
    struct stat a, b;
    size_t i = 0;

    if (fstat(dirfd, &a) < 0)
        return;
    while (i < s->n) {
        if (s->trials[i].pid == 0 && fstat(s->trials[i].dirfd, &b) == 0 &&
            a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            forget(s, i);
        else
            i++;
    }
}

/* Opens and locks the attempt folder (see the top of the file): it must
 * exist, hold no attempt yet, and the orchestrator must still be there
 * to be answered. */
static int open_dir(supervisor *s, const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0) {
        fail(s, SW_EIO, "cannot open attempt folder '%s': %s", dir,
             strerror(errno));
        return -1;
    }
    release_folder(s, fd);
    if (flock(fd, LOCK_EX | LOCK_NB) < 0)
        fail(s, SW_EINVALID, "attempt folder '%s' is in use", dir);
    else if (orchestrator_gone(s))
        fail(s, SW_ERROR,
             "attempt in '%s' not started: its orchestrator "
             "has gone",
             dir);
    else if (faccessat(fd, "pid", F_OK, 0) == 0 ||
             faccessat(fd, "exit", F_OK, 0) == 0)
        fail(s, SW_EINVALID, "attempt folder '%s' already holds an attempt",
             dir);
    else
        return fd;
    close(fd);
    return -1;
}

static bool cwd_ok(supervisor *s, const request *r)
{
    struct stat st;

    if (!r->cwd || (stat(r->cwd, &st) == 0 && S_ISDIR(st.st_mode) &&
                    access(r->cwd, X_OK) == 0))
        return true;
    fail(s, SW_EIO, "cannot run '%s' in '%s': %s", r->argv[0], r->cwd,
         errno ? strerror(errno) : "Not a directory");
    return false;
}

static void track(supervisor *s, pid_t pid, uint64_t start, int dirfd,
                  int lockfd, int donefd)
{
    trial *t;

    sw_grow(&s->trials, &s->cap, s->n + 1, sizeof(trial));
    t = &s->trials[s->n++];
    memset(t, 0, sizeof(*t));
    t->pid = t->pgid = pid;
    t->start = start;
    t->dirfd = dirfd;
    t->lockfd = lockfd;
    t->donefd = donefd;
    t->tag = s->last_tag;
}

/* Opens pid.tmp in the attempt folder, locked, so that the shim forked
 * next shares the lock: its descriptor, or -1 with errno. */
static int lock_pid_file(int dirfd)
{
    int fd, e;

    if (sw_local__fault_nospace()) {
        errno = ENOSPC;
        return -1;
    }
    fd = openat(dirfd, "pid.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                0600);
    if (fd >= 0 && flock(fd, LOCK_EX) < 0) {
        e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Writes the pid file of the shim pid (held at its gate) into the locked
 * pid.tmp `fd` and renames it into place; -1 with errno. */
static int fill_pid_file(int dirfd, int fd, pid_t pid, const char *boot,
                         uint64_t *start)
{
    char line[160];
    pid_t pgrp;

    /* unreaped, the shim is in /proc: its start time is there to read */
    if (!sw_local__start_time(pid, start, &pgrp) || *start == 0) {
        errno = ESRCH;
        return -1;
    }
    snprintf(line, sizeof(line), "%d %d %" PRIu64 "\n%s\n", (int)getpid(),
             (int)pid, *start, boot);
    if (sw_local__fault_nospace()) {
        errno = ENOSPC;
        return -1;
    }
    return sw_write_all(fd, line, strlen(line)) < 0 ||
                   renameat(dirfd, "pid.tmp", dirfd, "pid") < 0
               ? -1
               : 0;
}

/* The program of a trial could not be executed (errno `e`): nothing ran.
 * Its end is recorded first, then a pid file with group 0 in place of the
 * first, so a `sweep resume` that finds the attempt reads it as exit 127;
 * the launch itself is answered as failed, with why. */
static void not_run(supervisor *s, const request *r, int dirfd, int lockfd,
                    int e)
{
    char line[64];

    snprintf(line, sizeof(line), "%d 0 0\n", (int)getpid());
    if (sw_local__put_file(dirfd, "exit", "exit 127\n", false) < 0 ||
        sw_local__put_file(dirfd, "pid", line, false) < 0)
        fail(s, sw_error_io_code(errno), "cannot write in '%s': %s", r->dir,
             strerror(errno));
    else /* never ran: a launch that failed, not a trial that exited */
        fail(s, SW_ERROR, "cannot run '%s': %s", r->argv[0], strerror(e));
    close(lockfd);
}

/* The trial could not start after its fork (no pid file): the shim
 * leaves without running anything, and the launch fails with `e`. */
static void abandon(supervisor *s, const request *r, int dirfd, pid_t pid,
                    int gate, int report, int e)
{
    close(gate);
    close(report);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    unlinkat(dirfd, "pid.tmp", 0);
    fail(s, sw_error_io_code(e), "cannot write '%s/pid': %s", r->dir,
         strerror(e));
}

/* Starts the trial of a request, records it, and answers: its shim is
 * forked held at its gate, the pid file written, then the gate opened. */
static void launch(supervisor *s, request *r)
{
    int dirfd, fds[4] = {-1, -1, -1, -1}, gate, report, done = -1, e;
    char tag[64];
    uint64_t start = 0;
    pid_t pid = 0;

    if ((fds[2] = dirfd = open_dir(s, r->dir)) < 0)
        return;
    if ((fds[0] = open_log(s, r->out, "stdout")) < 0 ||
        (fds[1] = open_log(s, r->err, "stderr")) < 0 || !cwd_ok(s, r))
        goto done;
    if ((fds[3] = lock_pid_file(dirfd)) < 0) {
        fail(s, sw_error_io_code(errno), "cannot write '%s/pid': %s", r->dir,
             strerror(errno));
        goto done;
    }
    tag_env(s, r, tag, sizeof(tag));
    if (fork_trial(s, r, fds, &pid, &gate, &report, &done) < 0) {
        fail(s, SW_ERROR, "cannot start a trial: %s", strerror(errno));
        goto done;
    }
    fault_launch_stop();
    if (fill_pid_file(dirfd, fds[3], pid, s->boot, &start) < 0) {
        abandon(s, r, dirfd, pid, gate, report, errno);
        goto done;
    }
    flock(dirfd, LOCK_UN); /* the pid file says the rest */
    if ((e = open_gate(pid, gate, report)) != 0) {
        not_run(s, r, dirfd, fds[3], e);
        fds[3] = -1;
        goto done;
    }
    track(s, pid, start, dirfd, fds[3], done);
    fds[2] = fds[3] = done = -1;
    reply(s, SW_OK, pid, start, NULL);
done:
    for (int i = 0; i < 4; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (done >= 0)
        close(done);
}

/* Reads and serves one request; false when the orchestrator has gone. */
static bool serve(supervisor *s)
{
    uint32_t len;
    char *buf;
    request r;

    if (sw_read_all(s->sock, &len, sizeof(len)) < 0)
        return false;
    if (len == 0 || len > SW_LOCAL_MAX_REQUEST)
        return false;
    buf = sw_malloc(len);
    if (sw_read_all(s->sock, buf, len) < 0) {
        free(buf);
        return false;
    }
    if (parse(buf, len, &r)) {
        launch(s, &r);
        free(r.argv);
        free(r.envp);
    } else {
        fail(s, SW_EINVALID, "local executor: malformed launch request");
    }
    free(buf);
    return true;
}

/* The N of pid's SWEEP_LOCAL_TRIAL when that tag is this supervisor's;
 * 0 when it has none of ours or its environment cannot be read. */
static unsigned long tag_of(pid_t pid)
{
    char path[64], want[48], *buf = NULL, *p, *end;
    size_t len = 0, cap = 0, n;
    unsigned long tag = 0;
    ssize_t r;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    for (;;) {
        sw_grow(&buf, &cap, len + 4097, 1);
        r = read(fd, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    n = (size_t)snprintf(want, sizeof(want), TAG_NAME "=%d.", (int)getpid());
    for (p = buf; p < buf + len; p += strlen(p) + 1)
        if (strncmp(p, TAG_NAME "=", sizeof(TAG_NAME)) == 0) {
            if (strncmp(p, want, n) == 0) /* the first, as getenv reads */
                tag = strtoul(p + n, &end, 10);
            if (tag && *end)
                tag = 0;
            break;
        }
    free(buf);
    return tag;
}

/* Whether child pid, not a trial, may be killed: it is tied to a trial
 * that has ended, or has no tie and no trial is running. */
static bool doomed(const supervisor *s, pid_t pid)
{
    unsigned long tag;
    size_t i, running = 0;

    if (pid == s->factory_pid)
        return false; /* it makes the shims */
    for (i = 0; i < s->n; i++)
        if (s->trials[i].pid == pid)
            return false; /* a shim: nothing of it is read */
    tag = tag_of(pid);
    for (i = 0; i < s->n; i++)
        if (s->trials[i].tag != 0) {
            running++;
            if (s->trials[i].tag == tag)
                return false;
        }
    return tag != 0 || running == 0;
}

/* Kills the orphans of ended trials (see the top of the file): each one
 * and the group it leads, if any (a session's or a group's members can
 * only descend from it). Its other descendants are orphaned in turn. The
 * supervisor's children are read from /proc/self/task/TID/children: its
 * shims and orphans, never a scan of all of /proc. */
static void cull(supervisor *s)
{
    pid_t kids[1024];
    size_t n = sw_local__children(getpid(), kids, 1024), i, j;

    s->strays = false;
    for (i = 0; i < n; i++) {
        for (j = 0; j < s->n && s->trials[j].pid != kids[i]; j++)
            ;
        if (j == s->n && kids[i] != s->factory_pid)
            s->strays = true; /* an orphan, doomed or not */
        if (!doomed(s, kids[i]))
            continue;
        kill(-kids[i], SIGKILL); /* ESRCH unless it leads a group */
        kill(kids[i], SIGKILL);
    }
}

/* Drops trial i: its files are closed (the pid file's lock with them)
 * and the orchestrator is woken. */
static void forget(supervisor *s, size_t i)
{
    trial *t = &s->trials[i];

    close(t->lockfd);
    close(t->dirfd);
    close(t->donefd);
    s->trials[i] = s->trials[--s->n];
    if (write(s->events, "x", 1) < 0) {
        /* full (a wakeup is pending) or the orchestrator has gone */
    }
}

/* Tells the orchestrator how trial t ended, as its exit file cannot say
 * it yet (see the top of the file). */
static void tell_unrecorded(supervisor *s, const trial *t, int code)
{
    sw_local__reply r;

    memset(&r, 0, sizeof(r));
    r.code = code;
    r.kind = SW_LOCAL_UNRECORDED;
    r.pgid = t->pgid;
    r.start = t->start;
    snprintf(r.msg, sizeof(r.msg), "%s", t->exit);
    if (send_all(s->sock, &r, sizeof(r)) < 0) {
        /* the orchestrator has gone: a later one reads the file */
    }
}

/* Writes the exit files that could not be written before; keeps those
 * it still cannot write while the disk is at fault. */
static void retry_exits(supervisor *s)
{
    size_t i = 0;

    while (i < s->n) {
        trial *t = &s->trials[i];

        if (t->pid != 0 ||
            (sw_local__put_file(t->dirfd, "exit", t->exit, false) < 0 &&
             sw_error_io_code(errno) == SW_ESTORAGE))
            i++;
        else /* written, or its folder is gone: nobody can read it */
            forget(s, i);
    }
}

/* Whether exit files wait to be written again. */
static bool exits_pending(const supervisor *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        if (s->trials[i].pid == 0)
            return true;
    return false;
}

/* The last word its shim said (0: none); t->child gets the trial's pid
 * when it was said. The shim has ended: this reads to the end. */
static char shim_word(trial *t)
{
    char buf[64], word = 0;
    ssize_t n, i;

    while ((n = read(t->donefd, buf, sizeof(buf))) > 0 ||
           (n < 0 && errno == EINTR))
        for (i = 0; i < n; i++) {
            if (buf[i] == SW_LOCAL_SHIM_TRIAL &&
                n - i > (ssize_t)sizeof(pid_t)) {
                memcpy(&t->child, buf + i + 1, sizeof(pid_t));
                i += (ssize_t)sizeof(pid_t);
            } else if (buf[i] == SW_LOCAL_SHIM_DISK) {
                t->disk = true;
            } else if (buf[i] == SW_LOCAL_SHIM_RECORDED ||
                       buf[i] == SW_LOCAL_SHIM_MIRRORS) {
                word = buf[i];
            }
        }
    return word;
}

static void exit_line(char *out, size_t n, const siginfo_t *si, bool disk)
{
    snprintf(out, n, "%s %d\n%s", si->si_code == CLD_EXITED ? "exit" : "signal",
             si->si_status, disk ? "disk\n" : "");
}

/* Whether pid is on its way out: exiting (PF_EXITING), or killed and
 * not yet gone (SIGKILL pending, as a SIGKILL of its group leaves it
 * while its shim dies). */
static bool dying(pid_t pid)
{
    char buf[4096], path[64], *p;
    const char *st = sw_local__proc_stat(pid, buf, sizeof(buf));
    unsigned long long pending;
    unsigned long flags = 0;
    ssize_t n = 0;
    int fd;

    /* after the name: state ppid pgrp session tty_nr tpgid flags(9) */
    if (st && sscanf(st, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
        (flags & 0x4) != 0)
        return true;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
        do
            n = read(fd, buf, sizeof(buf) - 1);
        while (n < 0 && errno == EINTR);
        close(fd);
    }
    buf[n > 0 ? n : 0] = '\0';
    for (p = buf; (p = strstr(p, "Pnd:\t")) != NULL; p += 5) /* Sig, Shd */
        if (sscanf(p + 5, "%llx", &pending) == 1 &&
            (pending & (1ull << (SIGKILL - 1))))
            return true;
    return false;
}

/* After its shim died without recording the end: how the trial itself
 * ended, into t->exit, where that can be known. Before anything of the
 * group is killed here.
 *   - it has ended and is this subreaper's child now (killed with its
 *     shim: a SIGKILL of the group), or is on its way: its own end;
 *   - it is no longer to be found: it ended first and its shim, killed
 *     with it, reaped it. The shim's end stands for it (a SIGKILL of the
 *     group, as before the shim said anything);
 *   - it runs on, not dying: the shim alone was killed, nothing can say
 *     how the trial would have ended. False: the attempt is lost;
 *   - it died of SIGPIPE: its stdout and stderr were pipes to its shim
 *     (a log limit), which died with it. Lost too.
 * A trial killed is seen dying (SIGKILL pending, PF_EXITING) at once,
 * but for the instant between taking the signal and exiting: it is
 * looked at a few times before it is taken for running. */
static bool trial_end(trial *t, const siginfo_t *shim)
{
    siginfo_t ci;
    int i, calm = 0;

    if (t->child <= 0)
        return false; /* killed before it said its trial's pid */
    for (i = 0; i < 400 && calm < 4; i++) {
        memset(&ci, 0, sizeof(ci));
        if (waitid(P_PID, (id_t)t->child, &ci, WEXITED | WNOHANG | WNOWAIT) <
            0) {
            exit_line(t->exit, sizeof(t->exit), shim, false);
            return true;
        }
        if (ci.si_pid == t->child && ci.si_code != CLD_EXITED &&
            ci.si_status == SIGPIPE)
            return false; /* its output's pipe died with its shim */
        if (ci.si_pid == t->child) {
            exit_line(t->exit, sizeof(t->exit), &ci, false);
            return true;
        }
        calm = dying(t->child) ? 0 : calm + 1;
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    return false;
}

/* Waits until nothing is left of the killed group pgid (a second at
 * most), reaping those of it that are the supervisor's children: the
 * attempt's lock is let go only then, so whoever finds it unwatched
 * finds nothing of it running. One kill() when its shim ended it all. */
static void group_gone(pid_t pgid)
{
    int i;

    for (i = 0; i < 1000; i++) {
        while (waitpid(-pgid, NULL, WNOHANG) > 0)
            ;
        if (kill(-pgid, 0) < 0 && errno == ESRCH)
            return;
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
}

/* Records how trial i ended, kills what is left of its group and its
 * orphans, reaps it. An end its exit file cannot hold is kept. A shim
 * that died without a word (killed) leaves the end to its trial: when
 * that is unknown nothing is written, and the released lock with no
 * exit file tells the orchestrator the attempt is lost. */
static void ended(supervisor *s, size_t i, const siginfo_t *si)
{
    trial *t = &s->trials[i];
    char word = shim_word(t);
    bool known = true;
    int code = SW_OK;

    if (word) /* the shim ends as the trial did */
        exit_line(t->exit, sizeof(t->exit), si, t->disk);
    else
        known = trial_end(t, si);
    kill(-t->pid, SIGKILL);
    t->tag = 0; /* ended: its orphans go */
    /* a shim that spoke ended its trial's descendants first, which were
     * its own (a subreaper) while it lived: orphans come here only from
     * a killed shim, and the last look may have found some */
    s->strays = s->strays || !word;
    if (s->strays)
        cull(s);
    /* the shim records its trial's end, unless it could not (a full disk)
     * or was killed: then it is written here */
    if (word != SW_LOCAL_SHIM_RECORDED && known &&
        sw_local__put_file(t->dirfd, "exit", t->exit, false) < 0)
        code = sw_error_io_code(errno);
    while (waitpid(t->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    group_gone(t->pgid);
    t->pid = 0;
    if (code == SW_OK)
        forget(s, i);
    else
        tell_unrecorded(s, t, code);
}

/* Records the ends of the shims that have ended; whether there were
 * any. Before any orphan is reaped: a killed shim's trial is one, and
 * its end is the trial's (trial_end()). */
static bool shims_ended(supervisor *s)
{
    siginfo_t si;
    bool any = false;
    size_t i = 0;

    while (i < s->n) {
        memset(&si, 0, sizeof(si));
        if (s->trials[i].pid != 0 &&
            waitid(P_PID, (id_t)s->trials[i].pid, &si,
                   WEXITED | WNOHANG | WNOWAIT) == 0 &&
            si.si_pid == s->trials[i].pid) {
            ended(s, i, &si); /* may drop trial i */
            any = true;
            continue;
        }
        i++;
    }
    return any;
}

static void reap(supervisor *s)
{
    struct signalfd_siginfo fi;
    bool orphans = false;
    siginfo_t si;
    size_t i;

    while (read(s->sigfd, &fi, sizeof(fi)) > 0)
        ;
    for (;;) {
        memset(&si, 0, sizeof(si));
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
            si.si_pid == 0)
            break;
        if (shims_ended(s))
            continue; /* first: their trials are orphans now */
        for (i = 0; i < s->n && s->trials[i].pid != si.si_pid; i++)
            ;
        if (i < s->n) {
            ended(s, i, &si);
        } else {
            if (si.si_pid == s->factory_pid)
                drop_factory(s);         /* spawned shims from now on */
            waitpid(si.si_pid, NULL, 0); /* an orphan, not a trial */
            orphans = true;
        }
    }
    if (orphans) /* their own orphans, if they were killed, are next */
        cull(s);
}

/* The shim program, written once into a memfd, then opened again read
 * only (a file open for writing cannot be executed): its descriptor, or
 * -1. */
static int load_shim(void)
{
    size_t n = (size_t)(sw_local__shim_elf_end - sw_local__shim_elf);
    char path[64];
    int fd = memfd_create("sweep-shim", MFD_CLOEXEC), ro = -1;

    if (fd < 0)
        return -1;
    if (sw_write_all(fd, sw_local__shim_elf, n) == 0) {
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        ro = open(path, O_RDONLY | O_CLOEXEC);
    }
    close(fd);
    return ro;
}

/* Leaves the orchestrator's session and keeps only what it needs. */
static void detach(supervisor *s)
{
    sigset_t set;
    struct rlimit rl;
    int sig;

    setsid();
    prctl(PR_SET_CHILD_SUBREAPER, 1); /* trials' orphans come here */
    for (sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD)
            signal(sig, (sig == SIGINT || sig == SIGTERM || sig == SIGHUP ||
                         sig == SIGPIPE || sig == SIGQUIT)
                            ? SIG_IGN
                            : SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_SETMASK, &set, NULL);
    signal(SIGCHLD, SIG_DFL);
    s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    s->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    s->shim = load_shim();
    if (s->sigfd < 0 || s->devnull < 0 || s->shim < 0)
        _exit(1);
    dup2(s->devnull, 0);
    dup2(s->devnull, 1);
    dup2(s->devnull, 2);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max; /* two descriptors per running trial */
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Closes every descriptor but the supervisor's own five. */
static void close_others(const supervisor *s)
{
    int keep[5] = {s->sock, s->events, s->sigfd, s->devnull, s->shim};

    sw_local__close_except(keep, 5);
}

_Noreturn void sw_local__supervise(int sock, int events)
{
    supervisor s = {sock, events, -1, -1, -1, -1, 0, false, "", NULL, 0, 0, 0};
    struct pollfd p[2];
    bool connected = true, retry;

    detach(&s);
    close_others(&s);
    s.factory = sw_local__factory_start(s.shim, &s.factory_pid);
    sw_local__boot_id(s.boot, sizeof(s.boot)); /* once: it cannot change */
    while (connected || s.n > 0) {
        p[0].fd = s.sigfd;
        p[0].events = POLLIN;
        p[1].fd = connected ? s.sock : -1;
        p[1].events = POLLIN;
        retry = exits_pending(&s);
        if (poll(p, 2, retry ? RETRY_MS : -1) < 0 && errno != EINTR)
            break;
        if (retry)
            retry_exits(&s);
        if (p[0].revents)
            reap(&s);
        if (connected && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
            connected = serve(&s);
    }
    drop_factory(&s);  /* it reads the end of its socket and ends */
    while (s.n == 0) { /* no trial left: nor anything of theirs */
        cull(&s);
        if (waitpid(-1, NULL, 0) < 0 && errno != EINTR)
            break;
    }
    _exit(0);
}
