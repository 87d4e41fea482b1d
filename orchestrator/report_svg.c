/*
 * report_svg.c - `sweep report --plot FILE.svg`: the sweep on one page,
 * written as plain SVG (no script, no external file), viewable in any
 * browser.
 *
 * A lane per device (a GPU or a MIG slice, as runs.gpus names it; CPU
 * trials get lanes of their own, one per trial running at once), a bar
 * per attempt on each device it held, as tall as its share (fractional
 * trials side by side stack up), coloured by how it ended; stopped and
 * failed attempts carry a mark inside their end. Below, the best value of
 * the sweep's metric so far, over the same time axis.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/report.h"
#include "sweeps/json.h"

#define W 1000.0    /* the plot's width */
#define LEFT 150.0  /* room for lane names */
#define LANE 40.0   /* a lane's height */
#define CURVE 160.0 /* the best-value panel's height */
#define MAX_LANES 512

typedef struct {
    double start, end, off, h;
} bar;

typedef struct {
    char *name;
    bar *bars;
    size_t n, cap;
} lane;

typedef struct {
    lane *lanes;
    size_t n, cap;
} lanes;

static const char *colour(sw_report_outcome o)
{
    switch (o) {
    case SW_ATT_FINISHED:
        return "#4c9a4c";
    case SW_ATT_STOPPED:
        return "#e39b2d";
    case SW_ATT_PAUSED: /* at a rung, its GPU given to another */
        return "#8a6cc1";
    case SW_ATT_CANCELED:
        return "#9a9a9a";
    case SW_ATT_RUNNING:
        return "#4a7fc1";
    default:
        return "#c84a4a";
    }
}

static void escaped(sw_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '&')
            sw_buf_puts(b, "&amp;");
        else if (*s == '<')
            sw_buf_puts(b, "&lt;");
        else if (*s == '>')
            sw_buf_puts(b, "&gt;");
        else if (*s == '"')
            sw_buf_puts(b, "&quot;");
        else if ((unsigned char)*s >= 0x20)
            sw_buf_putc(b, *s);
    }
}

static lane *lane_named(lanes *ls, const char *name)
{
    size_t i;

    for (i = 0; i < ls->n; i++)
        if (strcmp(ls->lanes[i].name, name) == 0)
            return &ls->lanes[i];
    if (ls->n == MAX_LANES)
        return NULL;
    sw_grow(&ls->lanes, &ls->cap, ls->n + 1, sizeof(*ls->lanes));
    memset(&ls->lanes[ls->n], 0, sizeof(*ls->lanes));
    ls->lanes[ls->n].name = sw_strdup(name);
    return &ls->lanes[ls->n++];
}

static bool overlaps(const bar *x, double start, double end, double off,
                     double h)
{
    return x->start < end && start < x->end && x->off < off + h &&
           off < x->off + x->h;
}

/* Places a bar of height h (a share, 0..1) at the lowest offset where it
 * overlaps no other bar of the lane (candidates: 0 and the tops of the
 * bars it meets in time); its offset. */
static double place(lane *l, double start, double end, double h)
{
    double cand[64], best = 0;
    size_t nc = 1, i, j;
    bool free_here;

    cand[0] = 0;
    for (i = 0; i < l->n && nc < 64; i++)
        if (l->bars[i].start < end && start < l->bars[i].end)
            cand[nc++] = l->bars[i].off + l->bars[i].h;
    best = INFINITY;
    for (i = 0; i < nc; i++) {
        free_here = true;
        for (j = 0; j < l->n && free_here; j++)
            free_here = !overlaps(&l->bars[j], start, end, cand[i], h);
        if (free_here && cand[i] < best)
            best = cand[i];
    }
    best = isinf(best) ? 0 : best;
    sw_grow(&l->bars, &l->cap, l->n + 1, sizeof(*l->bars));
    l->bars[l->n++] = (bar){start, end, best, h};
    return best;
}

/* A CPU trial's lane: the first "trial k" lane free at its start. */
static lane *cpu_lane(lanes *ls, double start)
{
    char name[32];
    size_t k, i;
    lane *l;

    for (k = 1;; k++) {
        snprintf(name, sizeof(name), "trial %zu", k);
        if (!(l = lane_named(ls, name)))
            return NULL;
        for (i = 0; i < l->n && l->bars[i].end <= start; i++)
            ;
        if (i == l->n)
            return l;
    }
}

typedef struct {
    const sw_report *r;
    double span;
} axis;

static double xat(const axis *ax, double t)
{
    return LEFT +
           (ax->span > 0 ? (t - ax->r->start) / ax->span : 0) * (W - LEFT - 20);
}

/* The bar's run, written on it: its id where the bar is wide enough
 * (about 6 px a character at this size), else its number alone (the id
 * after the sweep's), else nothing but the bar's title. */
static void bar_label(sw_buf *b, const char *id, double x, double y, double w,
                      double h)
{
    const char *dash = strrchr(id, '-');
    const char *text = (double)strlen(id) * 6 + 14 <= w ? id
                       : dash && (double)strlen(dash + 1) * 6 + 14 <= w
                           ? dash + 1
                           : NULL;

    if (!text || h < 9)
        return;
    sw_buf_printf(b,
                  "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#fff\""
                  " class=\"run\" data-run=\"",
                  x + 3, y);
    escaped(b, id);
    sw_buf_puts(b, "\">");
    escaped(b, text);
    sw_buf_puts(b, "</text>\n");
}

static void draw_bar(sw_buf *b, const axis *ax, const sw_report_data *d,
                     const sw_report_attempt *a, size_t li, double off,
                     double share)
{
    double x = xat(ax, a->start), w = fmax(1, xat(ax, a->end) - x);
    double h = (LANE - 4) * fmin(1, share), y = 40 + li * LANE + LANE - 2;

    y -= (LANE - 4) * off + h;
    sw_buf_printf(b,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\""
                  " fill=\"%s\" fill-opacity=\"0.85\" stroke=\"#fff\""
                  " stroke-width=\"0.5\"><title>",
                  x, y, w, h, colour(a->outcome));
    escaped(b, d->runs[a->run].id);
    sw_buf_printf(b, ": %s, ", sw_report_outcome_name(a->outcome));
    sw_report_put_duration(b, a->end - a->start, true);
    sw_buf_printf(b, ", share %g</title></rect>\n", share);
    bar_label(b, d->runs[a->run].id, x, y + h / 2 + 4, w, h);
    if (a->outcome != SW_ATT_FINISHED && a->outcome != SW_ATT_RUNNING &&
        a->outcome != SW_ATT_CANCELED)
        sw_buf_printf(b,
                      "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\""
                      " fill=\"#fff\" text-anchor=\"end\">%s</text>\n",
                      x + w - 2, y + h / 2 + 4,
                      a->outcome == SW_ATT_STOPPED  ? "&#9632;"
                      : a->outcome == SW_ATT_PAUSED ? "&#8214;"
                                                    : "&#10005;");
}

/* One attempt, on each device it held (or a CPU lane). */
static void draw_attempt(sw_buf *b, lanes *ls, const axis *ax,
                         const sw_report_data *d, const sw_report_attempt *a)
{
    sw_value *v = NULL, *devs, *sh;
    double share = 1;
    size_t i;
    lane *l;

    if (a->devices &&
        sw_json_parse(&v, a->devices, strlen(a->devices)) == SW_OK &&
        (devs = sw_value_map_get(v, "devices")) && devs->type == SW_LIST &&
        devs->u.list.len > 0) {
        if ((sh = sw_value_map_get(v, "share")))
            sw_value_number(sh, &share);
        for (i = 0; i < devs->u.list.len; i++) {
            if (devs->u.list.items[i]->type != SW_STR ||
                !(l = lane_named(ls, devs->u.list.items[i]->u.s)))
                continue;
            draw_bar(b, ax, d, a, (size_t)(l - ls->lanes),
                     place(l, a->start, a->end, fmin(1, share)), share);
        }
    } else if ((l = cpu_lane(ls, a->start))) {
        draw_bar(b, ax, d, a, (size_t)(l - ls->lanes),
                 place(l, a->start, a->end, 1), 1);
    }
    sw_value_free(v);
}

static int by_time(const void *x, const void *y)
{
    const sw_report_point *a = x, *b = y;

    return (a->time > b->time) - (a->time < b->time);
}

/* The best value any run logged so far (at any step: not a run's value,
 * docs/metrics.md) as a step line, in its panel at `top`. */
static void draw_best(sw_buf *b, const axis *ax, const sw_report_data *d,
                      double top)
{
    sw_report_point *p = malloc((d->n_points + 1) * sizeof(*p));
    double lo = INFINITY, hi = -INFINITY, best = NAN, y, prev = 0, span;
    size_t i, pass;

    memcpy(p, d->points, d->n_points * sizeof(*p));
    qsort(p, d->n_points, sizeof(*p), by_time);
    for (pass = 0; pass < 2; pass++) {
        span = hi > lo ? hi - lo : 1;
        if (pass == 1) {
            sw_buf_printf(b, "<text x=\"10\" y=\"%.1f\" font-size=\"12\">best ",
                          top + 14);
            escaped(b, d->metric ? d->metric : "value");
            sw_buf_printf(b,
                          " logged so far, any run, any step</text>\n"
                          "<text x=\"10\" y=\"%.1f\""
                          " font-size=\"11\">%.6g .. %.6g</text>\n"
                          "<polyline fill=\"none\" stroke=\"#333\""
                          " stroke-width=\"1.5\" points=\"",
                          top + 30, lo, hi);
        }
        for (i = 0; i < d->n_points; i++) {
            if (i == 0 || (d->maximize ? p[i].value > best : p[i].value < best))
                best = p[i].value;
            lo = fmin(lo, best);
            hi = fmax(hi, best);
            if (pass == 0)
                continue;
            y = top + CURVE - 10 - (best - lo) / span * (CURVE - 20);
            if (i > 0)
                sw_buf_printf(b, "%.1f,%.1f ", xat(ax, p[i].time), prev);
            sw_buf_printf(b, "%.1f,%.1f ", xat(ax, p[i].time), y);
            prev = y;
        }
    }
    sw_buf_puts(b, "\"/>\n");
    free(p);
}

/* A lane's name for people: "GPU 0", "GPU 1 MIG 2", a UUID's start. */
static void put_lane_name(sw_buf *b, const char *key)
{
    const char *slash = strchr(key, '/');

    if (key[0] >= '0' && key[0] <= '9' && slash)
        sw_buf_printf(b, "GPU %.*s MIG %s", (int)(slash - key), key, slash + 1);
    else if (key[0] >= '0' && key[0] <= '9')
        sw_buf_printf(b, "GPU %s", key);
    else if (strlen(key) > 16)
        sw_buf_printf(b, "%.16s...", key);
    else
        sw_buf_puts(b, key);
}

static void draw_axis(sw_buf *b, const axis *ax, double bottom)
{
    double t;
    int k;

    for (k = 0; k <= 4; k++) {
        t = ax->r->start + ax->span * k / 4;
        sw_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"30\" x2=\"%.1f\" y2=\"%.1f\""
                      " stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%.1f\""
                      " font-size=\"11\" text-anchor=\"middle\">",
                      xat(ax, t), xat(ax, t), bottom, xat(ax, t), bottom + 14);
        sw_report_put_duration(b, t - ax->r->start, true);
        sw_buf_puts(b, "</text>\n");
    }
}

static void draw_legend(sw_buf *b, double y)
{
    static const sw_report_outcome shown[] = {SW_ATT_FINISHED, SW_ATT_PAUSED,
                                              SW_ATT_STOPPED,  SW_ATT_FAILED,
                                              SW_ATT_CANCELED, SW_ATT_RUNNING};
    double x = LEFT;
    const char *name;
    size_t i;

    for (i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
        name = shown[i] == SW_ATT_FAILED    ? "failed, timeout, lost &#10005;"
               : shown[i] == SW_ATT_STOPPED ? "stopped &#9632;"
               : shown[i] == SW_ATT_PAUSED  ? "paused &#8214;"
                                            : sw_report_outcome_name(shown[i]);
        sw_buf_printf(b,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\""
                      " fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\""
                      " font-size=\"11\">%s</text>\n",
                      x, y, colour(shown[i]), x + 16, y + 10, name);
        x += 16 + 6.5 * (double)strlen(name) + 20;
    }
}

static double start_key(const sw_report_attempt *a)
{
    return isnan(a->start) ? -INFINITY : a->start;
}

static int by_start(const void *x, const void *y)
{
    const sw_report_attempt *a = *(const sw_report_attempt *const *)x,
                            *b = *(const sw_report_attempt *const *)y;
    double s = start_key(a), t = start_key(b);

    if (s != t)
        return (s > t) - (s < t);
    return (a > b) - (a < b); /* as the data has them */
}

/* The attempts in the order they started, to be placed in their lanes
 * so: the data groups them by run, and a retry placed with its run,
 * before the runs that started meanwhile, could push one of those above
 * its lane. */
static void draw_attempts(sw_buf *body, lanes *ls, const axis *ax,
                          const sw_report_data *d)
{
    const sw_report_attempt **order =
        sw_calloc(d->n_attempts + 1, sizeof(*order));
    size_t i;

    for (i = 0; i < d->n_attempts; i++)
        order[i] = &d->attempts[i];
    qsort(order, d->n_attempts, sizeof(*order), by_start);
    for (i = 0; i < d->n_attempts; i++)
        draw_attempt(body, ls, ax, d, order[i]);
    free(order);
}

void sw_report_write_svg(sw_buf *b, const sw_report_data *d, const sw_report *r)
{
    axis ax = {r, isnan(r->start) ? 0 : r->end - r->start};
    lanes ls = {0};
    sw_buf body = SW_BUF_INIT, name = SW_BUF_INIT;
    double lanes_end, height;
    size_t i;

    draw_attempts(&body, &ls, &ax, d);
    lanes_end = 40 + ls.n * LANE;
    height = lanes_end + 30 + (d->n_points ? CURVE : 0) + 40;
    sw_buf_printf(b,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\""
                  " height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\""
                  " font-family=\"sans-serif\">\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
                  "<text x=\"10\" y=\"20\" font-size=\"14\">sweep ",
                  W, height, W, height);
    escaped(b, d->sweep_id);
    sw_buf_puts(b, ": ");
    sw_report_put_duration(b, r->wall_seconds, true);
    sw_buf_printf(b, " wall clock, GPUs: %.3g", r->gpus);
    if (!isnan(r->occupancy))
        sw_buf_printf(b, ", occupancy %.0f%%", r->occupancy * 100);
    sw_buf_puts(b, "</text>\n");
    for (i = 0; i < ls.n; i++) {
        sw_buf_printf(b, "<text x=\"10\" y=\"%.1f\" font-size=\"11\">",
                      40 + i * LANE + LANE / 2 + 4);
        name.len = 0;
        put_lane_name(&name, ls.lanes[i].name);
        escaped(b, sw_buf_cstr(&name));
        sw_buf_printf(b,
                      "</text>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\""
                      " height=\"%.1f\" fill=\"#f4f4f4\"/>\n",
                      LEFT, 40 + i * LANE + 2, W - LEFT - 20, LANE - 4);
    }
    draw_axis(b, &ax, lanes_end);
    sw_buf_puts(b, sw_buf_cstr(&body));
    if (d->n_points)
        draw_best(b, &ax, d, lanes_end + 30);
    draw_legend(b, height - 24);
    sw_buf_puts(b, "</svg>\n");
    for (i = 0; i < ls.n; i++) {
        free(ls.lanes[i].name);
        free(ls.lanes[i].bars);
    }
    free(ls.lanes);
    sw_buf_dispose(&body);
    sw_buf_dispose(&name);
}
