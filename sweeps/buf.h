/*
 * buf.h - a growable byte string, always NUL-terminated.
 *
 * The caller owns the struct (sw_buf_init / sw_buf_dispose); sw_buf_detach
 * hands the bytes over and leaves the buffer empty.
 */
#ifndef SW_BUF_H
#define SW_BUF_H

#include "sweeps/error.h"

typedef struct {
    char *ptr;
    size_t len;
    size_t cap;
} sw_buf;

#define SW_BUF_INIT                                                            \
    {                                                                          \
        NULL, 0, 0                                                             \
    }

void sw_buf_init(sw_buf *b);
void sw_buf_dispose(sw_buf *b);
void sw_buf_put(sw_buf *b, const char *s, size_t n);
void sw_buf_puts(sw_buf *b, const char *s);
void sw_buf_putc(sw_buf *b, char c);
void sw_buf_printf(sw_buf *b, const char *fmt, ...) SW_PRINTF(2, 3);
/* The contents, "" when empty; borrowed, valid until the next write. */
const char *sw_buf_cstr(const sw_buf *b);
/* Returns the contents (never NULL) and empties the buffer. */
char *sw_buf_detach(sw_buf *b);
/* The whole file at `path`, NUL-terminated, its length in *len (may be
 * NULL); NULL when it cannot be opened or read. The stack buffer it was
 * read through is wiped: the file may be a secret (a netrc). */
char *sw_buf_read_file(const char *path, size_t *len);

#endif
