/*
 * slurm_cmd.c - Slurm's commands as child processes the Slurm executor
 * never waits for.
 *
 * Each command is started with posix_spawnp (argv only, never a shell),
 * in a process group of its own so a Ctrl-C meant for `sweep` does not
 * kill an sbatch halfway through a submission, with its stdout and stderr
 * on two non-blocking pipes in one epoll set. pump() reads what is there
 * and reaps with WNOHANG; a command is finished once both pipes are
 * closed and it is reaped. A command that runs past the caller's limit
 * (a controller that does not answer) is killed, and finishes as killed.
 */
#define _GNU_SOURCE /* pipe2 */
#include "backends/slurm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int sw_slurm__runner_init(sw_slurm__runner *r)
{
    memset(r, 0, sizeof(*r));
    r->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (r->epfd < 0)
        return sw_error_set(SW_ERROR, "slurm executor: epoll: %s",
                            strerror(errno));
    return SW_OK;
}

static void close_pipe(sw_slurm__runner *r, int *fd)
{
    if (*fd < 0)
        return;
    epoll_ctl(r->epfd, EPOLL_CTL_DEL, *fd, NULL);
    close(*fd);
    *fd = -1;
}

void sw_slurm__cmd_free(sw_slurm__cmd *c)
{
    if (!c)
        return;
    sw_buf_dispose(&c->stdout_buf);
    sw_buf_dispose(&c->stderr_buf);
    free(c->key);
    free(c);
}

void sw_slurm__runner_dispose(sw_slurm__runner *r)
{
    size_t i;

    for (i = 0; i < r->n; i++) {
        sw_slurm__cmd *c = r->cmds[i];

        close_pipe(r, &c->out);
        close_pipe(r, &c->err);
        /* an sbatch or an scancel is left to finish: killed, it could
         * leave a job that nothing knows of, or one that should not run */
        if (!c->reaped && !(r->keep_kinds & (1u << c->kind))) {
            kill(c->pid, SIGKILL);
            while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        sw_slurm__cmd_free(c);
    }
    free(r->cmds);
    if (r->epfd >= 0)
        close(r->epfd);
    memset(r, 0, sizeof(*r));
    r->epfd = -1;
}

/* The spawn attributes: a process group of its own, no blocked signals,
 * default dispositions for those `sweep` handles. */
static void make_attr(posix_spawnattr_t *attr)
{
    sigset_t none, deflt;

    sigemptyset(&none);
    sigemptyset(&deflt);
    sigaddset(&deflt, SIGINT);
    sigaddset(&deflt, SIGTERM);
    sigaddset(&deflt, SIGHUP);
    sigaddset(&deflt, SIGPIPE);
    sigaddset(&deflt, SIGCHLD);
    posix_spawnattr_init(attr);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP |
                                       POSIX_SPAWN_SETSIGMASK |
                                       POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(attr, 0);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setsigdefault(attr, &deflt);
}

static int watch(sw_slurm__runner *r, int fd)
{
    struct epoll_event e = {.events = EPOLLIN, .data.fd = fd};

    return epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &e);
}

int sw_slurm__spawn(sw_slurm__runner *r, char *const *argv, char *const *envp,
                    int kind, const char *key, double now)
{
    int o[2] = {-1, -1}, e[2] = {-1, -1}, rc;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sw_slurm__cmd *c;
    pid_t pid;

    if (pipe2(o, O_CLOEXEC | O_NONBLOCK) < 0 ||
        pipe2(e, O_CLOEXEC | O_NONBLOCK) < 0) {
        rc = errno;
        goto fail;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, o[1], 1);
    posix_spawn_file_actions_adddup2(&fa, e[1], 2);
    make_attr(&attr);
    rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, envp ? envp : environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(o[1]);
    close(e[1]);
    o[1] = e[1] = -1;
    if (rc != 0)
        goto fail;
    c = sw_calloc(1, sizeof(*c));
    c->pid = pid;
    c->out = o[0];
    c->err = e[0];
    c->kind = kind;
    c->key = key ? sw_strdup(key) : NULL;
    c->started = now;
    sw_grow(&r->cmds, &r->cap, r->n + 1, sizeof(*r->cmds));
    r->cmds[r->n++] = c;
    /* should epoll refuse one, the command's end is still found: pump()
     * reads every command on each wake */
    (void)watch(r, c->out);
    (void)watch(r, c->err);
    return SW_OK;
fail:
    for (int i = 0; i < 2; i++) {
        if (o[i] >= 0)
            close(o[i]);
        if (e[i] >= 0)
            close(e[i]);
    }
    return sw_error_set(SW_ERROR, "cannot run %s: %s", argv[0], strerror(rc));
}

/* Reads what `*fd` holds into `b`; closes it at EOF or error. */
static void drain(sw_slurm__runner *r, int *fd, sw_buf *b)
{
    char chunk[4096];
    ssize_t n;

    while (*fd >= 0) {
        n = read(*fd, chunk, sizeof(chunk));
        if (n > 0) {
            sw_buf_put(b, chunk, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        close_pipe(r, fd);
    }
}

void sw_slurm__pump(sw_slurm__runner *r, double now, double limit)
{
    size_t i;
    pid_t w;

    for (i = 0; i < r->n; i++) {
        sw_slurm__cmd *c = r->cmds[i];

        drain(r, &c->out, &c->stdout_buf);
        drain(r, &c->err, &c->stderr_buf);
        if (!c->reaped && limit > 0 && now - c->started > limit)
            kill(c->pid, SIGKILL);
        if (!c->reaped) {
            w = waitpid(c->pid, &c->status, WNOHANG);
            c->reaped = w == c->pid || (w < 0 && errno == ECHILD);
        }
        if (c->reaped && (c->out >= 0 || c->err >= 0) && limit > 0 &&
            now - c->started > limit) {
            close_pipe(r, &c->out); /* a grandchild kept them open */
            close_pipe(r, &c->err);
        }
    }
}

sw_slurm__cmd *sw_slurm__finished(sw_slurm__runner *r)
{
    size_t i;

    for (i = 0; i < r->n; i++) {
        sw_slurm__cmd *c = r->cmds[i];

        if (c->reaped && c->out < 0 && c->err < 0) {
            memmove(&r->cmds[i], &r->cmds[i + 1],
                    (r->n - i - 1) * sizeof(*r->cmds));
            r->n--;
            return c;
        }
    }
    return NULL;
}

size_t sw_slurm__running(const sw_slurm__runner *r, int kind)
{
    size_t i, n = 0;

    for (i = 0; i < r->n; i++)
        n += r->cmds[i]->kind == kind;
    return n;
}

int sw_slurm__cmd_exit(const sw_slurm__cmd *c)
{
    return c->reaped && WIFEXITED(c->status) ? WEXITSTATUS(c->status) : -1;
}

char *sw_slurm__cmd_error(const sw_slurm__cmd *c, const char *what)
{
    const char *s = sw_buf_cstr(&c->stderr_buf), *end;
    sw_buf b = SW_BUF_INIT;
    size_t len;

    /* every line: sbatch names a bad option on one and says "Try sbatch
     * --help" on the next */
    for (end = s; *s; s = end) {
        end = s + strcspn(s, "\n");
        len = (size_t)(end - s);
        while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == ' '))
            len--;
        if (len > 0 && b.len > 0)
            sw_buf_printf(&b, "; %.*s", (int)len, s);
        else if (len > 0 && strncmp(s, what, strlen(what)) == 0 &&
                 s[strlen(what)] == ':')
            sw_buf_printf(&b, "%.*s", (int)len, s); /* "sbatch: error: ..." */
        else if (len > 0)
            sw_buf_printf(&b, "%s: %.*s", what, (int)len, s);
        if (*end)
            end++;
    }
    if (b.len > 0)
        return sw_buf_detach(&b);
    sw_buf_dispose(&b);
    if (c->reaped && WIFSIGNALED(c->status))
        return sw_aprintf("%s: killed by signal %d (no answer in time)", what,
                          WTERMSIG(c->status));
    return sw_aprintf("%s: exit %d", what, sw_slurm__cmd_exit(c));
}
