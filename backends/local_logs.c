/*
 * local_logs.c - a trial's output copied into its run's logs by its shim,
 * each log up to the attempt's limit.
 *
 * With a limit, the trial's stdout and stderr are pipes, and the shim
 * copies what comes out of them into stdout.log and stderr.log (opened
 * O_APPEND by the supervisor). A log that reaches the limit gets one
 * line, SW_LOG_LIMIT_MARK ..., and the rest of the attempt's output to it
 * is read and dropped, so the trial is never blocked and goes on; a cut
 * of stderr.log is said in stdout.log too, where the engine reads it and
 * tells a person. The limit is the log file's size, whatever attempt
 * wrote it: a log holds at most the limit and a line.
 *
 * A write the disk refuses (ENOSPC, EDQUOT, EIO, EROFS: SW_ESTORAGE) is
 * the machine's fault, not the trial's: the first one is kept (the shim
 * records it with the trial's end), and the rest of that log's output is
 * dropped. A quiet trial costs two pipes and a poll that wakes once.
 */
#define _GNU_SOURCE /* pipe2 */
#include "backends/local_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweeps/error.h"

#define CHUNK 65536

void sw_local__logs_init(sw_local__logs *lg, int64_t limit)
{
    memset(lg, 0, sizeof(*lg));
    lg->limit = limit;
    lg->s[0].in = lg->s[1].in = -1;
    lg->s[0].out = 1;
    lg->s[1].out = 2;
    lg->s[0].name = "stdout.log";
    lg->s[1].name = "stderr.log";
}

int sw_local__logs_pipes(sw_local__logs *lg, int w[2])
{
    int p[2], i;
    struct stat st;

    for (i = 0; i < 2; i++) {
        if (pipe2(p, O_CLOEXEC) < 0) {
            if (i == 1) /* the caller drains (closes) the read ends */
                close(w[0]);
            return -1;
        }
        lg->s[i].in = p[0];
        w[i] = p[1];
        lg->s[i].size = fstat(lg->s[i].out, &st) == 0 ? st.st_size : 0;
        lg->s[i].last = '\n';
        if (lg->s[i].size > 0 &&
            pread(lg->s[i].out, &lg->s[i].last, 1, lg->s[i].size - 1) != 1)
            lg->s[i].last = '\n';
    }
    return 0;
}

/* Writes n bytes of buf to stream s's log, counting them; a failure for
 * the disk is kept, and the stream drops the rest. */
static void put(sw_local__logs *lg, sw_local__stream *s, const char *buf,
                size_t n)
{
    if (n == 0 || s->dropping)
        return;
    if (sw_write_all(s->out, buf, n) < 0) {
        if (lg->disk_errno == 0 && sw_error_io_code(errno) == SW_ESTORAGE)
            lg->disk_errno = errno;
        s->dropping = true;
        return;
    }
    s->size += (int64_t)n;
    s->last = buf[n - 1];
}

/* One line to stream s, after the limit: on a line of its own. */
static void mark(sw_local__logs *lg, sw_local__stream *s, const char *what)
{
    char line[256];
    int n = snprintf(line, sizeof(line),
                     "%s%s: %s reached its limit of %" PRId64
                     " bytes; the rest of this attempt's output to it is "
                     "dropped\n",
                     s->last == '\n' ? "" : "\n", SW_LOG_LIMIT_MARK, what,
                     lg->limit);

    put(lg, s, line, (size_t)n);
}

/* Copies what stream s's pipe holds (one read): 0 at its end or when it
 * holds nothing now, else 1. */
static int copy(sw_local__logs *lg, sw_local__stream *s)
{
    char buf[CHUNK];
    ssize_t n;
    int64_t room;

    do
        n = read(s->in, buf, sizeof(buf));
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
        if (n == 0 || errno != EAGAIN) {
            close(s->in);
            s->in = -1;
        }
        return 0;
    }
    if (s->cut || s->dropping)
        return 1;
    room = lg->limit - s->size;
    if ((int64_t)n <= room) {
        put(lg, s, buf, (size_t)n);
        return 1;
    }
    put(lg, s, buf, room > 0 ? (size_t)room : 0);
    s->cut = true;
    mark(lg, s, s->name);
    if (s == &lg->s[1] && !lg->s[0].cut)
        mark(lg, &lg->s[0], lg->s[1].name); /* where the engine reads */
    return 1;
}

int sw_local__logs_fds(const sw_local__logs *lg, struct pollfd *p)
{
    int i, n = 0;

    for (i = 0; i < 2; i++)
        if (lg->s[i].in >= 0) {
            p[n].fd = lg->s[i].in;
            p[n].events = POLLIN;
            p[n++].revents = 0;
        }
    return n;
}

void sw_local__logs_copy(sw_local__logs *lg, const struct pollfd *p, int n)
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < 2; j++)
            if (p[i].revents && p[i].fd == lg->s[j].in)
                copy(lg, &lg->s[j]);
}

void sw_local__logs_drain(sw_local__logs *lg)
{
    int i;

    for (i = 0; i < 2; i++) {
        if (lg->s[i].in < 0)
            continue;
        fcntl(lg->s[i].in, F_SETFL, O_NONBLOCK);
        while (lg->s[i].in >= 0 && copy(lg, &lg->s[i]))
            ;
        if (lg->s[i].in >= 0)
            close(lg->s[i].in);
        lg->s[i].in = -1;
    }
}
