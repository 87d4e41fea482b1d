/*
 * sim_curve.c - what a simulated attempt prints, and when.
 *
 * A surrogate prints its whole learning curve at once; this file turns
 * that output into the lines the simulated cluster replays (sim.c), as a
 * real trial would print them:
 *   - after its start-up: the launch's cost (the executor's, measured
 *     or the file's) plus the trial's own (imports, loading data), the
 *     `_startup` of its first @metrics line that has one;
 *   - each @metrics line `_seconds` after the one before (1 when absent;
 *     other lines, and @metrics lines of control keys only, take none);
 *   - told to train until an iteration (SWEEP_TRAIN_UNTIL), it exits
 *     after that step's line; resumed from its checkpoint, it does not
 *     train again the steps the checkpoint holds: their lines are
 *     skipped and take no time. So a surrogate that prints its whole
 *     curve from step 1 pauses and resumes as a checkpointing trainer;
 *   - read by the engine `_read_delay` (or the default) after it is
 *     printed, and at the latest when the process exits.
 * The control keys are taken out of the lines the engine reads: they
 * are the simulation's, not metrics.
 *
 * The lines are scanned as text, not parsed as JSON: a key is found as
 * `"name"` followed by `:`, so a key inside a string value would count;
 * the engine's own parsing of the line decides what is stored.
 */
#include "backends/sim_curve.h"
#include "sweeps/buf.h"
#include "sweeps/error.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define TAG "@metrics"
#define TAG_LEN (sizeof(TAG) - 1)

static const char *const control[] = {"_seconds", "_startup", "_read_delay"};

static bool is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r';
}

static bool is_metrics(const char *p, size_t n)
{
    return n > TAG_LEN && memcmp(p, TAG, TAG_LEN) == 0 &&
           (p[TAG_LEN] == ' ' || p[TAG_LEN] == '\t');
}

/* Where `"key":` starts in the line p[0..n), NULL when it has none;
 * *value is where the value after the colon starts. */
static const char *find_key(const char *p, size_t n, const char *key,
                            const char **value)
{
    size_t k = strlen(key);
    const char *end = p + n, *q = p, *v;

    while ((q = memchr(q, '"', (size_t)(end - q))) != NULL) {
        if ((size_t)(end - q) < k + 2) /* room for "key" */
            return NULL;
        v = q + 1 + k;
        if (memcmp(q + 1, key, k) == 0 && *v == '"' &&
            (q == p || q[-1] != '\\')) {
            for (v++; v < end && is_blank(*v); v++)
                ;
            if (v < end && *v == ':') {
                for (v++; v < end && is_blank(*v); v++)
                    ;
                *value = v;
                return q;
            }
        }
        q++;
    }
    return NULL;
}

/* The number of `"key":` in the line; false when absent or not a
 * number. *stop, when not NULL, is where the number ends. */
static bool key_number(const char *p, size_t n, const char *key, double *out,
                       const char **stop)
{
    const char *v, *end = p + n;
    char num[64], *e;
    size_t m;

    if (!find_key(p, n, key, &v))
        return false;
    m = (size_t)(end - v) < sizeof(num) - 1 ? (size_t)(end - v)
                                            : sizeof(num) - 1;
    memcpy(num, v, m);
    num[m] = '\0';
    *out = strtod(num, &e);
    if (e == num)
        return false;
    if (stop)
        *stop = v + (e - num);
    return true;
}

/* The seconds a @metrics line took: its non-negative finite `_seconds`,
 * else 1. */
static double line_seconds(const char *p, size_t n)
{
    double v;

    return key_number(p, n, "_seconds", &v, NULL) && isfinite(v) && v >= 0 ? v
                                                                           : 1;
}

/* Takes `"key": number` out of the line in `b`, with the comma that
 * joined it to its neighbour. */
static void strip_key(sw_buf *b, const char *key)
{
    const char *p = b->ptr, *end = p + b->len, *k, *v;
    size_t a, z;
    double ignored;

    if (!(k = find_key(p, b->len, key, &v)) ||
        !key_number(p, b->len, key, &ignored, &v))
        return;
    a = (size_t)(k - p);
    for (; v < end && is_blank(*v); v++)
        ;
    if (v < end && *v == ',') { /* a key follows: take our comma */
        for (v++; v < end && is_blank(*v); v++)
            ;
    } else { /* the last key: take the comma before it */
        while (a > 0 && is_blank(p[a - 1]))
            a--;
        if (a > 0 && p[a - 1] == ',')
            a--;
    }
    z = (size_t)(v - p);
    memmove(b->ptr + a, b->ptr + z, b->len - z + 1);
    b->len -= z - a;
}

/* Whether the @metrics line in `b` holds no key: `@metrics {}`. */
static bool left_empty(const sw_buf *b)
{
    const char *p = b->ptr + TAG_LEN, *end = b->ptr + b->len;

    for (; p < end && is_blank(*p); p++)
        ;
    if (p == end || *p++ != '{')
        return false;
    for (; p < end && is_blank(*p); p++)
        ;
    return p < end && *p == '}';
}

/* The start-up the surrogate declared (added to the launch's), and its
 * read delay (over `sh`'s). */
static void declared(const char *raw, size_t len, double *startup,
                     double *read_delay)
{
    bool got_startup = false, got_delay = false;
    size_t pos = 0, stop;
    const char *nl;
    double v;

    while (pos < len && !(got_startup && got_delay)) {
        nl = memchr(raw + pos, '\n', len - pos);
        stop = nl ? (size_t)(nl - raw) : len;
        if (is_metrics(raw + pos, stop - pos)) {
            if (!got_startup &&
                key_number(raw + pos, stop - pos, "_startup", &v, NULL) &&
                isfinite(v) && v >= 0)
                *startup = v, got_startup = true;
            if (!got_delay &&
                key_number(raw + pos, stop - pos, "_read_delay", &v, NULL) &&
                isfinite(v) && v >= 0)
                *read_delay = v, got_delay = true;
        }
        pos = stop + 1;
    }
}

static void add_line(sw_sim_curve *c, sw_buf *text, const sw_buf *line,
                     double at, int64_t step, size_t *cap)
{
    sw_buf_put(text, line->ptr, line->len);
    sw_buf_putc(text, '\n');
    sw_grow(&c->ends, &cap[0], c->n + 1, sizeof(*c->ends));
    sw_grow(&c->at, &cap[1], c->n + 1, sizeof(*c->at));
    sw_grow(&c->step, &cap[2], c->n + 1, sizeof(*c->step));
    c->ends[c->n] = text->len;
    c->step[c->n] = step;
    c->at[c->n++] = at;
}

void sw_sim__shape(sw_sim_curve *c, const char *raw, size_t len,
                   const sw_sim_shape *sh)
{
    sw_buf text = SW_BUF_INIT, line = SW_BUF_INIT;
    size_t pos = 0, stop, cap[3] = {0, 0, 0}, i;
    double own = 0, t, v;
    int64_t ordinal = 0, step = 0;
    bool metrics;
    const char *nl;

    memset(c, 0, sizeof(*c));
    c->read_delay = sh->read_delay;
    declared(raw, len, &own, &c->read_delay);
    t = sh->start + sh->startup + own;
    for (; pos < len; pos = stop + (nl != NULL)) {
        nl = memchr(raw + pos, '\n', len - pos);
        stop = nl ? (size_t)(nl - raw) : len;
        line.len = 0;
        sw_buf_put(&line, raw + pos, stop - pos);
        metrics = is_metrics(raw + pos, stop - pos);
        if (metrics) {
            for (i = 0; i < sizeof(control) / sizeof(*control); i++)
                strip_key(&line, control[i]);
            if (left_empty(&line))
                continue; /* control keys only: no step, no time */
            ordinal++;
            step = key_number(raw + pos, stop - pos, "step", &v, NULL) &&
                           isfinite(v)
                       ? (int64_t)v
                       : ordinal;
            if (sh->until > 0 && step > sh->until)
                break; /* it saved its checkpoint and exited */
        }
        if ((metrics ? step : step + 1) <= sh->from)
            continue; /* in its checkpoint: not trained again */
        if (metrics)
            t += line_seconds(raw + pos, stop - pos);
        add_line(c, &text, &line, t, step, cap);
    }
    c->end_at = t;
    c->len = text.len;
    c->text = sw_buf_detach(&text);
    sw_buf_dispose(&line);
}

void sw_sim__read_times(sw_sim_curve *c)
{
    size_t i;

    free(c->seen);
    c->seen = sw_calloc(c->n ? c->n : 1, sizeof(*c->seen));
    for (i = 0; i < c->n; i++)
        c->seen[i] = fmin(c->at[i] + c->read_delay, c->end_at);
}

int64_t sw_sim__last_step(const char *text, size_t len)
{
    int64_t count = 0, last = -1;
    size_t pos = 0, stop;
    const char *nl;
    double v;

    for (; pos < len; pos = stop + 1) {
        nl = memchr(text + pos, '\n', len - pos);
        stop = nl ? (size_t)(nl - text) : len;
        if (!is_metrics(text + pos, stop - pos))
            continue;
        count++;
        if (key_number(text + pos, stop - pos, "step", &v, NULL) && isfinite(v))
            last = (int64_t)v;
    }
    return last >= 0 ? last : count;
}

void sw_sim__curve_dispose(sw_sim_curve *c)
{
    free(c->text);
    free(c->ends);
    free(c->at);
    free(c->seen);
    free(c->step);
    memset(c, 0, sizeof(*c));
}
