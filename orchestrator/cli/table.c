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

/* A cell's text: for people (`human`) with "-" for null and, unless
 * `exact`, floats shortened; else as CSV wants it. */
static char *cell_text(const sw_value *v, bool human, bool exact)
{
    sw_buf b = SW_BUF_INIT;

    if (v->type == SW_NULL)
        return sw_strdup(human ? "-" : "");
    if (human && !exact && v->type == SW_FLOAT && fabs(v->u.f) >= 1e6 &&
        fabs(v->u.f) < 1e15)
        fixed(&b, v->u.f); /* a time or a count: every digit shown */
    else if (human && !exact && v->type == SW_FLOAT)
        sw_buf_printf(&b, "%.6g", v->u.f);
    else if (v->type == SW_LIST || v->type == SW_MAP)
        sw_value_write_json(&b, v, false);
    else
        sw_value_write_py(&b, v);
    return sw_buf_detach(&b);
}

/* Each cell's text is made once, for its column's width and to print. */
static void print_human(const sw_table *t, FILE *out)
{
    size_t *w = sw_calloc(t->ncols, sizeof(size_t)), r, c, n;
    size_t cells = t->nrows * t->ncols;
    char **s = sw_calloc(cells ? cells : 1, sizeof(char *));

    for (c = 0; c < t->ncols; c++)
        w[c] = strlen(t->cols[c]);
    for (r = 0; r < cells; r++) {
        s[r] = cell_text(t->cells[r], true, t->exact);
        n = strlen(s[r]);
        c = r % t->ncols;
        w[c] = n > w[c] ? n : w[c];
    }
    for (c = 0; c < t->ncols; c++)
        fprintf(out, "%-*s%s", c + 1 < t->ncols ? (int)w[c] : 0, t->cols[c],
                c + 1 < t->ncols ? "  " : "\n");
    for (r = 0; r < cells; r++) {
        c = r % t->ncols;
        if (c + 1 < t->ncols)
            fprintf(out, "%-*s  ", (int)w[c], s[r]);
        else
            fprintf(out, "%s\n", s[r]);
        free(s[r]);
    }
    free(s);
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

static void print_json(const sw_table *t, FILE *out)
{
    sw_buf b = SW_BUF_INIT;
    size_t r, c;

    for (r = 0; r < t->nrows; r++) {
        b.len = 0;
        sw_buf_putc(&b, '{');
        for (c = 0; c < t->ncols; c++) {
            sw_value *k = sw_value_str(t->cols[c]);
            if (c)
                sw_buf_puts(&b, ", ");
            sw_value_write_json(&b, k, false);
            sw_buf_puts(&b, ": ");
            sw_value_write_json(&b, t->cells[r * t->ncols + c], false);
            sw_value_free(k);
        }
        sw_buf_putc(&b, '}');
        fprintf(out, "%s\n", sw_buf_cstr(&b));
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
