/*
 * error.c - the last-error message and the never-failing allocators.
 *
 * The message lives in a thread-local buffer, so setting it never
 * allocates and never fails; a message longer than the buffer is cut.
 */
#include "sweeps/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Thread_local char last[1024];

int sw_error_set(int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(last, sizeof(last), fmt, ap);
    va_end(ap);
    return code;
}

const char *sw_error_last(void)
{
    return last[0] ? last : "no error";
}

void sw_error_clear(void)
{
    last[0] = '\0';
}

static void *check(void *p)
{
    if (!p) {
        fputs("sweep: out of memory\n", stderr);
        abort();
    }
    return p;
}

void *sw_malloc(size_t n)
{
    return check(malloc(n ? n : 1));
}

void *sw_calloc(size_t count, size_t size)
{
    return check(calloc(count ? count : 1, size ? size : 1));
}

void *sw_realloc(void *p, size_t n)
{
    return check(realloc(p, n ? n : 1));
}

void sw_grow(void *pp, size_t *cap, size_t need, size_t size)
{
    void **p = pp;
    size_t n = *cap ? *cap : 4;

    if (need <= *cap)
        return;
    while (n < need)
        n *= 2;
    *p = sw_realloc(*p, n * size);
    *cap = n;
}

char *sw_strdup(const char *s)
{
    return sw_strndup(s, strlen(s));
}

char *sw_strndup(const char *s, size_t n)
{
    char *d = sw_malloc(n + 1);

    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *sw_aprintf(const char *fmt, ...)
{
    va_list ap, ap2;
    int n;
    char *s;

    va_start(ap, fmt);
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    s = sw_malloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return s;
}

int sw_error_io_code(int err)
{
    return err == ENOSPC || err == EDQUOT || err == EIO || err == EROFS
               ? SW_ESTORAGE
               : SW_EIO;
}

int sw_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    ssize_t w;

    while (n > 0) {
        w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int sw_read_all(int fd, void *buf, size_t n)
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
