/*
 * local.c - the local executor: each attempt is a process of this machine,
 * watched by a small supervisor that outlives the orchestrator.
 *
 * launch() forks a supervisor (no exec), which leaves the orchestrator's
 * session, forks the trial into a process group of its own, and waits for
 * it. The supervisor keeps two files in the attempt's folder:
 *   pid   "SUPERVISOR_PID TRIAL_PGID\n", in place before launch() returns
 *         and flock()ed by the supervisor for as long as it lives, so any
 *         process can tell whether it is alive without trusting a pid that
 *         may have been reused (or that names a zombie nobody reaps);
 *   exit  "exit N\n" or "signal N\n", written (tmp, rename) as the
 *         supervisor's last act, so it is either absent or complete.
 * When the trial ends, the supervisor kills what is left of its process
 * group (daemonized helpers holding a GPU) before reaping it: an ended
 * attempt leaves nothing running, and its group id is never signalled
 * once the exit file exists.
 *
 * The orchestrator may have threads, so a forked process calls only
 * async-signal-safe functions: paths, argv and the environment are made
 * before fork(), numbers and messages are formatted by hand. The
 * supervisor shares the orchestrator's memory copy-on-write; it touches
 * almost none of it, but pages the orchestrator rewrites later are copied.
 *
 * Wakeups: a SIGCHLD handler (one per process, shared by all local
 * executors) writes a byte to a non-blocking self-pipe; wait_fd() is its
 * read end. Only supervisors this process forked raise SIGCHLD: an
 * adopted attempt (launched by an earlier orchestrator) must be polled
 * with check() on a tick.
 */
#include "backends/executor.h"
#include "sweeps/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    sw_executor base;
    pid_t *kids; /* supervisors forked here and not yet reaped */
    size_t nkids;
    size_t capkids;
    int devnull;         /* the trials' stdin */
    unsigned int max_fd; /* bound for closing fds without close_range */
} local;

/* Everything a supervisor needs, made before fork(). */
typedef struct {
    char *const *argv;
    char **envp; /* NULL: the orchestrator's environment */
    const char *cwd;
    int dirfd;
    int devnull;
    int out;
    int err;
    int report; /* write end of the pipe launch() reads */
    unsigned int max_fd;
} plan;

/* What a supervisor tells launch(): the trial's pid, or where it failed. */
typedef struct {
    int stage;
    int err; /* errno */
    int64_t pgid;
} report;

enum { STAGE_OK, STAGE_SETUP, STAGE_CWD, STAGE_FORK, STAGE_PIDFILE };

/* ---- the SIGCHLD self-pipe, shared by every local executor ---- */

static struct {
    int refs;
    int fds[2];
    struct sigaction old;
} chld = {.fds = {-1, -1}};

static void on_sigchld(int sig, siginfo_t *info, void *ctx)
{
    int saved = errno;
    ssize_t n = write(chld.fds[1], "c", 1); /* full: a wakeup is pending */

    (void)n;
    if (chld.old.sa_flags & SA_SIGINFO) {
        if (chld.old.sa_sigaction)
            chld.old.sa_sigaction(sig, info, ctx);
    } else if (chld.old.sa_handler != SIG_DFL &&
               chld.old.sa_handler != SIG_IGN) {
        chld.old.sa_handler(sig);
    }
    errno = saved;
}

static int set_flags(int fd, int fdflags, int flflags)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || fcntl(fd, F_SETFL, fl | flflags) < 0)
        return -1;
    return fcntl(fd, F_SETFD, fdflags);
}

static int chld_acquire(void)
{
    struct sigaction sa;
    int error;

    if (chld.refs > 0) {
        chld.refs++;
        return SW_OK;
    }
    if (pipe(chld.fds) < 0)
        goto fail;
    if (set_flags(chld.fds[0], FD_CLOEXEC, O_NONBLOCK) < 0 ||
        set_flags(chld.fds[1], FD_CLOEXEC, O_NONBLOCK) < 0)
        goto fail;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sigchld;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, &chld.old) < 0)
        goto fail;
    chld.refs = 1;
    return SW_OK;
fail:
    error = sw_error_set(SW_ERROR, "local executor: cannot watch SIGCHLD: %s",
                         strerror(errno));
    if (chld.fds[0] >= 0)
        close(chld.fds[0]);
    if (chld.fds[1] >= 0)
        close(chld.fds[1]);
    chld.fds[0] = chld.fds[1] = -1;
    return error;
}

static void chld_release(void)
{
    if (--chld.refs > 0)
        return;
    sigaction(SIGCHLD, &chld.old, NULL);
    close(chld.fds[0]);
    close(chld.fds[1]);
    chld.fds[0] = chld.fds[1] = -1;
}

/* ---- async-signal-safe helpers for the forked processes ---- */

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Appends the decimal form of v to buf at *len (buf has room). */
static void put_num(char *buf, size_t *len, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u > 0);
    if (v < 0)
        buf[(*len)++] = '-';
    while (n > 0)
        buf[(*len)++] = tmp[--n];
}

static void put_str(char *buf, size_t *len, const char *s)
{
    size_t n = strlen(s);

    memcpy(buf + *len, s, n);
    *len += n;
}

/* strerror() may lock or allocate; these are what execvp() can fail with. */
static const char *exec_errtext(int e)
{
    switch (e) {
    case ENOENT:
        return "No such file or directory";
    case EACCES:
        return "Permission denied";
    case ENOEXEC:
        return "Exec format error";
    case ENOTDIR:
        return "Not a directory";
    case ELOOP:
        return "Too many levels of symbolic links";
    case ENAMETOOLONG:
        return "File name too long";
    case E2BIG:
        return "Argument list too long";
    case ENOMEM:
        return "Cannot allocate memory";
    case ETXTBSY:
        return "Text file busy";
    default:
        return NULL;
    }
}

static void put_report(int fd, int stage, int err, int64_t pgid)
{
    report r;

    memset(&r, 0, sizeof(r));
    r.stage = stage;
    r.err = err;
    r.pgid = pgid;
    write_all(fd, (const char *)&r, sizeof(r));
}

/* ---- the trial: the supervisor's child ---- */

static _Noreturn void run_trial(const plan *p)
{
    static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    const char *text;
    sigset_t none;
    char msg[128];
    size_t i, len = 0;
    int e;

    setpgid(0, 0);
    for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
        signal(ignored[i], SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (p->envp)
        environ = p->envp;
    execvp(p->argv[0], p->argv);
    e = errno;
    text = exec_errtext(e);
    write_all(2, "sweep: cannot run '", 19);
    write_all(2, p->argv[0], strlen(p->argv[0]));
    put_str(msg, &len, "': ");
    if (text) {
        put_str(msg, &len, text);
    } else {
        put_str(msg, &len, "error ");
        put_num(msg, &len, e);
    }
    put_str(msg, &len, "\n");
    write_all(2, msg, len);
    _exit(127);
}

/* ---- the supervisor ---- */

static void close_range_of(unsigned int lo, unsigned int hi, unsigned int max)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, lo, hi, 0) == 0)
        return;
#endif
    for (; lo <= hi && lo <= max; lo++)
        close((int)lo);
}

/* Closes every descriptor >= 3 but `a` and `b` (both >= 3, a < b). */
static void close_except(int a, int b, unsigned int max)
{
    if (a > 3)
        close_range_of(3, (unsigned int)a - 1, max);
    if (b > a + 1)
        close_range_of((unsigned int)a + 1, (unsigned int)b - 1, max);
    close_range_of((unsigned int)b + 1, ~0U, max);
}

/* The signals a supervisor ignores: it outlives the orchestrator's Ctrl-C,
 * terminal and pipes. */
static bool held_off(int sig)
{
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGPIPE;
}

/* Leaves the orchestrator's session, signals and descriptors behind. */
static int detach(const plan *p)
{
    struct sigaction sa;
    sigset_t held;
    int sig;

    if (setsid() < 0)
        return -1;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    for (sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        sa.sa_handler = held_off(sig) ? SIG_IGN : SIG_DFL;
        sigaction(sig, &sa, NULL); /* fails harmlessly for reserved ones */
    }
    /* Blocked as well as ignored: a cancel() that comes before the trial
     * restores the defaults stays pending (Linux keeps blocked signals
     * even when ignored) instead of being lost. */
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGTERM);
    sigaddset(&held, SIGHUP);
    sigprocmask(SIG_SETMASK, &held, NULL);
    if (dup2(p->devnull, 0) < 0 || dup2(p->out, 1) < 0 || dup2(p->err, 2) < 0)
        return -1;
    if (p->dirfd < p->report)
        close_except(p->dirfd, p->report, p->max_fd);
    else
        close_except(p->report, p->dirfd, p->max_fd);
    return 0;
}

/* Writes `pid` and keeps it locked; returns the lock's fd, or -1. */
static int write_pidfile(int dirfd, pid_t kid)
{
    char line[64];
    size_t len = 0;
    int fd;

    put_num(line, &len, getpid());
    put_str(line, &len, " ");
    put_num(line, &len, kid);
    put_str(line, &len, "\n");
    fd = openat(dirfd, "pid.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                0644);
    if (fd < 0)
        return -1;
    if (write_all(fd, line, len) < 0 || flock(fd, LOCK_EX) < 0 ||
        renameat(dirfd, "pid.tmp", dirfd, "pid") < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Waits for the trial, then kills what is left of its group while the
 * unreaped leader still pins the group id. Returns the wait status. */
static int wait_trial(pid_t kid)
{
    siginfo_t si;
    int status = 0;

    while (waitid(P_PID, (id_t)kid, &si, WEXITED | WNOWAIT) < 0 &&
           errno == EINTR)
        ;
    kill(-kid, SIGKILL);
    while (waitpid(kid, &status, 0) < 0 && errno == EINTR)
        ;
    return status;
}

/* Records how the trial ended: a temporary file renamed into place, so a
 * reader sees all of it or nothing. It is not fsynced: that cost half a
 * millisecond per trial, and only a machine crash can lose the record;
 * then check() reports an unreadable record and the engine reruns the
 * attempt, as for any lost attempt. */
static int write_exitfile(int dirfd, int status)
{
    char line[32];
    size_t len = 0;
    int fd, ok;

    if (WIFEXITED(status)) {
        put_str(line, &len, "exit ");
        put_num(line, &len, WEXITSTATUS(status));
    } else {
        put_str(line, &len, "signal ");
        put_num(line, &len, WTERMSIG(status));
    }
    put_str(line, &len, "\n");
    fd = openat(dirfd, "exit.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                0644);
    if (fd < 0)
        return -1;
    ok = write_all(fd, line, len) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || renameat(dirfd, "exit.tmp", dirfd, "exit") < 0)
        return -1;
    return 0;
}

static _Noreturn void fail(const plan *p, int stage, pid_t kid)
{
    int e = errno;

    if (kid > 0) {
        kill(-kid, SIGKILL);
        kill(kid, SIGKILL);
        while (waitpid(kid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    put_report(p->report, stage, e, 0);
    _exit(1);
}

static _Noreturn void supervise(const plan *p)
{
    pid_t kid;
    int lock;

    if (detach(p) < 0)
        fail(p, STAGE_SETUP, 0);
    if (p->cwd && chdir(p->cwd) < 0)
        fail(p, STAGE_CWD, 0);
    kid = fork();
    if (kid < 0)
        fail(p, STAGE_FORK, 0);
    if (kid == 0)
        run_trial(p);
    setpgid(kid, kid); /* also here, so cancel() can't race the child */
    lock = write_pidfile(p->dirfd, kid);
    if (lock < 0)
        fail(p, STAGE_PIDFILE, kid);
    put_report(p->report, STAGE_OK, 0, kid);
    close(p->report);
    if (write_exitfile(p->dirfd, wait_trial(kid)) < 0)
        _exit(1);
    _exit(0);
}

/* ---- launch(), in the orchestrator ---- */

/* The inherited environment with `add` on top (same names replaced). */
static int make_env(char *const *add, char ***out)
{
    size_t n = 0, m = 0, k = 0, i, j;
    char **env;

    for (; environ[n]; n++)
        ;
    for (; add[m]; m++) {
        const char *eq = strchr(add[m], '=');

        if (!eq || eq == add[m])
            return sw_error_set(SW_EINVALID,
                                "trial environment: '%s' is not NAME=value",
                                add[m]);
    }
    env = sw_calloc(n + m + 1, sizeof(*env));
    for (i = 0; i < n + m; i++) {
        char *e = i < n ? environ[i] : add[i - n];
        size_t name = strcspn(e, "=") + 1;

        for (j = i < n ? 0 : i - n + 1; j < m; j++)
            if (strncmp(add[j], e, name) == 0)
                break;
        if (j == m)
            env[k++] = e; /* not replaced by a later addition */
    }
    env[k] = NULL;
    *out = env;
    return SW_OK;
}

/* Moves fd to 3 or above, so the supervisor's 0-2 can't clash with it. */
static int fd_high(int fd)
{
    int h;

    if (fd < 0 || fd > 2)
        return fd;
    h = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return h;
}

static int open_log(const char *path, const char *what, int *fd)
{
    if (!path)
        return sw_error_set(SW_EINVALID, "local executor: no %s path", what);
    *fd = fd_high(open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
    if (*fd < 0)
        return sw_error_set(SW_EIO, "cannot open %s log '%s': %s", what, path,
                            strerror(errno));
    return SW_OK;
}

static int plan_open(local *lx, const sw_launch *l, plan *p)
{
    int error;

    p->argv = l->argv;
    p->cwd = l->cwd;
    p->devnull = lx->devnull;
    p->max_fd = lx->max_fd;
    if (!l->argv || !l->argv[0] || !l->argv[0][0] || !l->dir)
        return sw_error_set(SW_EINVALID, "local executor: %s",
                            l->dir ? "empty command" : "no attempt folder");
    p->dirfd = fd_high(open(l->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (p->dirfd < 0)
        return sw_error_set(SW_EIO, "cannot open attempt folder '%s': %s",
                            l->dir, strerror(errno));
    if (faccessat(p->dirfd, "pid", F_OK, 0) == 0 ||
        faccessat(p->dirfd, "exit", F_OK, 0) == 0)
        return sw_error_set(SW_EINVALID,
                            "attempt folder '%s' already holds an attempt",
                            l->dir);
    if ((error = open_log(l->stdout_path, "stdout", &p->out)) < 0 ||
        (error = open_log(l->stderr_path, "stderr", &p->err)) < 0)
        return error;
    return l->env ? make_env(l->env, &p->envp) : SW_OK;
}

static void plan_close(plan *p)
{
    if (p->dirfd >= 0)
        close(p->dirfd);
    if (p->out >= 0)
        close(p->out);
    if (p->err >= 0)
        close(p->err);
    free(p->envp);
}

static void kids_add(local *lx, pid_t pid)
{
    sw_grow(&lx->kids, &lx->capkids, lx->nkids + 1, sizeof(*lx->kids));
    lx->kids[lx->nkids++] = pid;
}

/* Whether pid is an unreaped supervisor of ours; removes it if `drop`. */
static bool kids_has(local *lx, pid_t pid, bool drop)
{
    size_t i;

    for (i = 0; i < lx->nkids; i++) {
        if (lx->kids[i] != pid)
            continue;
        if (drop)
            lx->kids[i] = lx->kids[--lx->nkids];
        return true;
    }
    return false;
}

static int report_error(const sw_launch *l, const report *r)
{
    const char *e = strerror(r->err);

    switch (r->stage) {
    case STAGE_CWD:
        return sw_error_set(SW_EIO, "cannot run '%s' in '%s': %s", l->argv[0],
                            l->cwd, e);
    case STAGE_PIDFILE:
        return sw_error_set(SW_EIO, "cannot write '%s/pid': %s", l->dir, e);
    default:
        return sw_error_set(SW_ERROR,
                            "cannot start a supervisor for '%s' in '%s': %s",
                            l->argv[0], l->dir, e);
    }
}

/* Reads the supervisor's report; on failure reaps it (it exits at once). */
static int await_start(local *lx, const sw_launch *l, pid_t pid, int fd,
                       int64_t *pgid)
{
    report r;
    ssize_t n;

    do
        n = read(fd, &r, sizeof(r));
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof(r) && r.stage == STAGE_OK) {
        *pgid = r.pgid;
        return SW_OK;
    }
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    kids_has(lx, pid, true);
    if (n != (ssize_t)sizeof(r))
        return sw_error_set(
            SW_ERROR, "supervisor of '%s' in '%s' died before starting it",
            l->argv[0], l->dir);
    return report_error(l, &r);
}

static int local_launch(sw_executor *ex, const sw_launch *l, sw_job *job)
{
    local *lx = (local *)ex;
    plan p = {0};
    int pipefd[2] = {-1, -1}, error;
    int64_t pgid = 0;
    pid_t pid;

    p.dirfd = p.out = p.err = -1;
    if ((error = plan_open(lx, l, &p)) < 0)
        goto done;
    if (pipe(pipefd) < 0 || (pipefd[1] = fd_high(pipefd[1])) < 0 ||
        fcntl(pipefd[0], F_SETFD, FD_CLOEXEC) < 0 ||
        fcntl(pipefd[1], F_SETFD, FD_CLOEXEC) < 0) {
        error = sw_error_set(SW_ERROR, "cannot launch '%s': pipe: %s",
                             l->argv[0], strerror(errno));
        goto done;
    }
    p.report = pipefd[1];
    pid = fork();
    if (pid == 0)
        supervise(&p);
    close(pipefd[1]);
    pipefd[1] = -1;
    if (pid < 0) {
        error = sw_error_set(SW_ERROR, "cannot launch '%s': fork: %s",
                             l->argv[0], strerror(errno));
        goto done;
    }
    kids_add(lx, pid);
    if ((error = await_start(lx, l, pid, pipefd[0], &pgid)) < 0)
        goto done;
    job->pid = pid;
    job->pgid = pgid;
    job->dir = l->dir;
done:
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    plan_close(&p);
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

/* Whether the supervisor of an attempt we did not fork still holds the
 * lock on its pid file: a pid alone may have been reused. */
static int adopted_alive(const sw_job *job)
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

static int supervisor_alive(local *lx, const sw_job *job)
{
    pid_t pid = (pid_t)job->pid, r;

    if (!kids_has(lx, pid, false))
        return adopted_alive(job);
    do
        r = waitpid(pid, NULL, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        return 1;
    kids_has(lx, pid, true);
    return 0;
}

static int check_job(const sw_job *job)
{
    if (!job || !job->dir || job->pid <= 0 || job->pgid <= 1 ||
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
    if (rc == 0 && (rc = supervisor_alive(lx, job)) > 0)
        return 0;
    if (rc == 0)
        rc = read_exit(job->dir, out); /* it may have ended meanwhile */
    if (rc == 1 && kids_has(lx, (pid_t)job->pid, true)) {
        /* Our supervisor wrote exit as its last act: it is exiting. */
        while (waitpid((pid_t)job->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (rc == 0)
        return sw_error_set(SW_ENOTFOUND,
                            "attempt in '%s' is lost: its supervisor (pid "
                            "%lld) ended without recording how the trial ended",
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

/* The engine reads and discards every byte (the pipe is non-blocking),
 * then calls check() on its running jobs. SIGCHLD interrupts whatever
 * the engine is blocked in (poll() fails with EINTR): retry it. */
static int local_wait_fd(sw_executor *ex)
{
    (void)ex;
    return chld.fds[0];
}

static void local_free(sw_executor *ex)
{
    local *lx = (local *)ex;
    size_t i;

    for (i = 0; i < lx->nkids; i++) /* ended ones; running ones stay */
        waitpid(lx->kids[i], NULL, WNOHANG);
    free(lx->kids);
    close(lx->devnull);
    chld_release();
    free(lx);
}

static const sw_executor_methods local_methods = {
    SW_EXECUTOR_VERSION, "local",       local_launch, local_check,
    local_cancel,        local_wait_fd, local_free,
};

/* Makes a local executor; it installs a SIGCHLD handler until freed.
 * Not thread-safe: create and use executors from one thread. */
int sw_executor_local_new(sw_executor **out)
{
    local *lx = sw_calloc(1, sizeof(*lx));
    struct rlimit rl;
    int error;

    lx->devnull = fd_high(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (lx->devnull < 0) {
        error =
            sw_error_set(SW_EIO, "cannot open /dev/null: %s", strerror(errno));
        free(lx);
        return error;
    }
    lx->max_fd = 65535;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < 1048576)
        lx->max_fd = (unsigned int)rl.rlim_cur;
    if ((error = chld_acquire()) < 0) {
        close(lx->devnull);
        free(lx);
        return error;
    }
    lx->base.methods = &local_methods;
    *out = &lx->base;
    return SW_OK;
}
