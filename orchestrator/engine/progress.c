/*
 * progress.c - what a person sees while a sweep runs, a consumer of the
 * engine's events: notices, on stdout or stderr by their level, and the
 * ends of runs. On a terminal, a live block at the bottom, redrawn in
 * place and cut to the terminal's width so that no line wraps: one line
 * per running trial (run, params, step, last value, elapsed, devices),
 * then the counts, the best value, the time and an estimate of the time
 * left. Notices and ended runs are printed above it, never into it: the
 * block is erased, the line printed, the block drawn again. Elsewhere
 * (not a terminal) one plain line per ended attempt, and the status line
 * once at the end. --quiet leaves only the notices that are results and
 * errors, and that last line. The engine's only file that prints.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "orchestrator/engine/engine_internal.h"
#include "sweeps/buf.h"
#include "sweeps/json.h"

#define PROGRESS_S 0.25 /* how often a terminal's status line is redrawn */

static void above_view(sw_engine *e, FILE *to, const char *text);

/* The reason an ended run's line shows: a stop by the rule is said when
 * it is decided ("stops early: iteration 2, ..."), so its end says only
 * that; the whole reason is in the store (`sweep show`). */
static void put_reason(sw_buf *b, const sw_run_rec *r)
{
    const char *word = sw_cancel_name(SW_CANCEL_STOPPED);
    size_t n = strlen(word);

    if (r->state == SW_RUN_STOPPED && strncmp(r->reason, word, n) == 0 &&
        r->reason[n] == ':')
        sw_buf_printf(b, " (%s)", word);
    else
        sw_buf_printf(b, " (%s)", r->reason);
}

static void report_end(sw_engine *e, const sw_run_rec *r)
{
    sw_buf b = SW_BUF_INIT;

    if (e->quiet)
        return;
    if (r->state == SW_RUN_PENDING) /* an attempt ended; a retry follows */
        sw_buf_printf(&b, "run %s attempt %lld ended", r->id,
                      (long long)r->attempts);
    else
        sw_buf_printf(&b, "run %s %s", r->id, sw_run_state_name(r->state));
    if (r->reason)
        put_reason(&b, r);
    if (r->state == SW_RUN_PENDING)
        sw_buf_puts(&b, ", it runs again");
    if (r->has_value)
        sw_buf_printf(&b, " %s=%g", e->spec->metric.name, r->value);
    above_view(e, stdout, sw_buf_cstr(&b));
    sw_buf_dispose(&b);
}

static void notice(sw_engine *e, sw_notice_level level, const char *text)
{
    bool out = level == SW_NOTICE_RESULT || level == SW_NOTICE_INFO;

    if (e->quiet && (level == SW_NOTICE_INFO || level == SW_NOTICE_WARN))
        return;
    above_view(e, out ? stdout : stderr, text);
}

static void format_elapsed(char *out, size_t n, double secs)
{
    long t = (long)secs;

    if (t >= 3600)
        snprintf(out, n, "%ldh%02ldm%02lds", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
}

/* Trials not started yet, when the search is bounded: those it still
 * holds plus retries waiting for a slot. */
static uint64_t pending(const sw_engine *e)
{
    uint64_t left =
        e->size_count > e->next_idx ? e->size_count - e->next_idx : 0;

    return e->search_done ? e->qlen : left + e->qlen;
}

/* Trials not started yet: those the search still holds (when it is
 * bounded; none once no more will start: run_cap, a spent budget) plus
 * retries waiting for a slot. */
static void print_pending(sw_buf *b, const sw_engine *e)
{
    if (e->search_done)
        sw_buf_printf(b, "%zu pending", e->qlen);
    else if (!e->size_bounded || e->size_saturated)
        sw_buf_printf(b, "%zu+ pending", e->qlen);
    else
        sw_buf_printf(b, "%llu pending", (unsigned long long)pending(e));
}

/* ", 3 queued (Resources, 1m20s)": the jobs waiting in Slurm's queue,
 * the reason of the one that has waited longest, and how long. */
static void print_queued(sw_buf *b, const sw_engine *e, double now_wall)
{
    const sw_slot *oldest = NULL;
    char waited[32];
    size_t i, n = 0;

    for (i = 0; i < e->n_slots; i++) {
        const sw_slot *s = e->slots[i];

        if (!sw_engine__started(s) || !s->queued)
            continue;
        n++;
        if (!oldest || s->rec.started_at < oldest->rec.started_at)
            oldest = s;
    }
    if (n == 0)
        return;
    format_elapsed(waited, sizeof(waited),
                   fmax(0, now_wall - oldest->rec.started_at));
    sw_buf_printf(b, ", %zu queued (%s, %s)", n,
                  oldest->rec.pending_reason ? oldest->rec.pending_reason
                                             : "None",
                  waited);
}

/* The counts, the best value and the time, as one line. */
static void summary(sw_buf *b, sw_engine *e, double now)
{
    char elapsed[32];

    format_elapsed(elapsed, sizeof(elapsed), now - e->t0);
    sw_buf_printf(b, "%zu finished, %zu running", e->done,
                  sw_engine__count_started(e) - sw_engine__count_queued(e));
    print_queued(b, e, sw_clock_wall(e->clock));
    sw_buf_puts(b, ", ");
    print_pending(b, e);
    if (e->stopped)
        sw_buf_printf(b, ", %zu stopped early", e->stopped);
    sw_buf_printf(b, ", %zu failed", e->failed);
    if (e->canceled)
        sw_buf_printf(b, ", %zu canceled", e->canceled);
    sw_engine__best(e);
    if (e->has_best)
        sw_buf_printf(b, ", best %s=%g (%s)", e->spec->metric.name, e->best,
                      e->best_run);
    sw_buf_printf(b, ", %s", elapsed);
}

/* ---- the terminal view ---------------------------------------------- */

static void term_size(int *cols, int *rows)
{
    struct winsize ws;

    *cols = 80;
    *rows = 24;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        *cols = ws.ws_col;
        *rows = ws.ws_row > 0 ? ws.ws_row : 24;
    }
}

/* Appends `line` to `b`, cut to `cols` - 1 columns (a character is a
 * column; the last column is left free, so no terminal wraps it), and a
 * newline. Control characters become '?'. */
static void put_line(sw_buf *b, const char *line, int cols)
{
    const unsigned char *p = (const unsigned char *)line;
    int used = 0;

    for (; *p && used < cols - 1; used++) {
        size_t n = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;

        if (*p < 0x20 || *p == 0x7f) {
            sw_buf_putc(b, '?');
            p++;
            continue;
        }
        if (strnlen((const char *)p, n) < n)
            break;
        sw_buf_put(b, (const char *)p, n);
        p += n;
    }
    sw_buf_putc(b, '\n');
}

/* Appends `text` as lines of fewer than `cols` columns, broken after
 * its commas (a part longer than a line is cut); returns how many. */
static int put_wrapped(sw_buf *b, const char *text, int cols)
{
    sw_buf line = SW_BUF_INIT;
    const char *p = text, *next;
    int lines = 0;
    size_t n;

    while (*p) {
        next = strstr(p, ", ");
        n = next ? (size_t)(next - p) + 1 : strlen(p);
        if (line.len > 0 && (int)(line.len + 1 + n) >= cols) {
            put_line(b, sw_buf_cstr(&line), cols);
            lines++;
            line.len = 0;
            sw_buf_puts(&line, " ");
        }
        if (line.len > 1 || (line.len == 1 && line.ptr[0] != ' '))
            sw_buf_putc(&line, ' ');
        sw_buf_put(&line, p, n);
        p = next ? next + 2 : p + n;
    }
    put_line(b, sw_buf_cstr(&line), cols);
    sw_buf_dispose(&line);
    return lines + 1;
}

/* "lr=0.01 width=128": a run's params as they read, from their JSON,
 * the shortest first, so that a long one cut at the edge hides no
 * other. */
static void short_params(sw_buf *b, const char *json)
{
    sw_buf *parts;
    sw_value *v = NULL;
    size_t i, k, n, best;

    if (!json || sw_json_parse(&v, json, strlen(json)) != SW_OK ||
        v->type != SW_MAP) {
        sw_value_free(v);
        return;
    }
    n = v->u.map.len;
    parts = sw_calloc(n ? n : 1, sizeof(*parts));
    for (i = 0; i < n; i++) {
        sw_buf_printf(&parts[i], "%s=", v->u.map.keys[i]);
        if (v->u.map.vals[i]->type == SW_STR)
            sw_buf_puts(&parts[i], v->u.map.vals[i]->u.s);
        else
            sw_value_write_json(&parts[i], v->u.map.vals[i], false);
    }
    for (k = 0; k < n; k++) { /* a few params: pick the shortest left */
        for (best = n, i = 0; i < n; i++)
            if (parts[i].len != SIZE_MAX &&
                (best == n || parts[i].len < parts[best].len))
                best = i;
        sw_buf_printf(b, "%s%s", k ? " " : "", sw_buf_cstr(&parts[best]));
        sw_buf_dispose(&parts[best]);
        parts[best].len = SIZE_MAX; /* taken */
    }
    free(parts);
    sw_value_free(v);
}

/* "GPU-5c1f,GPU-9a7e x0.5": the devices a run holds, shortened. */
static void short_gpus(sw_buf *b, const char *json)
{
    const sw_value *devs, *share;
    sw_value *v = NULL;
    size_t i;

    if (!json || sw_json_parse(&v, json, strlen(json)) != SW_OK)
        return;
    devs = sw_value_map_get(v, "devices");
    share = sw_value_map_get(v, "share");
    for (i = 0; devs && devs->type == SW_LIST && i < devs->u.list.len; i++)
        if (devs->u.list.items[i]->type == SW_STR)
            sw_buf_printf(b, "%s%.8s", i ? "," : "  ",
                          devs->u.list.items[i]->u.s);
    if (share && share->type == SW_FLOAT && share->u.f < 1)
        sw_buf_printf(b, " x%g", share->u.f);
    sw_value_free(v);
}

/* One running trial's line. */
static void trial_line(sw_buf *out, const sw_engine *e, const sw_slot *s,
                       double now_wall, int cols)
{
    sw_buf b = SW_BUF_INIT;
    char elapsed[32];

    format_elapsed(elapsed, sizeof(elapsed),
                   fmax(0, now_wall - s->rec.started_at));
    sw_buf_printf(&b, "  %s  ", s->rec.id);
    if (s->view_step >= 0)
        sw_buf_printf(&b, "step %lld  ", (long long)s->view_step);
    if (s->rec.has_value)
        sw_buf_printf(&b, "%s=%g  ", e->spec->metric.name, s->rec.value);
    sw_buf_printf(&b, "%s%s", elapsed,
                  s->phase == SW_SLOT_STOPPING ? "  stopping" : "");
    short_gpus(&b, s->rec.gpus);
    sw_buf_puts(&b, "  ");
    short_params(&b, s->rec.params);
    put_line(out, sw_buf_cstr(&b), cols);
    sw_buf_dispose(&b);
}

/* ", about 12m left": the trials left at the pace runs have ended so
 * far; nothing until one has, or when the search is unbounded. */
static void time_left(sw_buf *b, const sw_engine *e, double now)
{
    size_t ended = e->done + e->failed + e->stopped + e->canceled;
    double left;
    char t[32];

    if (!ended || !e->size_bounded || e->size_saturated || now <= e->t0)
        return;
    left = (double)(pending(e) + sw_engine__count_started(e)) * (now - e->t0) /
           (double)ended;
    format_elapsed(t, sizeof(t), left);
    sw_buf_printf(b, ", about %s left", t);
}

/* Erases the view: the cursor goes back to where the block began. */
static void erase_view(sw_engine *e)
{
    if (e->view_lines > 0)
        printf("\033[%dA\r\033[J", e->view_lines);
    e->view_lines = 0;
}

/* Draws the view: a line per running trial (as many as the terminal's
 * height leaves room for), then the summary. */
static void draw_view(sw_engine *e, double now)
{
    sw_buf b = SW_BUF_INIT, line = SW_BUF_INIT;
    double wall = sw_clock_wall(e->clock);
    int cols, rows, room, shown = 0, running = 0;
    size_t i;

    term_size(&cols, &rows);
    room = rows > 4 ? rows - 3 : 1;
    for (i = 0; i < e->n_slots; i++) {
        const sw_slot *s = e->slots[i];

        if (!sw_engine__started(s) || s->queued)
            continue;
        running++;
        if (shown < room) {
            trial_line(&b, e, s, wall, cols);
            shown++;
        }
    }
    if (running > shown) {
        sw_buf_printf(&line, "  ... and %d more running", running - shown);
        put_line(&b, sw_buf_cstr(&line), cols);
        shown++;
    }
    line.len = 0;
    summary(&line, e, now);
    time_left(&line, e, now);
    shown += put_wrapped(&b, sw_buf_cstr(&line), cols);
    erase_view(e);
    fputs(sw_buf_cstr(&b), stdout);
    e->view_lines = shown;
    sw_buf_dispose(&line);
    sw_buf_dispose(&b);
}

/* Redraws the view on a terminal, at most every PROGRESS_S; elsewhere,
 * and at the end, the summary as one line. */
static void status_line(sw_engine *e, bool final)
{
    double now = sw_clock_mono(e->clock);
    sw_buf b = SW_BUF_INIT;

    if (e->quiet || (!e->tty && !final) ||
        (!final && now < e->last_progress + PROGRESS_S))
        return;
    e->last_progress = now;
    if (e->tty && !final) {
        draw_view(e, now);
    } else {
        sw_buf out = SW_BUF_INIT;
        int cols, rows;

        summary(&b, e, now);
        if (e->tty) { /* the last summary, in lines that fit */
            erase_view(e);
            term_size(&cols, &rows);
            put_wrapped(&out, sw_buf_cstr(&b), cols);
            fputs(sw_buf_cstr(&out), stdout);
        } else {
            printf("%s\n", sw_buf_cstr(&b));
        }
        sw_buf_dispose(&out);
        sw_buf_dispose(&b);
    }
    fflush(stdout);
}

/* ---- lines above the view, fitted to the terminal ------------------- */

/* Shorter words for a line too wide for the terminal, tried in order
 * until it fits; then it is cut, with "…". */
static const char *const shorter[][2] = {
    {"stopped early by the stopping rule", "stopped early"},
    {" stops early: ", " stops: "},
    {"median of the others ", "median "},
    {"iteration ", "it "},
    {"threshold ", "thr "},
    {"cutoff ", "cut "},
    {"not in a git repository", "no git repository"},
    {"exited with status ", "exit "},
    {"attempt ", "try "},
};

/* The columns `s` takes: one per character (UTF-8 lead byte). */
static size_t columns(const char *s, size_t len)
{
    size_t n = 0, i;

    for (i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xc0) != 0x80;
    return n;
}

static void replace_all(sw_buf *b, const char *from, const char *to)
{
    sw_buf out = SW_BUF_INIT;
    const char *p = sw_buf_cstr(b), *hit;
    size_t n = strlen(from);

    if (!strstr(p, from))
        return;
    while ((hit = strstr(p, from))) {
        sw_buf_put(&out, p, (size_t)(hit - p));
        sw_buf_puts(&out, to);
        p = hit + n;
    }
    sw_buf_puts(&out, p);
    b->len = 0;
    sw_buf_put(b, out.ptr, out.len);
    sw_buf_dispose(&out);
}

/* "sweep 4b708ce8: run 4b708ce8-4 ...": the run's id names its sweep. */
static void drop_sweep_word(sw_buf *b, const char *sweep_id)
{
    sw_buf head = SW_BUF_INIT;
    size_t n;

    sw_buf_printf(&head, "sweep %s: run %s-", sweep_id, sweep_id);
    n = head.len - strlen(sweep_id) - strlen("run -");
    if (b->len > head.len && strncmp(b->ptr, head.ptr, head.len) == 0) {
        memmove(b->ptr, b->ptr + n, b->len - n + 1);
        b->len -= n;
    }
    sw_buf_dispose(&head);
}

/* Cuts `b` to `cols` - 1 columns, the last of them "…". */
static void cut(sw_buf *b, int cols)
{
    size_t keep = cols > 2 ? (size_t)cols - 2 : 0, seen = 0, i;

    for (i = 0; i < b->len; i++) {
        if (((unsigned char)b->ptr[i] & 0xc0) != 0x80 && seen++ == keep)
            break;
    }
    b->len = i;
    b->ptr[i] = '\0';
    sw_buf_puts(b, "\xe2\x80\xa6");
}

/* Appends one line of a notice, fitted to fewer than `cols` columns:
 * shorter words first, then cut. A line with a URL is never cut (it
 * would be of no use); it is the one that may wrap. */
static void fit_line(sw_buf *out, const sw_engine *e, const char *line,
                     size_t len, int cols)
{
    sw_buf b = SW_BUF_INIT;
    size_t i;

    sw_buf_put(&b, line, len);
    if (columns(b.ptr, b.len) >= (size_t)cols && !strstr(b.ptr, "://")) {
        drop_sweep_word(&b, e->sweep.id ? e->sweep.id : "");
        for (i = 0; i < sizeof(shorter) / sizeof(shorter[0]) &&
                    columns(b.ptr, b.len) >= (size_t)cols;
             i++)
            replace_all(&b, shorter[i][0], shorter[i][1]);
        if (columns(b.ptr, b.len) >= (size_t)cols)
            cut(&b, cols);
    }
    sw_buf_put(out, b.ptr, b.len);
    sw_buf_putc(out, '\n');
    sw_buf_dispose(&b);
}

/* `text`, each of its lines fitted to the terminal's width. */
static char *fitted(const sw_engine *e, const char *text)
{
    sw_buf out = SW_BUF_INIT;
    const char *p = text, *nl;
    int cols, rows;

    term_size(&cols, &rows);
    do {
        nl = strchr(p, '\n');
        fit_line(&out, e, p, nl ? (size_t)(nl - p) : strlen(p), cols);
        p = nl ? nl + 1 : NULL;
    } while (p);
    return sw_buf_detach(&out);
}

/* A line above the view: the view is erased, the line printed, and the
 * view drawn again at once. On a terminal (the one it goes to), each
 * line fits its width; elsewhere it is printed whole. */
static void above_view(sw_engine *e, FILE *to, const char *text)
{
    bool view = e->tty && !e->quiet && e->view_lines > 0;
    /* not e->tty: the first lines are said before the engine is set up */
    char *fit = isatty(fileno(to)) ? fitted(e, text) : NULL;

    if (view)
        erase_view(e);
    fflush(stdout);
    if (fit)
        fputs(fit, to);
    else
        fprintf(to, "%s\n", text);
    fflush(to);
    if (view)
        draw_view(e, sw_clock_mono(e->clock));
    fflush(stdout);
    free(fit);
}

/* The last step each running trial reported, for the view. */
static void note_step(sw_engine *e, const sw_event *ev)
{
    sw_slot *s;

    if (!e->tty || e->quiet || ev->step < 0 || !ev->run)
        return;
    if ((s = sw_engine__find_slot(e, ev->run->id)) && ev->step > s->view_step)
        s->view_step = ev->step;
}

int sw_engine__progress_event(void *engine, const sw_event *ev)
{
    sw_engine *e = engine;

    switch (ev->kind) {
    case SW_EV_RUN:
        if (ev->end)
            report_end(e, ev->run);
        break;
    case SW_EV_NOTICE:
        notice(e, ev->level, ev->text);
        break;
    case SW_EV_VALUE:
        note_step(e, ev);
        break;
    case SW_EV_TICK:
        status_line(e, ev->final);
        break;
    default:
        break;
    }
    return SW_OK;
}
