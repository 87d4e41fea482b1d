/*
 * wandb_stream.c - a run's history, summary and end, as W&B's file_stream
 * takes them: POST {base}/files/{entity}/{project}/{run}/file_stream with
 * {"files": {"wandb-history.jsonl": {"offset": N, "content": [LINE...]},
 * "wandb-summary.json": {"offset": 0, "content": [SUMMARY]}}, "uploaded":
 * [...], "complete": true, "exitcode": N}.
 *
 * Each history line is a JSON object written here, not by a JSON library:
 * NaN, Infinity and -Infinity are bare tokens inside the line, as Python's
 * json writes them and W&B reads them. `offset` is the number of the first
 * line sent, so lines are placed, never appended blindly. A long history
 * goes in several requests, each under the session's size limit; the last
 * one carries the summary, the uploaded files and the run's end.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/wandb_internal.h"

/* Appends `v` in decimal; printf is too slow for a million lines. */
static void put_int(sw_buf *b, int64_t v)
{
    char tmp[24], *p = tmp + sizeof(tmp);
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    sw_buf_put(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

#define EXACT_INT 9007199254740992.0 /* 2^53 */

/* Writes `v` with the fewest decimals (up to 15) that read back as `v`;
 * false when it needs more. Most metrics were printed by a trainer with
 * a few digits: this finds them without printf. m / 10^k is rounded
 * once, as strtod rounds "m e-k", so the check is exact. */
static bool put_short(sw_buf *b, double v)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3, 1e4,  1e5,
                                   1e6,  1e7,  1e8,  1e9, 1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15};
    char tmp[48], *p = tmp + sizeof(tmp);
    double m = 0;
    uint64_t u;
    int k;

    for (k = 1; k < 16 && fabs(v) * pow10[k] < EXACT_INT; k++)
        if ((m = nearbyint(v * pow10[k])) / pow10[k] == v)
            break;
    if (k == 16 || !(fabs(v) * pow10[k] < EXACT_INT))
        return false;
    u = (uint64_t)fabs(m);
    for (int i = 0; i < k || u; i++) {
        *--p = (char)('0' + u % 10);
        u /= 10;
        if (i == k - 1)
            *--p = '.';
    }
    if (*p == '.')
        *--p = '0';
    if (v < 0)
        *--p = '-';
    sw_buf_put(b, p, (size_t)(tmp + sizeof(tmp) - p));
    return true;
}

/* A number as JSON would have it, plus W&B's three bare tokens: an
 * integer as one, a short decimal as one, else the shorter of 15 or 17
 * significant digits that reads back the same. */
static void put_number(sw_buf *b, double v)
{
    char tmp[40];
    int n;

    if (v == floor(v) && fabs(v) < EXACT_INT && (v != 0 || !signbit(v))) {
        put_int(b, (int64_t)v);
        return;
    }
    if (v != 0 && put_short(b, v))
        return;
    if (isnan(v)) {
        sw_buf_put(b, "NaN", 3);
        return;
    }
    if (isinf(v)) {
        sw_buf_puts(b, v < 0 ? "-Infinity" : "Infinity");
        return;
    }
    n = snprintf(tmp, sizeof(tmp), "%.15g", v);
    if (strtod(tmp, NULL) != v)
        n = snprintf(tmp, sizeof(tmp), "%.17g", v);
    sw_buf_put(b, tmp, (size_t)n);
}

/* Names W&B keeps for itself in a history line; a metric so named would
 * be overwritten, so it is left out. */
static bool reserved(const char *name)
{
    return name[0] == '_' &&
           (strcmp(name, "_step") == 0 || strcmp(name, "_runtime") == 0 ||
            strcmp(name, "_timestamp") == 0);
}

/* Appends seconds with three decimals: milliseconds are enough for
 * _runtime and _timestamp, and printf is slow. */
static void put_seconds(sw_buf *b, double v)
{
    int64_t ms;
    char frac[4];

    if (!(fabs(v) < 9e12)) {
        put_number(b, v);
        return;
    }
    ms = llround(v * 1000);
    if (ms < 0) {
        sw_buf_putc(b, '-');
        ms = -ms;
    }
    put_int(b, ms / 1000);
    frac[0] = '.';
    frac[1] = (char)('0' + ms / 100 % 10);
    frac[2] = (char)('0' + ms / 10 % 10);
    frac[3] = (char)('0' + ms % 10);
    sw_buf_put(b, frac, 4);
}

static void put_key(sw_buf *b, const char *name, bool first)
{
    if (!first)
        sw_buf_put(b, ", ", 2);
    sw_wandb__json_str(b, name, strlen(name));
    sw_buf_put(b, ": ", 2);
}

static double runtime_of(const sw_wandb_run *run, double t)
{
    return run->started_at > 0 && t > run->started_at ? t - run->started_at : 0;
}

/* Each history line's _step: the trainer's own step when it reported
 * one (as wandb.log(step=s) sets _step = s), else the line before's + 1
 * (0 for the first); a step that does not go up (W&B drops a line whose
 * _step is not above the last) is the line before's + 1 too. Lines only
 * grow at the end, so a line keeps its _step on every export. The caller
 * frees the array. */
static int64_t *steps_of(const sw_wandb_run *run)
{
    int64_t *steps = sw_calloc(run->n_rows ? run->n_rows : 1, sizeof(int64_t));
    int64_t last = -1;

    for (size_t i = 0; i < run->n_rows; i++) {
        int64_t s = run->rows[i].step;

        last = s > last ? s : last + 1;
        steps[i] = last;
    }
    return steps;
}

/* History line `i` of `run` as a JSON object; its _step is steps[i]. */
static void put_row(sw_buf *b, const sw_wandb_run *run, size_t i,
                    const int64_t *steps)
{
    const sw_wandb_row *r = &run->rows[i];
    bool first = true;

    sw_buf_putc(b, '{');
    for (size_t k = 0; k < r->n_values; k++) {
        if (reserved(r->values[k].name))
            continue;
        put_key(b, r->values[k].name, first);
        put_number(b, r->values[k].has_value ? r->values[k].value : NAN);
        first = false;
    }
    /* the trainer's step is the line's _step, as wandb.log(step=s) makes
     * it, and is not a metric of its own; only a step that did not go up
     * (its line got the last _step + 1) is kept, as `step` */
    if (r->step >= 0 && r->step != steps[i]) {
        put_key(b, "step", first);
        put_int(b, r->step);
        first = false;
    }
    put_key(b, "_step", first);
    put_int(b, steps[i]);
    sw_buf_puts(b, ", \"_runtime\": ");
    put_seconds(b, runtime_of(run, r->time));
    sw_buf_puts(b, ", \"_timestamp\": ");
    put_seconds(b, r->time);
    sw_buf_putc(b, '}');
}

/* The summary: each metric's last value, then _step, _runtime and
 * _timestamp of the last line. */
static void put_summary(sw_buf *b, const sw_wandb_run *run,
                        const int64_t *steps)
{
    const sw_wandb_row *last = run->n_rows ? &run->rows[run->n_rows - 1] : NULL;
    bool first = true;

    sw_buf_putc(b, '{');
    for (size_t k = 0; k < run->n_summary; k++) {
        if (reserved(run->summary[k].name))
            continue;
        put_key(b, run->summary[k].name, first);
        put_number(b, run->summary[k].has_value ? run->summary[k].value : NAN);
        first = false;
    }
    if (last) {
        put_key(b, "_step", first);
        put_int(b, steps[run->n_rows - 1]);
        sw_buf_puts(b, ", \"_runtime\": ");
        put_seconds(b, runtime_of(run, last->time));
        sw_buf_puts(b, ", \"_timestamp\": ");
        put_seconds(b, last->time);
    }
    sw_buf_putc(b, '}');
}

/* What the last request adds after the history: the summary file, the
 * uploaded files and the run's end. Starts with the summary's entry in
 * "files" (the caller closes "files" before it when there is no
 * history). */
static void put_tail(sw_buf *b, const sw_wandb_run *run, unsigned uploaded,
                     bool after_history, const int64_t *steps)
{
    sw_buf summary = SW_BUF_INIT;

    put_summary(&summary, run, steps);
    sw_buf_printf(b, "%s\"wandb-summary.json\": {\"offset\": 0, \"content\": [",
                  after_history ? ", " : "");
    sw_wandb__json_str(b, summary.ptr, summary.len);
    sw_buf_puts(b, "]}}");
    if (uploaded)
        sw_buf_printf(
            b, ", \"uploaded\": [%s%s%s]",
            uploaded & SW_WANDB__META ? "\"wandb-metadata.json\"" : "",
            uploaded == (SW_WANDB__META | SW_WANDB__PATCH) ? ", " : "",
            uploaded & SW_WANDB__PATCH ? "\"diff.patch\"" : "");
    if (run->ended)
        sw_buf_printf(b, ", \"complete\": true, \"exitcode\": %d",
                      run->exit_code);
    sw_buf_putc(b, '}');
    sw_buf_dispose(&summary);
}

/* Fills `body` with lines from *next on, as many as fit beside a tail of
 * `tail_len` bytes; advances *next. */
static int fill(sw_wandb *w, const sw_wandb_run *run, sw_buf *body,
                size_t *next, size_t tail_len, const int64_t *steps)
{
    sw_buf row = SW_BUF_INIT;
    size_t first = *next, mark;
    int error = SW_OK;

    sw_buf_printf(body,
                  "{\"files\": {\"wandb-history.jsonl\": {\"offset\": "
                  "%zu, \"content\": [",
                  first);
    while (*next < run->n_rows) {
        row.len = 0;
        put_row(&row, run, *next, steps);
        mark = body->len;
        if (*next > first)
            sw_buf_put(body, ", ", 2);
        sw_wandb__json_str(body, row.ptr, row.len);
        if (body->len + tail_len + 8 > w->max_request) {
            body->len = mark;
            break;
        }
        (*next)++;
    }
    if (*next == first)
        error = sw_error_set(SW_EINVALID,
                             "run %s: history line %zu alone is over the "
                             "%zu-byte request limit",
                             run->id, first, w->max_request);
    sw_buf_puts(body, "]}");
    sw_buf_dispose(&row);
    return error;
}

static int post(sw_wandb *w, const char *url, const sw_buf *body)
{
    sw_buf answer = SW_BUF_INIT;
    int error =
        sw_wandb__send(w,
                       &(sw_wandb__req){"POST", url, NULL, 0, true, body->ptr,
                                        body->len, "file_stream"},
                       &answer);

    sw_buf_dispose(&answer);
    return error;
}

int sw_wandb__stream(sw_wandb *w, const sw_wandb_run *run, const char *name,
                     unsigned uploaded, sw_wandb_mark *mark,
                     sw_wandb_mark_fn fn, void *ctx)
{
    char *url =
        sw_aprintf("%s/files/%s/%s/file_stream", w->base, w->path, name);
    sw_buf body = SW_BUF_INIT, tail = SW_BUF_INIT;
    size_t next = (size_t)mark->history;
    int64_t *steps = steps_of(run);
    bool last = false;
    int error = SW_OK;

    put_tail(&tail, run, uploaded, true, steps);
    while (!last && error == SW_OK) {
        body.len = 0;
        if (next < run->n_rows) {
            if ((error = fill(w, run, &body, &next, tail.len, steps)) < 0)
                break;
            last = next == run->n_rows;
            if (last)
                sw_buf_put(&body, tail.ptr, tail.len);
            else
                sw_buf_puts(&body, "}}");
        } else {
            sw_buf_puts(&body, "{\"files\": {");
            put_tail(&body, run, uploaded, false, steps);
            last = true;
        }
        if ((error = post(w, url, &body)) < 0)
            break;
        mark->rows_sent += (int64_t)next - mark->history;
        mark->history = (int64_t)next;
        if (last) {
            mark->summary = (int64_t)run->n_rows;
            mark->ended = run->ended;
            mark->patch = mark->patch || (uploaded & SW_WANDB__PATCH);
            mark->meta = mark->meta || (uploaded & SW_WANDB__META);
        }
        if (fn)
            error = fn(ctx, mark);
    }
    sw_buf_dispose(&tail);
    sw_buf_dispose(&body);
    free(steps);
    free(url);
    return error;
}
