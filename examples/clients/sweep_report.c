/*
 * sweep_report.c - a small synchronous client for sweep's metrics server.
 *
 * Reports wait in a queue of JSON objects, oldest first, until the server
 * acknowledges them; each call appends its report and sends the queue as
 * one JSON array (split to stay under the server's body limit), retrying
 * for at most the call's budget. Between calls, the time of the next
 * attempt is kept, so a report during a long outage returns at once.
 * HTTP/1.1 with Content-Length and `Connection: close`: one connection per
 * request, which keeps the code small and survives a server restarting.
 *
 * Invariant: a report leaves the queue only once the server acknowledged
 * it (200), refused it as malformed (400), or it was printed on stdout.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "sweep_report.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY (1u << 20)    /* the server's documented limit */
#define MAX_KEPT (64u << 20)   /* bytes kept before the oldest spill */
#define IO_FLOOR 2.0           /* seconds an answer may take past the budget */
#define MAX_BACKOFF 10.0       /* longest pause between attempts */
#define ANSWER_MAX (64u << 10) /* bytes of an answer read at most */
#define CONNECT_FAILED (-1)    /* post(): no answer at all */

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

typedef struct {
    char *data;
    size_t len, cap;
} buf;

typedef struct {
    int status;
    double retry_after; /* seconds; negative when absent */
    int stop;
    char msg[200]; /* the body's first line */
} answer;

static struct {
    long long next_step; /* the step a report without one gets */
    int ready, registered, http, broken, tell, one_at_a_time, stop;
    char *url, *token, *url_file;
    char host[256], port[8], *path;
    char **queue; /* reports not yet delivered, oldest at head */
    size_t head, len, cap, bytes, max_body;
    int failures;
    double next_try, budget;
    uint64_t rng;
    char error[512];
} st = {.budget = 1.0};

static void set_error(const char *fmt, ...) PRINTF_LIKE(1, 2);

static void set_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(st.error, sizeof(st.error), fmt, ap);
    va_end(ap);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A number in [lo, hi) from a xorshift generator seeded from the clock
 * and the pid: jitter only, no need for quality. */
static double uniform(double lo, double hi)
{
    if (!st.rng) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        st.rng = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)getpid() ^ 1u;
    }
    st.rng ^= st.rng << 13;
    st.rng ^= st.rng >> 7;
    st.rng ^= st.rng << 17;
    return lo + (hi - lo) * (double)(st.rng >> 11) / 9007199254740992.0;
}

/* ---- text ----------------------------------------------------------- */

/* Makes room for `n` more bytes and a NUL. */
static int buf_reserve(buf *b, size_t n)
{
    size_t cap = b->cap ? b->cap : 256;
    char *p;

    if (b->len + n + 1 <= b->cap)
        return 0;
    while (cap < b->len + n + 1)
        cap *= 2;
    if (!(p = realloc(b->data, cap)))
        return SWEEP_REPORT_ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

static int buf_add(buf *b, const char *s, size_t n)
{
    if (buf_reserve(b, n) != 0)
        return SWEEP_REPORT_ENOMEM;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

static int buf_str(buf *b, const char *s)
{
    return buf_add(b, s, strlen(s));
}

static int buf_printf(buf *b, const char *fmt, ...) PRINTF_LIKE(2, 3);

static int buf_printf(buf *b, const char *fmt, ...)
{
    va_list ap, again;
    int n;

    va_start(ap, fmt);
    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    if (n >= 0 && buf_reserve(b, (size_t)n) == 0)
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
    else
        n = -1;
    if (n >= 0)
        b->len += (size_t)n;
    va_end(again);
    va_end(ap);
    return n >= 0 ? 0 : SWEEP_REPORT_ENOMEM;
}

/* A double as Python's json.dumps writes it, whatever the C locale. */
static int add_number(buf *b, double v)
{
    const char *point = localeconv()->decimal_point;
    char text[64], *p;
    int digits;

    if (isnan(v))
        return buf_str(b, "NaN");
    if (isinf(v))
        return buf_str(b, v > 0 ? "Infinity" : "-Infinity");
    for (digits = 15; digits < 17; digits++) { /* the shortest exact */
        snprintf(text, sizeof(text), "%.*g", digits, v);
        if (strtod(text, NULL) == v)
            break;
    }
    snprintf(text, sizeof(text), "%.*g", digits, v);
    if (point && point[0] && strcmp(point, ".") != 0 &&
        (p = strstr(text, point))) {
        *p = '.';
        memmove(p + 1, p + strlen(point), strlen(p + strlen(point)) + 1);
    }
    return buf_str(b, text);
}

/* A JSON string; fails on a name sweep would refuse or skip. */
static int add_name(buf *b, const char *name)
{
    const unsigned char *s = (const unsigned char *)name;
    int error = buf_str(b, "\"");

    if (!name || !*name || strcmp(name, "step") == 0) {
        set_error("metric name \"%s\" is not allowed", name ? name : "(null)");
        return SWEEP_REPORT_EINVAL;
    }
    for (; *s && !error; s++) {
        if (*s < 0x20 || *s == 0x7f) {
            set_error("metric name \"%s\" holds a control character", name);
            return SWEEP_REPORT_EINVAL;
        }
        if (*s == '"' || *s == '\\')
            error = buf_add(b, "\\", 1);
        if (!error)
            error = buf_add(b, (const char *)s, 1);
    }
    return error ? error : buf_str(b, "\"");
}

/* The JSON object of one report. */
static int encode(buf *b, long long step, const sweep_metric *m, size_t n)
{
    char text[32];
    int error = 0;
    size_t i;

    if (!m || n == 0) {
        set_error("a report needs at least one metric");
        return SWEEP_REPORT_EINVAL;
    }
    snprintf(text, sizeof(text), "{\"step\": %lld", step);
    error = step >= 0 ? buf_str(b, text) : buf_str(b, "{");
    for (i = 0; i < n && !error; i++) {
        if (step >= 0 || i > 0)
            error = buf_str(b, ", ");
        if (!error)
            error = add_name(b, m[i].name);
        if (!error)
            error = buf_str(b, ": ");
        if (!error)
            error = add_number(b, m[i].value);
    }
    return error ? error : buf_str(b, "}");
}

/* ---- the queue and stdout -------------------------------------------- */

static void print_line(const char *json)
{
    printf("@metrics %s\n", json);
    fflush(stdout);
}

static void drop(size_t n, int print)
{
    while (n-- > 0 && st.len > 0) {
        char *r = st.queue[st.head];
        if (print)
            print_line(r);
        st.bytes -= strlen(r);
        free(r);
        st.head++;
        st.len--;
    }
    if (st.len == 0) {
        st.head = 0;
        st.one_at_a_time = 0;
    }
}

/* Consumes `json` (malloc'ed): queues it, spilling the oldest to stdout
 * past MAX_KEPT bytes. */
static int push(char *json)
{
    if (st.head + st.len == st.cap) {
        size_t cap = st.cap ? st.cap * 2 : 64;
        char **q;
        if (st.head > 0) {
            memmove(st.queue, st.queue + st.head, st.len * sizeof(char *));
            st.head = 0;
        } else if (!(q = realloc(st.queue, cap * sizeof(char *)))) {
            free(json);
            set_error("out of memory");
            return SWEEP_REPORT_ENOMEM;
        } else {
            st.queue = q;
            st.cap = cap;
        }
    }
    st.queue[st.head + st.len++] = json;
    st.bytes += strlen(json);
    while (st.bytes > MAX_KEPT && st.len > 1)
        drop(1, 1);
    return 0;
}

/* ---- the URL ---------------------------------------------------------- */

/* Splits the authority h..end into host and port; 0 when both are good. */
static int split_authority(const char *h, const char *end, char *host,
                           char *port)
{
    const char *colon, *close;
    size_t n;
    long v;

    if (*h == '[') { /* [IPv6] */
        close = memchr(h, ']', (size_t)(end - h));
        if (!close || (close + 1 != end && close[1] != ':'))
            return -1;
        colon = close + 1 != end ? close + 1 : NULL;
        h++;
        n = (size_t)(close - h);
    } else {
        colon = memchr(h, ':', (size_t)(end - h));
        n = (size_t)((colon ? colon : end) - h);
    }
    if (n == 0 || n >= 256)
        return -1;
    memcpy(host, h, n);
    host[n] = '\0';
    n = colon ? (size_t)(end - colon - 1) : 2;
    if (n == 0 || n > 5 || (colon && strspn(colon + 1, "0123456789") < n))
        return -1;
    memcpy(port, colon ? colon + 1 : "80", n);
    port[n] = '\0';
    v = strtol(port, NULL, 10);
    return v >= 1 && v <= 65535 ? 0 : -1;
}

/* Parses http://HOST[:PORT][/PATH] into st.host, st.port and st.path;
 * on failure they are left as they were. */
static int parse_url(const char *url)
{
    char host[sizeof(st.host)], port[sizeof(st.port)], *path;
    const char *h = url + 7, *end;

    if (strncasecmp(url, "http://", 7) != 0) {
        set_error("%s: only http:// URLs are supported", url);
        return SWEEP_REPORT_ECONFIG;
    }
    end = h + strcspn(h, "/?#");
    if (split_authority(h, end, host, port) != 0 || *end == '#') {
        set_error("%s: not a URL of the form http://HOST:PORT/PATH", url);
        return SWEEP_REPORT_ECONFIG;
    }
    path = malloc(strlen(end) + 2);
    if (!path) {
        set_error("out of memory");
        return SWEEP_REPORT_ENOMEM;
    }
    snprintf(path, strlen(end) + 2, "%s%s", *end == '/' ? "" : "/", end);
    free(st.path);
    st.path = path;
    memcpy(st.host, host, sizeof(host));
    memcpy(st.port, port, sizeof(port));
    return 0;
}

/* The first line of the URL file, or NULL. */
static char *read_url_file(void)
{
    char line[4096];
    FILE *f = st.url_file ? fopen(st.url_file, "r") : NULL;
    size_t n;

    if (!f)
        return NULL;
    if (!fgets(line, sizeof(line), f))
        line[0] = '\0';
    fclose(f);
    n = strcspn(line, "\r\n \t");
    line[n] = '\0';
    return n ? strdup(line) : NULL;
}

/* After a failed connection: 1 when the URL file names a new, good URL. */
static int url_moved(void)
{
    char *url = read_url_file();
    char keep[sizeof(st.error)];

    if (!url || (st.url && strcmp(url, st.url) == 0)) {
        free(url);
        return 0;
    }
    memcpy(keep, st.error, sizeof(keep));
    if (parse_url(url) != 0) {
        memcpy(st.error, keep, sizeof(keep));
        free(url);
        return 0;
    }
    free(st.url);
    st.url = url;
    return 1;
}

static void at_exit(void);

/* Reads the environment once. */
static void init(void)
{
    const char *url = getenv("SWEEP_METRICS_URL");
    const char *token = getenv("SWEEP_TOKEN");
    const char *file = getenv("SWEEP_METRICS_URL_FILE");

    st.ready = 1;
    st.max_body = MAX_BODY;
    st.url_file = file && *file ? strdup(file) : NULL;
    st.url = url && *url ? strdup(url) : read_url_file();
    st.token = strdup(token ? token : "");
    if (!st.url || !st.token)
        return;
    st.http = 1;
    if (!st.registered && atexit(at_exit) == 0)
        st.registered = 1;
    if (strpbrk(st.token, "\r\n"))
        set_error("SWEEP_TOKEN holds a line break");
    if (strpbrk(st.token, "\r\n") || parse_url(st.url) != 0) {
        st.broken = st.tell = 1;
        fprintf(stderr, "sweep_report: %s: reporting on stdout instead\n",
                st.error);
    }
}

/* ---- HTTP ------------------------------------------------------------- */

/* Waits until `fd` is ready for `events`; -1 (errno set) past
 * `deadline`. A signal does not cut the wait short. */
static int wait_fd(int fd, short events, double deadline)
{
    struct pollfd p = {.fd = fd, .events = events};
    double left;
    int rc;

    for (;;) {
        left = deadline - now();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        rc = poll(&p, 1, left > 1000 ? 1000000 : (int)(left * 1000) + 1);
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -1;
    }
}

/* A connected non-blocking socket, or -1 (errno set). */
static int dial(double deadline)
{
    struct addrinfo hints = {0}, *ai = NULL, *a;
    int fd = -1, err = 0, rc;
    socklen_t len = sizeof(err);

    hints.ai_socktype = SOCK_STREAM;
    if ((rc = getaddrinfo(st.host, st.port, &hints, &ai)) != 0) {
        errno = rc == EAI_SYSTEM ? errno : EHOSTUNREACH;
        return -1;
    }
    for (a = ai; a && fd < 0; a = a->ai_next) {
        if ((fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol)) < 0)
            continue;
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
            (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline) == 0 &&
             getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
             (errno = err) == 0))
            break;
        err = errno;
        close(fd);
        fd = -1;
        errno = err;
    }
    freeaddrinfo(ai);
    return fd;
}

static int send_all(int fd, const char *p, size_t n, double deadline)
{
    ssize_t k;

    while (n > 0) {
        if (wait_fd(fd, POLLOUT, deadline) != 0)
            return -1;
        k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno != EINTR && errno != EAGAIN)
            return -1;
        if (k > 0)
            p += k, n -= (size_t)k;
    }
    return 0;
}

/* The value of header `name` in the head of an answer, or NULL. */
static const char *header(const char *head, const char *name)
{
    size_t n = strlen(name);
    const char *p = head;

    while ((p = strstr(p, "\r\n")) && p[2] != '\r') {
        p += 2;
        if (strncasecmp(p, name, n) == 0 && p[n] == ':')
            return p + n + 1 + strspn(p + n + 1, " \t");
    }
    return NULL;
}

/* 1 once `b` holds a whole answer: its head and Content-Length bytes. */
static int complete(const buf *b)
{
    const char *end = strstr(b->data, "\r\n\r\n"), *cl;
    char *stop;
    unsigned long long n;

    if (!end || !(cl = header(b->data, "Content-Length")))
        return 0;
    n = strtoull(cl, &stop, 10);
    return stop != cl && (size_t)(b->data + b->len - (end + 4)) >= n;
}

/* Reads the answer, up to the end its Content-Length says or until the
 * server closes. */
static int read_all(int fd, buf *b, double deadline)
{
    char chunk[4096];
    ssize_t k;

    for (;;) {
        if (wait_fd(fd, POLLIN, deadline) != 0)
            return -1;
        k = recv(fd, chunk, sizeof(chunk), 0);
        if (k == 0)
            return 0;
        if (k < 0 && errno != EINTR && errno != EAGAIN)
            return -1;
        if (k > 0 && (b->len + (size_t)k > ANSWER_MAX ||
                      buf_add(b, chunk, (size_t)k) != 0))
            return 0; /* enough to read the status and the decision */
        if (k > 0 && complete(b))
            return 0;
    }
}

static void parse_answer(const char *text, answer *a)
{
    const char *body = strstr(text, "\r\n\r\n"), *ra, *stop;
    char *end;
    size_t n;

    a->status = 0;
    a->retry_after = -1;
    a->stop = 0;
    a->msg[0] = '\0';
    if (strncmp(text, "HTTP/1.", 7) != 0 || !body)
        return;
    a->status = (int)strtol(text + 9, &end, 10);
    if ((ra = header(text, "Retry-After"))) {
        a->retry_after = strtod(ra, &end);
        if (end == ra || a->retry_after < 0 || a->retry_after > 300)
            a->retry_after = -1;
    }
    body += 4;
    n = strcspn(body, "\r\n");
    n = n < sizeof(a->msg) - 1 ? n : sizeof(a->msg) - 1;
    memcpy(a->msg, body, n);
    a->msg[n] = '\0';
    if ((stop = strstr(body, "\"stop\""))) {
        stop += 6 + strspn(stop + 6, " \t\r\n");
        if (*stop == ':')
            stop += 1 + strspn(stop + 1, " \t\r\n");
        a->stop = strncmp(stop, "true", 4) == 0;
    }
}

/* POSTs `body`; fills `a` and returns 0, or CONNECT_FAILED (errno set).
 * Past `deadline`, it still gives the connection 0.2 s and the answer
 * IO_FLOOR: a server that is slow, not gone, should not see its answer
 * cut off and the report sent twice. */
static int post(const buf *body, double deadline, answer *a)
{
    buf req = {0}, in = {0};
    int fd, rc = CONNECT_FAILED, saved, v6 = strchr(st.host, ':') != NULL;

    if (buf_printf(&req,
                   "POST %s HTTP/1.1\r\nHost: %s%s%s:%s\r\n"
                   "Authorization: Bearer %s\r\n"
                   "Content-Type: application/json\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                   st.path, v6 ? "[" : "", st.host, v6 ? "]" : "", st.port,
                   st.token, body->len) ||
        buf_add(&req, body->data, body->len)) {
        errno = ENOMEM;
        goto done;
    }
    if ((fd = dial(deadline > now() + 0.2 ? deadline : now() + 0.2)) < 0)
        goto done;
    if (deadline < now() + IO_FLOOR)
        deadline = now() + IO_FLOOR;
    if (send_all(fd, req.data, req.len, deadline) == 0 &&
        read_all(fd, &in, deadline) == 0 && in.len > 0) {
        parse_answer(in.data, a);
        rc = a->status ? 0 : CONNECT_FAILED;
    }
    saved = errno;
    close(fd);
    errno = saved;
done:
    free(req.data);
    free(in.data);
    return rc;
}

/* ---- delivery --------------------------------------------------------- */

/* The body for the oldest queued reports that fit; *n says how many. */
static int batch(buf *b, size_t *n)
{
    size_t i, limit = st.one_at_a_time ? 1 : st.len, size = 2;

    b->len = 0;
    for (i = 0; i < limit; i++) {
        size += strlen(st.queue[st.head + i]) + 1;
        if (i > 0 && size > st.max_body)
            break;
    }
    *n = i;
    if (i == 1)
        return buf_str(b, st.queue[st.head]);
    if (buf_str(b, "["))
        return SWEEP_REPORT_ENOMEM;
    for (i = 0; i < *n; i++)
        if ((i && buf_str(b, ",")) || buf_str(b, st.queue[st.head + i]))
            return SWEEP_REPORT_ENOMEM;
    return buf_str(b, "]");
}

static void backoff(double at_least)
{
    double cap = 0.1 * (double)(1u << (st.failures < 10 ? st.failures : 10));

    cap = cap < MAX_BACKOFF ? cap : MAX_BACKOFF;
    st.failures++;
    st.next_try = now() + (at_least >= 0 ? at_least + uniform(0, 0.1)
                                         : uniform(cap / 2, cap));
}

/* Gives HTTP up: the URL or the token cannot work. */
static int give_up(const answer *a)
{
    set_error("%s answered %d %s: reporting on stdout instead", st.url,
              a->status, a->msg);
    fprintf(stderr, "sweep_report: %s\n", st.error);
    st.broken = 1;
    drop(st.len, 1);
    return SWEEP_REPORT_ECONFIG;
}

/* Acts on the answer to a batch of `n` reports; returns 0 or an error to
 * report (the loop goes on). */
static int settle(const answer *a, size_t n, size_t body_len)
{
    if (a->status == 200) {
        drop(n, 0);
        st.failures = 0;
        st.stop = st.stop || a->stop;
        return 0;
    }
    if ((a->status == 400 || a->status == 413) && n > 1) {
        if (a->status == 413)
            st.max_body = body_len / 2 > 64 ? body_len / 2 : 64;
        st.one_at_a_time = a->status == 400; /* find the bad one */
        return 0;
    }
    if (a->status == 400 || a->status == 413) {
        set_error("the server refused %.200s: %d %s", st.queue[st.head],
                  a->status, a->msg);
        drop(1, a->status == 413);
        return SWEEP_REPORT_EREFUSED;
    }
    if (a->status == 401 || a->status == 403 || a->status == 404 ||
        a->status == 405)
        return give_up(a);
    set_error("%s answered %d %s", st.url, a->status, a->msg);
    backoff(a->status == 503 || a->status == 429 ? a->retry_after : -1);
    return 0;
}

/* Waits until the next attempt is due; 0 when it is before `deadline`. */
static int wait_turn(double deadline)
{
    double t = now(), d;
    struct timespec ts;

    if (t >= st.next_try)
        return 0;
    if (st.next_try > deadline)
        return -1;
    d = st.next_try - t;
    ts.tv_sec = (time_t)d;
    ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
    return nanosleep(&ts, NULL) == 0 ? 0 : -1; /* a signal: return now */
}

/* Sends the queue until it is empty or `deadline` passes. */
static int deliver(double deadline)
{
    buf body = {0};
    answer a;
    int result = 0, rc;
    size_t n;

    while (st.len > 0 && !st.broken) {
        if (wait_turn(deadline) != 0) {
            result = result ? result : SWEEP_REPORT_EPENDING;
            break;
        }
        if (batch(&body, &n) != 0) {
            set_error("out of memory");
            result = SWEEP_REPORT_ENOMEM;
            break;
        }
        rc = post(&body, deadline, &a);
        if (rc == CONNECT_FAILED) {
            set_error("cannot reach %s: %s", st.url, strerror(errno));
            if (!url_moved())
                backoff(-1);
            continue;
        }
        rc = settle(&a, n, body.len);
        result = rc ? rc : result;
    }
    free(body.data);
    return result;
}

/* ---- the API ---------------------------------------------------------- */

int sweep_report(long long step, const sweep_metric *metrics, size_t n)
{
    buf b = {0};
    int rc;

    if (!st.ready)
        init();
    if (step < 0) /* numbered as wandb.log numbers: the step after the last */
        step = st.next_step;
    if ((rc = encode(&b, step, metrics, n)) != 0) {
        if (rc == SWEEP_REPORT_ENOMEM)
            set_error("out of memory");
        free(b.data);
        return rc;
    }
    st.next_step = step + 1;
    if (!st.http || st.broken) {
        print_line(b.data);
        free(b.data);
        rc = st.tell ? SWEEP_REPORT_ECONFIG : 0; /* said once */
        st.tell = 0;
        return st.stop ? SWEEP_REPORT_STOP : rc;
    }
    if ((rc = push(b.data)) != 0)
        return rc;
    rc = deliver(now() + st.budget);
    return st.stop ? SWEEP_REPORT_STOP : rc;
}

int sweep_report_flush(double timeout_s)
{
    if (!st.ready)
        init();
    return st.len ? deliver(now() + timeout_s) : 0;
}

void sweep_report_finish(double timeout_s)
{
    if (st.len > 0)
        deliver(now() + timeout_s);
    if (st.len > 0) {
        fprintf(stderr,
                "sweep_report: %zu report(s) not delivered to %s: written "
                "to stdout as @metrics lines\n",
                st.len, st.url ? st.url : "(no URL)");
        drop(st.len, 1);
    }
    free(st.queue);
    free(st.url);
    free(st.token);
    free(st.url_file);
    free(st.path);
    st.queue = NULL;
    st.url = st.token = st.url_file = st.path = NULL;
    st.head = st.len = st.cap = st.bytes = 0;
    st.ready = st.http = st.broken = st.failures = 0;
    st.next_try = 0;
}

static void at_exit(void)
{
    const char *t = getenv("SWEEP_FLUSH_TIMEOUT");
    char *end;
    double timeout = t ? strtod(t, &end) : 10.0;

    if (!t || end == t || !(timeout >= 0))
        timeout = 10.0;
    sweep_report_finish(timeout);
}

int sweep_report_should_stop(void)
{
    return st.stop;
}

void sweep_report_set_budget(double seconds)
{
    st.budget = seconds > 0 ? seconds : 0;
}

const char *sweep_report_error(void)
{
    return st.error;
}
