/*
 * local_supervisor.c - the process that starts and watches the trials of
 * a local executor, and outlives the orchestrator.
 *
 * One supervisor per executor, forked when the executor is made, in a
 * session of its own (Ctrl-C and a closing terminal don't reach it). It
 * starts each trial with posix_spawn (no copy of its memory: vfork and
 * exec), in a process group of its own, and keeps two files in the
 * attempt's folder:
 *   pid   "SUPERVISOR_PID TRIAL_PGID STARTTIME\nBOOT_ID\n" (the job
 *         handle, with a newline, then the boot id), renamed into place
 *         before the launch is answered, and flock()ed for as long as the
 *         attempt runs, so any process can tell whether it is still
 *         watched. STARTTIME is the trial's (field 22 of /proc/PID/stat):
 *         with the boot id, it tells the trial from a later process that
 *         got its id, so nobody signals a group that is not the trial's;
 *   exit  "exit N\n" or "signal N\n", renamed into place when the trial
 *         ends, before it is reaped. When the program cannot be executed
 *         there is no trial: "exit 127\n" is written first, then a pid
 *         file with group 0, so whoever sees that pid file sees the end.
 * Requests are served one at a time, each answered by one reply, in
 * order; the orchestrator reads the replies when it can.
 * When a trial ends, what is left of its process group is killed while
 * the unreaped leader still pins the group id, so an ended attempt leaves
 * nothing running and its group id is never signalled after the exit file
 * exists. When the orchestrator goes (its socket closes), the supervisor
 * keeps watching the trials it started and exits after the last one.
 *
 * A trial's descendants may leave its group (setsid, setpgid), so the
 * supervisor is a child subreaper: whatever of a trial loses its parent
 * becomes the supervisor's child, an orphan. It tells whose orphan it
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
 */
#define _GNU_SOURCE /* pipe2, posix_spawn_file_actions_addchdir_np */
#include "backends/local_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweeps/error.h"

extern char **environ;

typedef struct {
    pid_t pid;         /* the trial, leader of its process group */
    int dirfd;         /* its attempt folder */
    int lockfd;        /* its pid file, flock()ed */
    unsigned long tag; /* N of its SWEEP_LOCAL_TRIAL; 0 once it has ended */
} trial;

typedef struct {
    int sock, events, sigfd, devnull;
    trial *trials;
    size_t n, cap;
    unsigned long last_tag; /* the tag of the latest launch */
} supervisor;

#define TAG_NAME "SWEEP_LOCAL_TRIAL"

/* A parsed launch request; strings point into the request buffer. */
typedef struct {
    const char *dir, *out, *err, *cwd;
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

/* Reads exactly n bytes; 0 on success, -1 on error or end of stream. */
static int recv_all(int fd, void *buf, size_t n)
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

static int reply(supervisor *s, int code, int64_t pgid, uint64_t start,
                 const char *msg)
{
    sw_local__reply r;

    memset(&r, 0, sizeof(r));
    r.code = code;
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

/* Writes `text` as dirfd/name through name.tmp and rename. Returns the
 * open descriptor of the file when `keep`, else 0; -1 on failure. */
static int put_file(int dirfd, const char *name, const char *text, bool keep)
{
    char tmp[32];
    size_t len = strlen(text);
    int fd;

    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (sw_write_all(fd, text, len) < 0 || (keep && flock(fd, LOCK_EX)) ||
        renameat(dirfd, tmp, dirfd, name) < 0) {
        close(fd);
        return -1;
    }
    if (keep)
        return fd;
    close(fd);
    return 0;
}

/* Splits a request into its fields; false when it is malformed. */
static bool parse(char *buf, size_t len, request *r)
{
    char *p = buf, *end = buf + len, *fields[5], *q;
    size_t i, argc, nenv = 0;

    if (len == 0 || buf[len - 1] != '\0')
        return false;
    for (i = 0; i < 5; i++) {
        if (p >= end)
            return false;
        fields[i] = p;
        p += strlen(p) + 1;
    }
    r->dir = fields[0];
    r->out = fields[1];
    r->err = fields[2];
    r->cwd = fields[3][0] ? fields[3] : NULL;
    argc = strtoul(fields[4], NULL, 10);
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

/* What posix_spawn can fail with, as the trial's stderr says it. */
static void exec_failed(int errfd, const char *prog, int e)
{
    dprintf(errfd, "sweep: cannot run '%s': %s\n", prog, strerror(e));
}

static int spawn(supervisor *s, const request *r, int out, int err, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t all, none;
    char **saved = environ;
    int rc;

    sigfillset(&all);
    sigemptyset(&none);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, s->devnull, 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, err, 2);
    if (r->cwd)
        posix_spawn_file_actions_addchdir_np(&fa, r->cwd);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setsigmask(&at, &none);
    environ = r->envp; /* posix_spawnp searches the trial's PATH */
    rc = posix_spawnp(pid, r->argv[0], &fa, &at, r->argv, r->envp);
    environ = saved;
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

static int open_log(supervisor *s, const char *path, const char *what)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

    if (fd < 0)
        fail(s, SW_EIO, "cannot open %s log '%s': %s", what, path,
             strerror(errno));
    return fd;
}

/* Checks the attempt folder: it must exist and hold no attempt yet. */
static int open_dir(supervisor *s, const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0) {
        fail(s, SW_EIO, "cannot open attempt folder '%s': %s", dir,
             strerror(errno));
        return -1;
    }
    if (faccessat(fd, "pid", F_OK, 0) == 0 ||
        faccessat(fd, "exit", F_OK, 0) == 0) {
        fail(s, SW_EINVALID, "attempt folder '%s' already holds an attempt",
             dir);
        close(fd);
        return -1;
    }
    return fd;
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

static void track(supervisor *s, pid_t pid, int dirfd, int lockfd)
{
    sw_grow(&s->trials, &s->cap, s->n + 1, sizeof(trial));
    s->trials[s->n].pid = pid;
    s->trials[s->n].dirfd = dirfd;
    s->trials[s->n].lockfd = lockfd;
    s->trials[s->n].tag = s->last_tag;
    s->n++;
}

/* Starts the trial of a request, records it, and answers. */
static void launch(supervisor *s, request *r)
{
    int dirfd, out = -1, err = -1, lockfd = -1, rc;
    char line[160], tag[64], boot[64];
    uint64_t start = 0;
    pid_t pid = 0, pgrp;

    if ((dirfd = open_dir(s, r->dir)) < 0)
        return;
    if ((out = open_log(s, r->out, "stdout")) < 0 ||
        (err = open_log(s, r->err, "stderr")) < 0 || !cwd_ok(s, r))
        goto done;
    tag_env(s, r, tag, sizeof(tag));
    rc = spawn(s, r, out, err, &pid);
    if (rc != 0) { /* nothing runs: it ended as a shell's 127 would */
        exec_failed(err, r->argv[0], rc);
        snprintf(line, sizeof(line), "%d 0 0\n", (int)getpid());
        if (put_file(dirfd, "exit", "exit 127\n", false) < 0 ||
            put_file(dirfd, "pid", line, false) < 0)
            fail(s, SW_EIO, "cannot write in '%s': %s", r->dir,
                 strerror(errno));
        else
            reply(s, SW_OK, 0, 0, NULL);
        goto done;
    }
    sw_local__boot_id(boot, sizeof(boot));
    /* unreaped, the trial is in /proc: its start time is there to read */
    if (sw_local__start_time(pid, &start, &pgrp) && start > 0) {
        snprintf(line, sizeof(line), "%d %d %" PRIu64 "\n%s\n", (int)getpid(),
                 (int)pid, start, boot);
        lockfd = put_file(dirfd, "pid", line, true);
    }
    if (lockfd < 0) {
        kill(-pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail(s, SW_EIO, "cannot write '%s/pid': %s", r->dir, strerror(errno));
        goto done;
    }
    track(s, pid, dirfd, lockfd);
    dirfd = -1;
    reply(s, SW_OK, pid, start, NULL);
done:
    if (dirfd >= 0)
        close(dirfd);
    if (out >= 0)
        close(out);
    if (err >= 0)
        close(err);
}

/* Reads and serves one request; false when the orchestrator has gone. */
static bool serve(supervisor *s)
{
    uint32_t len;
    char *buf;
    request r;

    if (recv_all(s->sock, &len, sizeof(len)) < 0)
        return false;
    if (len == 0 || len > SW_LOCAL_MAX_REQUEST)
        return false;
    buf = sw_malloc(len);
    if (recv_all(s->sock, buf, len) < 0) {
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
    unsigned long tag = tag_of(pid);
    size_t i, running = 0;

    for (i = 0; i < s->n; i++) {
        if (s->trials[i].pid == pid)
            return false;
        if (s->trials[i].tag != 0) {
            running++;
            if (s->trials[i].tag == tag)
                return false;
        }
    }
    return tag != 0 || running == 0;
}

/* Reads the parent and session of pid from /proc; false when it is
 * gone. */
static bool stat_of(long pid, int *ppid, int *sid)
{
    char path[64], buf[512], *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    do
        n = read(fd, buf, sizeof(buf) - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* the name before it may hold anything */
    return p && sscanf(p + 1, " %*c %d %*d %d", ppid, sid) == 2;
}

/* Kills the orphans of ended trials (see the top of the file): each one
 * and, when it leads a session (whose members can only descend from it),
 * that session's group. Its other descendants are orphaned in turn. */
static void cull(const supervisor *s)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    char *end;
    int ppid, sid;
    long pid;

    while (d && (e = readdir(d))) {
        pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (!stat_of(pid, &ppid, &sid) || ppid != (int)getpid() ||
            !doomed(s, (pid_t)pid))
            continue;
        if (sid == pid)
            kill(-(pid_t)pid, SIGKILL);
        kill((pid_t)pid, SIGKILL);
    }
    if (d)
        closedir(d);
}

/* Records how trial i ended, kills what is left of its group and its
 * orphans, reaps it. */
static void ended(supervisor *s, size_t i, const siginfo_t *si)
{
    trial *t = &s->trials[i];
    char line[32];

    if (si->si_code == CLD_EXITED)
        snprintf(line, sizeof(line), "exit %d\n", si->si_status);
    else
        snprintf(line, sizeof(line), "signal %d\n", si->si_status);
    kill(-t->pid, SIGKILL);
    t->tag = 0; /* ended: its orphans go */
    cull(s);
    put_file(t->dirfd, "exit", line, false);
    while (waitpid(t->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    close(t->lockfd);
    close(t->dirfd);
    s->trials[i] = s->trials[--s->n];
    if (write(s->events, "x", 1) < 0) {
        /* full (a wakeup is pending) or the orchestrator has gone */
    }
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
        for (i = 0; i < s->n && s->trials[i].pid != si.si_pid; i++)
            ;
        if (i < s->n) {
            ended(s, i, &si);
        } else {
            waitpid(si.si_pid, NULL, 0); /* an orphan, not a trial */
            orphans = true;
        }
    }
    if (orphans) /* their own orphans, if they were killed, are next */
        cull(s);
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
    if (s->sigfd < 0 || s->devnull < 0)
        _exit(1);
    dup2(s->devnull, 0);
    dup2(s->devnull, 1);
    dup2(s->devnull, 2);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max; /* two descriptors per running trial */
        setrlimit(RLIMIT_NOFILE, &rl);
    }
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

/* Closes every descriptor but the supervisor's own four. */
static void close_others(const supervisor *s)
{
    unsigned int keep[4] = {(unsigned int)s->sock, (unsigned int)s->events,
                            (unsigned int)s->sigfd, (unsigned int)s->devnull};
    unsigned int lo = 3, t;
    int i, j;

    for (i = 0; i < 4; i++) /* sort: four elements */
        for (j = i + 1; j < 4; j++)
            if (keep[j] < keep[i]) {
                t = keep[i];
                keep[i] = keep[j];
                keep[j] = t;
            }
    for (i = 0; i < 4; i++) {
        if (keep[i] > lo)
            close_from_to(lo, keep[i] - 1);
        if (keep[i] >= lo)
            lo = keep[i] + 1;
    }
    close_from_to(lo, ~0U);
}

_Noreturn void sw_local__supervise(int sock, int events)
{
    supervisor s = {sock, events, -1, -1, NULL, 0, 0, 0};
    struct pollfd p[2];
    bool connected = true;

    detach(&s);
    close_others(&s);
    while (connected || s.n > 0) {
        p[0].fd = s.sigfd;
        p[0].events = POLLIN;
        p[1].fd = connected ? s.sock : -1;
        p[1].events = POLLIN;
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            reap(&s);
        if (connected && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
            connected = serve(&s);
    }
    while (s.n == 0) { /* no trial left: nor anything of theirs */
        cull(&s);
        if (waitpid(-1, NULL, 0) < 0 && errno != EINTR)
            break;
    }
    _exit(0);
}
