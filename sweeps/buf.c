/*
 * buf.c - growable byte strings; the invariant is ptr[len] == '\0' whenever
 * ptr is not NULL.
 */
#include "sweeps/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sw_buf_init(sw_buf *b)
{
    b->ptr = NULL;
    b->len = b->cap = 0;
}

void sw_buf_dispose(sw_buf *b)
{
    free(b->ptr);
    sw_buf_init(b);
}

void sw_buf_put(sw_buf *b, const char *s, size_t n)
{
    sw_grow(&b->ptr, &b->cap, b->len + n + 1, 1);
    memcpy(b->ptr + b->len, s, n);
    b->len += n;
    b->ptr[b->len] = '\0';
}

void sw_buf_puts(sw_buf *b, const char *s)
{
    sw_buf_put(b, s, strlen(s));
}

void sw_buf_putc(sw_buf *b, char c)
{
    sw_buf_put(b, &c, 1);
}

/* Formats into the room the buffer has, and only when that is too
 * little grows it and formats again: most calls format once. */
void sw_buf_printf(sw_buf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    int n;

    va_start(ap, fmt);
    va_copy(ap2, ap);
    n = vsnprintf(room ? b->ptr + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n >= room) {
        sw_grow(&b->ptr, &b->cap, b->len + (size_t)n + 1, 1);
        vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap2);
    }
    if (n > 0)
        b->len += (size_t)n;
    else if (room)
        b->ptr[b->len] = '\0'; /* as it was */
    va_end(ap2);
}

const char *sw_buf_cstr(const sw_buf *b)
{
    return b->ptr ? b->ptr : "";
}

char *sw_buf_detach(sw_buf *b)
{
    char *p = b->ptr ? b->ptr : sw_strdup("");

    sw_buf_init(b);
    return p;
}

char *sw_buf_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    sw_buf b = SW_BUF_INIT;
    char chunk[4096];
    size_t n;
    int failed;

    if (!f)
        return NULL;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        sw_buf_put(&b, chunk, n);
    failed = ferror(f);
    fclose(f);
    memset(chunk, 0, sizeof(chunk));
    if (failed) {
        sw_buf_dispose(&b);
        return NULL;
    }
    if (len)
        *len = b.len;
    return sw_buf_detach(&b);
}
