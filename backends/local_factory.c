/*
 * local_factory.c - the supervisor's side of the shim factory: a shim
 * program (local_shim.c) started once, in its --factory mode, that clones
 * a new shim for each trial (local_internal.h says the protocol).
 *
 * Starting a shim from the factory costs a copy of a small static
 * program's few pages; starting it with posix_spawn costs an exec and
 * glibc's start each time. The shims it clones are the supervisor's
 * children (CLONE_PARENT), so nothing else changes for the supervisor.
 * A factory that fails is given up (local_supervisor.c then spawns each
 * shim itself).
 */
#define _GNU_SOURCE
#include "backends/local_internal.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sweeps/error.h"

int sw_local__factory_start(int shimfd, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    char path[64], num[16], *av[4] = {"sweep-shim", "--factory", num, NULL};
    char *env[1] = {NULL};
    int sv[2], e;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    snprintf(path, sizeof(path), "/proc/self/fd/%d", shimfd);
    snprintf(num, sizeof(num), "%d", sv[1]);
    if ((e = posix_spawn_file_actions_init(&fa)) == 0) {
        posix_spawn_file_actions_adddup2(&fa, sv[1], sv[1]); /* kept open */
        e = posix_spawn(pid, path, &fa, NULL, av, env);
        posix_spawn_file_actions_destroy(&fa);
    }
    close(sv[1]);
    if (e != 0) {
        close(sv[0]);
        errno = e;
        return -1;
    }
    return sv[0];
}

/* The request's bytes: argc, argv, then envp, each NUL-terminated. */
static char *pack(char *const *av, char *const *envp, uint32_t *len)
{
    char head[24], *buf, *p;
    size_t n, argc = 0, i, total;

    while (av[argc])
        argc++;
    n = (size_t)snprintf(head, sizeof(head), "%zu", argc) + 1;
    total = n;
    for (i = 0; av[i]; i++)
        total += strlen(av[i]) + 1;
    for (i = 0; envp[i]; i++)
        total += strlen(envp[i]) + 1;
    if (total > SW_LOCAL_MAX_REQUEST * 2u)
        return NULL;
    p = buf = sw_malloc(total);
    memcpy(p, head, n);
    p += n;
    for (i = 0; av[i]; i++)
        p = stpcpy(p, av[i]) + 1;
    for (i = 0; envp[i]; i++)
        p = stpcpy(p, envp[i]) + 1;
    *len = (uint32_t)total;
    return buf;
}

/* Sends the length with the descriptors, then the bytes; -1 on failure. */
static int send_request(int sock, const char *buf, uint32_t len,
                        const int fds[SW_LOCAL_FACTORY_FDS])
{
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int) * SW_LOCAL_FACTORY_FDS)];
    } u;
    struct iovec iov = {&len, sizeof(len)};
    struct msghdr m;
    struct cmsghdr *c;
    ssize_t w;
    size_t off = 0;

    memset(&u, 0, sizeof(u));
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = u.b;
    m.msg_controllen = sizeof(u.b);
    c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * SW_LOCAL_FACTORY_FDS);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * SW_LOCAL_FACTORY_FDS);
    do
        w = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)sizeof(len))
        return -1;
    while (off < len) {
        w = send(sock, buf + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

int sw_local__factory_ask(int sock, char *const *av, char *const *envp,
                          const int fds[SW_LOCAL_FACTORY_FDS], pid_t *pid)
{
    uint32_t len = 0;
    char *buf = pack(av, envp, &len);
    int32_t answer = 0;
    size_t got = 0;
    ssize_t r;
    int rc = -1;

    if (!buf)
        return E2BIG;
    if (send_request(sock, buf, len, fds) < 0)
        goto done;
    while (got < sizeof(answer)) {
        r = read(sock, (char *)&answer + got, sizeof(answer) - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            goto done;
        got += (size_t)r;
    }
    if (answer > 0) {
        *pid = (pid_t)answer;
        rc = 0;
    } else if (answer < 0) {
        rc = -answer;
    }
done:
    free(buf);
    return rc;
}
