/*
 * table.c - printing rows of values. Human tables align columns and show
 * floats with 6 significant digits (a million or more: every digit of
 * the whole part, three decimals), unless the table is `exact`; CSV,
 * JSON and exact tables keep each number whole, the shortest decimal
 * that reads back the same.
 */
#include "orchestrator/cli/table.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

void sw_table_init(sw_table *t, size_t ncols, const char *const *cols)
{
    size_t i;

    memset(t, 0, sizeof(*t));
    t->ncols = ncols;
    t->cols = sw_calloc(ncols, sizeof(char *));
    for (i = 0; i < ncols; i++)
        t->cols[i] = sw_strdup(cols[i]);
}

void sw_table_dispose(sw_table *t)
{
    size_t i;

    for (i = 0; i < t->ncols; i++)
        free(t->cols[i]);
    for (i = 0; i < t->nrows * t->ncols; i++)
        sw_value_free(t->cells[i]);
    free(t->cols);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}

void sw_table_add(sw_table *t, sw_value **row)
{
    size_t i, need = (t->nrows + 1) * t->ncols;

    sw_grow(&t->cells, &t->cap, need, sizeof(sw_value *));
    for (i = 0; i < t->ncols; i++)
        t->cells[t->nrows * t->ncols + i] = row[i];
    t->nrows++;
}

/* A large float with its whole part in full and at most three
 * decimals, trailing zeros dropped: 1796175056.303, not 1.79618e+09. */
static void fixed(sw_buf *b, double f)
{
    size_t start = b->len;

    sw_buf_printf(b, "%.3f", f);
    while (b->len > start && b->ptr[b->len - 1] == '0')
        b->len--;
    if (b->len > start && b->ptr[b->len - 1] == '.')
        b->len--;
    b->ptr[b->len] = '\0';
}

/* Appends a cell's text to `b`: for people (`human`) with "-" for null
 * and, unless `exact`, floats shortened; else as CSV wants it. */
static void cell_put(sw_buf *b, const sw_value *v, bool human, bool exact)
{
    if (v->type == SW_NULL)
        sw_buf_puts(b, human ? "-" : "");
    else if (human && !exact && v->type == SW_FLOAT && fabs(v->u.f) >= 1e6 &&
             fabs(v->u.f) < 1e15)
        fixed(b, v->u.f); /* a time or a count: every digit shown */
    else if (human && !exact && v->type == SW_FLOAT)
        sw_float_write_g6(b, v->u.f);
    else if (v->type == SW_STR)
        sw_buf_puts(b, v->u.s);
    else if (v->type == SW_LIST || v->type == SW_MAP)
        sw_value_write_json(b, v, false);
    else
        sw_value_write_py(b, v);
}

static char *cell_text(const sw_value *v, bool human, bool exact)
{
    sw_buf b = SW_BUF_INIT;

    cell_put(&b, v, human, exact);
    return sw_buf_detach(&b);
}

/* Appends one cell of a human table to its line: padded to `width` and
 * two spaces, or with width 0 the last of its line. Lines are written
 * whole: fprintf's "%-*s" or a write per cell cost 100,000 format parses
 * or locked calls in `sweep ls` of 10,000 runs. */
static void put_cell(sw_buf *line, const char *text, size_t width)
{
    size_t n = strlen(text), pad;

    sw_buf_put(line, text, n);
    if (width == 0) {
        sw_buf_putc(line, '\n');
        return;
    }
    pad = (width > n ? width - n : 0) + 2;
    sw_grow(&line->ptr, &line->cap, line->len + pad + 1, 1);
    memset(line->ptr + line->len, ' ', pad);
    line->len += pad;
    line->ptr[line->len] = '\0';
}

/* Each cell's text is made once, for its column's width and to print. */
/* Each cell's text is made once, for its column's width and to print,
 * all of them in one buffer (at[r]: where cell r starts). */
static void print_human(const sw_table *t, FILE *out)
{
    size_t *w = sw_calloc(t->ncols, sizeof(size_t)), r, c, n;
    size_t cells = t->nrows * t->ncols;
    size_t *at = sw_calloc(cells ? cells : 1, sizeof(size_t));
    sw_buf b = SW_BUF_INIT, line = SW_BUF_INIT;

    for (c = 0; c < t->ncols; c++)
        w[c] = strlen(t->cols[c]);
    for (r = 0; r < cells; r++) {
        at[r] = b.len;
        cell_put(&b, t->cells[r], true, t->exact);
        n = b.len - at[r];
        sw_buf_putc(&b, '\0');
        c = r % t->ncols;
        w[c] = n > w[c] ? n : w[c];
    }
    for (c = 0; c < t->ncols; c++)
        put_cell(&line, t->cols[c], c + 1 < t->ncols ? w[c] : 0);
    for (r = 0; r < cells; r++) {
        c = r % t->ncols;
        put_cell(&line, b.ptr + at[r], c + 1 < t->ncols ? w[c] : 0);
        if (c + 1 == t->ncols || line.len >= 1 << 16) {
            fwrite(line.ptr, 1, line.len, out);
            line.len = 0;
        }
    }
    if (line.len)
        fwrite(line.ptr, 1, line.len, out);
    sw_buf_dispose(&line);
    sw_buf_dispose(&b);
    free(at);
    free(w);
}

static void csv_field(FILE *out, const char *s)
{
    const char *p;

    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (p = s; *p; p++) {
        if (*p == '"')
            fputc('"', out);
        fputc(*p, out);
    }
    fputc('"', out);
}

static void print_csv(const sw_table *t, FILE *out)
{
    size_t r, c;
    char *s;

    for (c = 0; c < t->ncols; c++) {
        csv_field(out, t->cols[c]);
        fputc(c + 1 < t->ncols ? ',' : '\n', out);
    }
    for (r = 0; r < t->nrows; r++)
        for (c = 0; c < t->ncols; c++) {
            s = cell_text(t->cells[r * t->ncols + c], false, true);
            csv_field(out, s);
            fputc(c + 1 < t->ncols ? ',' : '\n', out);
            free(s);
        }
}

/* A cell in JSON: a string of a JSON column as it is, else encoded. */
static void put_json(sw_buf *b, const sw_table *t, size_t c, const sw_value *v)
{
    if (c < 32 && (t->json_cols >> c & 1) && v->type == SW_STR)
        sw_buf_puts(b, v->u.s);
    else
        sw_value_write_json(b, v, false);
}

static void print_json(const sw_table *t, FILE *out)
{
    sw_buf b = SW_BUF_INIT;
    size_t r, c;

    for (r = 0; r < t->nrows; r++) {
        b.len = 0;
        sw_buf_putc(&b, '{');
        for (c = 0; c < t->ncols; c++) {
            if (c)
                sw_buf_puts(&b, ", ");
            sw_json_write_string(&b, t->cols[c]);
            sw_buf_puts(&b, ": ");
            put_json(&b, t, c, t->cells[r * t->ncols + c]);
        }
        sw_buf_puts(&b, "}\n");
        fwrite(b.ptr, 1, b.len, out);
    }
    sw_buf_dispose(&b);
}

void sw_table_print(const sw_table *t, sw_table_format f, FILE *out)
{
    if (f == SW_TABLE_CSV)
        print_csv(t, out);
    else if (f == SW_TABLE_JSON)
        print_json(t, out);
    else
        print_human(t, out);
}
