/*
 * local_shim.c - the process between a supervisor and its trial: one per
 * attempt, so that a trial's end is recorded even when its supervisor is
 * gone.
 *
 * The shim is a small program of its own, linked statically from this
 * file, local_logs.c and local_common.c, which the supervisor
 * (local_supervisor.c) carries in memory: no copy of the supervisor's
 * pages per trial. One copy of it, in its --factory mode (the end of this
 * file), clones each new shim as the supervisor's child; without one, the
 * supervisor starts each with posix_spawn. Its command line and
 * descriptors are described in local_internal.h (SW_LOCAL_SHIM_ARGS); its
 * environment is the trial's. It leads the trial's process group and
 * holds the lock on the attempt's pid file (inherited). It waits at the
 * gate; once the gate opens (the pid file is in place) it starts the
 * trial, which execs the program. The shim is a child subreaper, so
 * whatever of the trial loses its parent becomes the shim's child. When the
 * trial ends, the shim kills all its descendants (nothing but the trial's can
 * be: they are its children, or theirs, read from /proc/PID/task/TID/children,
 * never a scan of all of /proc), with the groups they lead, then ends the way
 * the trial ended (the same exit code, or the same signal). The trial is
 * started with posix_spawn (a vfork), not a fork: nothing of the shim's runs in
 * it. With a log limit (the default), its stdout and stderr are pipes the shim
 * copies into the logs while it waits (local_logs.c), and drains once the trial
 * and its descendants are gone. It writes the exit file itself first (and says
 * so on a pipe, so its supervisor does not write it again): killing the
 * supervisor, or `sweep` and the supervisor together, at any moment, loses no
 * trial and no end; the attempt stays watched (the lock) for as long as the
 * shim lives. The supervisor writes the file when the shim could not: killed,
 * or the disk full (a shim whose supervisor has gone retries every second
 * instead).
 *
 * On `done` it tells its supervisor the trial's pid once forked, then
 * that it recorded the end, or that it could not and ends as the trial
 * did: a shim that ends having said neither was killed, and its end says
 * nothing of the trial's (the supervisor then looks at the trial itself).
 *
 * The shim ignores the signals a group is asked to stop with (SIGTERM,
 * SIGINT, SIGHUP, ...): they are for the trial, which resets them before
 * its exec. SIGKILL to the group ends both at once, and the supervisor
 * records "signal 9".
 */
#define _GNU_SOURCE /* environ */
#include "backends/local_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sweeps/error.h"

extern char **environ;

/* What the shim ignores and the trial gets: a request to stop. */
static const int stops[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,
                            SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Starts the trial: the program, with the stop signals back to their
 * defaults, the trial's environment (and its PATH searched), through
 * posix_spawn: a vfork, so the shim's pages are not copied for a child
 * that only execs. An exec that fails says why in the trial's stderr
 * and on `report`, and the shim exits 127. */
static pid_t start_trial(const sw_local__spawn *sp, const int w[2])
{
    posix_spawn_file_actions_t fa, *fap = NULL;
    posix_spawnattr_t at;
    sigset_t def, none;
    size_t i;
    pid_t t = -1;
    int e;

    sigemptyset(&def);
    sigemptyset(&none);
    for (i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
        sigaddset(&def, stops[i]);
    if ((e = posix_spawnattr_init(&at)) == 0) {
        posix_spawnattr_setsigdefault(&at, &def);
        posix_spawnattr_setsigmask(&at, &none);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF |
                                          POSIX_SPAWN_SETSIGMASK);
        if (w[0] >= 0 && posix_spawn_file_actions_init(&fa) == 0) {
            fap = &fa; /* the pipes to the logs become its 1 and 2 */
            posix_spawn_file_actions_adddup2(fap, w[0], 1);
            posix_spawn_file_actions_adddup2(fap, w[1], 2);
        }
        /* the shim's environment is the trial's: its PATH is searched */
        e = posix_spawnp(&t, sp->argv[0], fap, &at, sp->argv, environ);
        if (fap)
            posix_spawn_file_actions_destroy(fap);
        posix_spawnattr_destroy(&at);
    }
    if (e == 0)
        return t;
    dprintf(2, "sweep: cannot run '%s': %s\n", sp->argv[0], strerror(e));
    if (write(sp->report, &e, sizeof(e)) < 0)
        _exit(127);
    _exit(127);
}

/* SIGKILLs pid, every process below it, and the groups any of them
 * lead (a setsid or setpgid of the trial's, whose members descend from
 * it); how many processes. The children are read before their parent
 * is killed: should one fork meanwhile, its child is orphaned to the
 * shim, a subreaper, and found in the next round. */
static int kill_tree(pid_t pid, int depth)
{
    pid_t kids[256];
    size_t n = depth < 64 ? sw_local__children(pid, kids, 256) : 0, i;
    int found = 1;

    for (i = 0; i < n; i++)
        found += kill_tree(kids[i], depth + 1);
    kill(-pid, SIGKILL); /* ESRCH unless it leads a group */
    kill(pid, SIGKILL);
    return found;
}

/* SIGKILLs every descendant of the shim: the trial has ended, so its
 * own descendants are the shim's children now (it is a subreaper) or
 * theirs. Nothing else is looked at: no scan of /proc. How many it
 * found. */
static int kill_rest(void)
{
    pid_t kids[256];
    size_t n = sw_local__children(getpid(), kids, 256), i;
    int found = 0;

    for (i = 0; i < n; i++)
        found += kill_tree(kids[i], 0);
    return found;
}

/* Ends what is left of the trial: killed, then reaped, until nothing
 * is left (a killed process's children come to the shim in turn). */
static void end_rest(void)
{
    int round;

    for (round = 0; round < 1000; round++) { /* a second at most */
        pid_t w;

        while ((w = waitpid(-1, NULL, WNOHANG)) > 0)
            ;
        /* no child: no descendant either, as every orphan of the trial's
         * comes here (nothing of /proc to read, the common case) */
        if ((w < 0 && errno == ECHILD) || kill_rest() == 0)
            return;
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (round > 0)
            sleep_ms(1);
    }
}

/* Says `word` (and the trial's pid) to the supervisor on `done`. */
static void tell(const sw_local__spawn *sp, char word, const pid_t *trial_pid)
{
    char msg[1 + sizeof(pid_t)];
    size_t n = 1;

    msg[0] = word;
    if (trial_pid) {
        memcpy(msg + 1, trial_pid, sizeof(pid_t));
        n += sizeof(pid_t);
    }
    if (write(sp->done, msg, n) < 0) {
        /* the supervisor has gone: nobody asks */
    }
}

/* Writes the exit file for `status` (a wait status), and says so on
 * `done`. While the disk is at fault it tries again every second if its
 * supervisor has gone; else it leaves the end to the supervisor, which
 * also tells the orchestrator (local_supervisor.c). */
static void record(const sw_local__spawn *sp, int status, bool disk)
{
    char line[32];

    if (WIFEXITED(status))
        snprintf(line, sizeof(line), "exit %d\n%s", WEXITSTATUS(status),
                 disk ? "disk\n" : "");
    else
        snprintf(line, sizeof(line), "signal %d\n%s", WTERMSIG(status),
                 disk ? "disk\n" : "");
    if (disk)
        tell(sp, SW_LOCAL_SHIM_DISK, NULL);
    while (sw_local__put_file(sp->dirfd, "exit", line, false) < 0) {
        if (sw_error_io_code(errno) != SW_ESTORAGE ||
            getppid() == sp->supervisor) {
            tell(sp, SW_LOCAL_SHIM_MIRRORS, NULL);
            return;
        }
        sleep_ms(1000);
    }
    tell(sp, SW_LOCAL_SHIM_RECORDED, NULL);
}

/* Whether the file system of the attempt's folder (the sweep home) is
 * full: under 1 MiB or no inode left for its user. */
static bool home_full(int dirfd)
{
    struct statvfs st;

    return fstatvfs(dirfd, &st) == 0 &&
           ((double)st.f_bavail * (double)st.f_frsize < 1048576.0 ||
            (st.f_files > 0 && st.f_favail == 0));
}

/* Whether the machine's disk, not the trial, is to blame for its end: a
 * write of its output failed for the disk, or it failed (a non-zero
 * exit, a signal) while the home's file system is full, its own writes
 * likely refused. */
static bool disk_failed(const sw_local__spawn *sp, const sw_local__logs *lg,
                        int status)
{
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;

    return lg->disk_errno != 0 || (!ok && home_full(sp->dirfd));
}

/* Ends the shim as the trial ended: its exit code, or its signal. */
static _Noreturn void mirror(int status)
{
    struct rlimit none = {0, 0};
    sigset_t set;
    int sig;

    if (WIFEXITED(status))
        _exit(WEXITSTATUS(status));
    sig = WTERMSIG(status);
    setrlimit(RLIMIT_CORE, &none); /* the trial dumped its own core */
    signal(sig, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    kill(getpid(), sig); /* not raise(): a clone's glibc thread id is not
                            its own (the factory's, below) */
    _exit(128 + sig);
}

/* Waits at the gate: false when it closed without opening (the
 * supervisor died or gave up: nothing is to run). */
static bool pass_gate(int gate)
{
    ssize_t n;
    char go;

    do
        n = read(gate, &go, 1);
    while (n < 0 && errno == EINTR);
    close(gate);
    if (n == 1)
        return true;
    dprintf(2, "sweep: not started: its supervisor went first (%s)\n",
            n < 0 ? strerror(errno) : "end of file");
    return false;
}

/* Stops ignored, nothing blocked, no descriptor but those it is given,
 * and those close-on-exec (posix_spawn cleared the flag to pass them):
 * the trial gets none of them. Its own group. */
static void set_up(const sw_local__spawn *sp)
{
    int keep[5] = {sp->gate, sp->report, sp->dirfd, sp->lockfd, sp->done};
    sigset_t none;
    size_t i;

    setpgid(0, 0); /* posix_spawn made it so; the factory's clone not */
    /* no signal is caught here: the exec (of the shim, or of the factory
     * it was cloned from) reset every handler, and the only signals the
     * supervisor ignores are stops, set below */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    sw_local__close_except(keep, 5);
    for (i = 0; i < 5; i++)
        if (fcntl(keep[i], F_SETFD, FD_CLOEXEC) < 0)
            _exit(127);
    for (i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
        signal(stops[i], SIG_IGN);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_NAME, "sweep-shim"); /* not the memfd's number, in ps */
}

static void on_child(int sig)
{
    (void)sig; /* only to end ppoll() */
}

/* Waits for the trial t to end, reaping its orphans as they end; copies
 * its output into the logs meanwhile, when it goes through pipes.
 * SIGCHLD is blocked but inside ppoll(), so no end is missed. */
static int wait_trial(sw_local__logs *lg, pid_t t, const sigset_t *open)
{
    struct pollfd p[2];
    int status = 0, n;
    pid_t w;

    for (;;) {
        while ((w = waitpid(-1, &status, WNOHANG)) > 0)
            if (w == t)
                return status;
        if (w < 0 && errno == ECHILD)
            return status; /* cannot be: t is a child */
        n = sw_local__logs_fds(lg, p);
        if (ppoll(p, (nfds_t)n, NULL, open) > 0)
            sw_local__logs_copy(lg, p, n);
    }
}

/* Makes the pipes the trial's output goes through when there is a log
 * limit: w gets their write ends, or -1 (none: it writes the logs). */
static void log_pipes(const sw_local__spawn *sp, sw_local__logs *lg, int w[2])
{
    w[0] = w[1] = -1;
    sw_local__logs_init(lg, sp->log_limit);
    if (sp->log_limit > 0 && sw_local__logs_pipes(lg, w) < 0) {
        sw_local__logs_drain(lg); /* none, then: the logs directly */
        w[0] = w[1] = -1;
    }
}

static _Noreturn void shim(const sw_local__spawn *sp)
{
    struct sigaction sa;
    sw_local__logs lg;
    sigset_t chld, open;
    int status = 0, e, w[2];
    pid_t t;

    set_up(sp);
    if (!pass_gate(sp->gate))
        _exit(127);
    if (sp->cwd && chdir(sp->cwd) < 0) {
        e = errno;
        dprintf(2, "sweep: cannot run '%s': %s\n", sp->argv[0], strerror(e));
        if (write(sp->report, &e, sizeof(e)) < 0)
            _exit(127);
        _exit(127);
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, NULL); /* reset by the trial's exec */
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &open);
    log_pipes(sp, &lg, w);
    t = start_trial(sp, w);
    if (w[0] >= 0) {
        close(w[0]);
        close(w[1]);
    }
    /* should the shim be killed: said before the report closes, which
     * lets the supervisor answer the launch (and a cancel follow) */
    tell(sp, SW_LOCAL_SHIM_TRIAL, &t);
    close(sp->report); /* the exec has happened: nothing to report */
    status = wait_trial(&lg, t, &open);
    end_rest();
    sw_local__logs_drain(&lg); /* its writers are all gone */
    /* first: its supervisor may die at any time */
    record(sp, status, disk_failed(sp, &lg, status));
    mirror(status);
}

/* A decimal field of the command line into *out, within [lo, hi]. */
static bool field(const char *s, long long lo, long long hi, long long *out)
{
    char *end;

    errno = 0;
    *out = strtoll(s, &end, 10);
    return errno == 0 && end != s && *end == '\0' && *out >= lo && *out <= hi;
}

/* The command line of local_internal.h's SW_LOCAL_SHIM_ARGS. Exits 127,
 * nothing run, when it is not one. */
static _Noreturn void shim_main(int argc, char **argv)
{
    /* five descriptors (from 3), the log limit, the supervisor's pid */
    static const long long lo[7] = {3, 3, 3, 3, 3, 0, 1};
    static const long long hi[7] = {INT_MAX, INT_MAX,   INT_MAX, INT_MAX,
                                    INT_MAX, INT64_MAX, INT_MAX};
    sw_local__spawn sp;
    long long v[7];
    int i;

    if (argc <= SW_LOCAL_SHIM_ARGS)
        _exit(127);
    for (i = 0; i < 7; i++)
        if (!field(argv[1 + i], lo[i], hi[i], &v[i]))
            _exit(127);
    sp.gate = (int)v[0];
    sp.report = (int)v[1];
    sp.dirfd = (int)v[2];
    sp.lockfd = (int)v[3];
    sp.done = (int)v[4];
    sp.log_limit = v[5];
    sp.supervisor = (pid_t)v[6];
    sp.cwd = argv[8][0] ? argv[8] : NULL;
    sw_local__fault_nospace_at(argv[9]);
    sp.argv = argv + SW_LOCAL_SHIM_ARGS;
    shim(&sp);
}

/* ---- the factory (local_internal.h, local_factory.c) ---- */

/* The factory's command line, as the kernel shows it (/proc/PID/cmdline,
 * ps): a clone shows its own copy, blanked after the name. */
static char *args;
static size_t args_len;

/* Receives a request's length and its descriptors; -1 at the end of the
 * stream or when the message is not one (the factory then ends). */
static int take(int sock, uint32_t *len, int fds[SW_LOCAL_FACTORY_FDS])
{
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int) * SW_LOCAL_FACTORY_FDS)];
    } u;
    struct iovec iov = {len, sizeof(*len)};
    struct msghdr m;
    struct cmsghdr *c;
    ssize_t n;

    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = u.b;
    m.msg_controllen = sizeof(u.b);
    do
        n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    while (n < 0 && errno == EINTR);
    c = n == (ssize_t)sizeof(*len) ? CMSG_FIRSTHDR(&m) : NULL;
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
        c->cmsg_len != CMSG_LEN(sizeof(int) * SW_LOCAL_FACTORY_FDS) ||
        (m.msg_flags & MSG_CTRUNC) || *len == 0 ||
        *len > SW_LOCAL_MAX_REQUEST * 2u)
        return -1;
    memcpy(fds, CMSG_DATA(c), sizeof(int) * SW_LOCAL_FACTORY_FDS);
    return 0;
}

/* The new shim, in the clone: its 0, 1 and 2, its command line and
 * environment from the request buf[len] (argc, argv, envp), the
 * descriptors' numbers in argv those it received. */
static _Noreturn void born(char *buf, size_t len, const int fds[])
{
    char *p = buf, *end = buf + len, **av, num[5][16];
    size_t argc, i, nenv = 0;
    long long v;

    if (buf[len - 1] != '\0' ||
        !field(p, SW_LOCAL_SHIM_ARGS + 1, (long long)len, &v))
        _exit(127);
    argc = (size_t)v;
    av = calloc(argc + 1, sizeof(char *));
    p += strlen(p) + 1;
    for (i = 0; av && i < argc && p < end; i++, p += strlen(p) + 1)
        av[i] = p;
    if (!av || i < argc)
        _exit(127);
    for (i = 0; i < 5; i++) {
        snprintf(num[i], sizeof(num[i]), "%d", fds[3 + i]);
        av[1 + i] = num[i];
    }
    for (char *q = p; q < end; q += strlen(q) + 1)
        nenv++;
    if (!(environ = calloc(nenv + 1, sizeof(char *))))
        _exit(127);
    for (i = 0; p < end; p += strlen(p) + 1)
        environ[i++] = p;
    for (i = 0; i < 3; i++)
        if (dup2(fds[i], (int)i) < 0)
            _exit(127);
    if (args) /* "sweep-shim", not "sweep-shim --factory N", in ps */
        memset(args + strlen(args), 0, args_len - strlen(args));
    shim_main((int)argc, av);
}

/* Serves the supervisor on `sock` until it goes: a clone per request, the
 * supervisor's child (CLONE_PARENT), told back by its pid. */
static _Noreturn void factory(int sock)
{
    int fds[SW_LOCAL_FACTORY_FDS], i;
    uint32_t len;
    int32_t answer;
    char *buf;
    pid_t pid;

    sw_local__close_except(&sock, 1);
    prctl(PR_SET_NAME, "sweep-shim"); /* not the memfd's number, in ps */
    for (;;) {
        if (take(sock, &len, fds) < 0)
            _exit(0);
        if (!(buf = malloc(len)) || sw_read_all(sock, buf, len) < 0)
            _exit(0);
        /* a raw clone: the child runs on a copy of this stack, as after a
         * fork, and calls nothing that reads the thread id glibc keeps */
        pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL,
                             NULL, NULL);
        if (pid == 0) {
            close(sock);
            born(buf, len, fds);
        }
        answer = pid > 0 ? (int32_t)pid : -(int32_t)errno;
        for (i = 0; i < SW_LOCAL_FACTORY_FDS; i++)
            close(fds[i]);
        free(buf);
        if (sw_write_all(sock, &answer, sizeof(answer)) < 0)
            _exit(0);
    }
}

/* A shim (SW_LOCAL_SHIM_ARGS), or the factory: "--factory FD". */
int main(int argc, char **argv)
{
    long long fd;

    if (argc == 3 && strcmp(argv[1], "--factory") == 0 &&
        field(argv[2], 3, INT_MAX, &fd)) {
        args = argv[0];
        args_len = (size_t)(argv[2] + strlen(argv[2]) - argv[0]);
        factory((int)fd);
    }
    shim_main(argc, argv);
}
