/*
 * diag.c - the list of located problems of a sweep file.
 */
#include "sweeps/diag.h"

#include <stdarg.h>
#include <stdlib.h>

#include "sweeps/buf.h"

void sw_diags_init(sw_diags *d, const char *file)
{
    d->file = sw_strdup(file ? file : "<input>");
    d->items = NULL;
    d->len = d->cap = d->errors = 0;
}

void sw_diags_dispose(sw_diags *d)
{
    size_t i;

    for (i = 0; i < d->len; i++) {
        free(d->items[i].path);
        free(d->items[i].msg);
    }
    free(d->items);
    free(d->file);
    d->items = NULL;
    d->file = NULL;
    d->len = d->cap = d->errors = 0;
}

void sw_diags_add(sw_diags *d, bool warning, int line, int col,
                  const char *path, const char *fmt, ...)
{
    sw_buf b = SW_BUF_INIT;
    va_list ap;
    sw_diag *g;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n > 0) {
        sw_grow(&b.ptr, &b.cap, (size_t)n + 1, 1);
        va_start(ap, fmt);
        vsnprintf(b.ptr, (size_t)n + 1, fmt, ap);
        va_end(ap);
        b.len = (size_t)n;
    }
    sw_grow(&d->items, &d->cap, d->len + 1, sizeof(*d->items));
    g = &d->items[d->len++];
    g->warning = warning;
    g->line = line;
    g->col = col;
    g->path = sw_strdup(path ? path : "");
    g->msg = sw_buf_detach(&b);
    if (!warning)
        d->errors++;
}

static void format(sw_buf *b, const sw_diags *d, const sw_diag *g)
{
    sw_buf_puts(b, d->file);
    if (g->line > 0)
        sw_buf_printf(b, ":%d:%d", g->line, g->col);
    sw_buf_puts(b, ": ");
    if (g->warning)
        sw_buf_puts(b, "warning: ");
    if (g->path[0])
        sw_buf_printf(b, "%s: ", g->path);
    sw_buf_puts(b, g->msg);
}

void sw_diags_print(const sw_diags *d, FILE *out)
{
    sw_buf b = SW_BUF_INIT;
    size_t i;

    for (i = 0; i < d->len; i++) {
        b.len = 0;
        format(&b, d, &d->items[i]);
        fprintf(out, "%s\n", sw_buf_cstr(&b));
    }
    sw_buf_dispose(&b);
}

char *sw_diags_first_error(const sw_diags *d)
{
    sw_buf b = SW_BUF_INIT;
    size_t i;

    for (i = 0; i < d->len; i++) {
        if (!d->items[i].warning) {
            format(&b, d, &d->items[i]);
            break;
        }
    }
    return sw_buf_detach(&b);
}
