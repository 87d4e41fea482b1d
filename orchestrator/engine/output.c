/*
 * output.c - what trials write: each running trial's stdout.log is read
 * from where the last look stopped, its `@metrics` lines are recorded,
 * and the offset they were read up to is committed with them, so a
 * metric is recorded exactly once whatever crashes.
 *
 * Only whole lines are parsed. The committed offset is always at the
 * start of a line (or at the end of an ended attempt's output): a line
 * longer than the buffer is scanned for its end in memory (the slot's
 * long_scan) and committed past in one step once its newline comes, so
 * no piece of it is ever read as a line of its own, and after a crash
 * it is scanned again from its start.
 *
 * An attempt's end waits only on a bounded backlog: when it has ended
 * with more of its output unread than the sweep's `metrics_backlog`
 * (a trial that printed faster than the store takes lines), the rest is
 * skipped, said once, and its end recorded at once; the lines stay in
 * stdout.log. Not on a virtual clock, where a trial prints its whole
 * curve at once and nothing waits on it.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orchestrator/engine/engine_internal.h"
#include "orchestrator/metrics.h"

#define READ_MAX (1 << 20)
/* @metrics lines recorded in one turn at most: a fraction of a
 * millisecond of the loop's time (a few in a sanitizer's build), so a
 * trial printing as fast as it can is read as fast as the store takes
 * it, a turn at a time, between everything else */
#define TURN_LINES 256

/* Records the report on one line (without its newline), if it is one;
 * whether it was. */
static bool parse_line(sw_engine *e, sw_slot *s, const char *line, size_t n,
                       sw_metric_batch *b)
{
    const char *json = sw_metrics_line(line, n);
    size_t refused = b->refused, mark = sizeof(SW_LOG_LIMIT_MARK) - 1;

    if (!json && n > mark + 2 && memcmp(line, SW_LOG_LIMIT_MARK, mark) == 0)
        sw_engine__notice(e, SW_NOTICE_WARN, "sweep: run %s: %.*s", s->rec.id,
                          (int)(n - mark - 2), line + mark + 2);
    if (!json)
        return false;
    if (sw_metrics_parse(b, json, n - (size_t)(json - line)) != SW_OK)
        sw_engine__notice(e, SW_NOTICE_WARN,
                          "sweep: run %s: ignored a @metrics line: %s",
                          s->rec.id, sw_error_last());
    if (b->refused > refused && !s->warned_names)
        sw_engine__notice(e, SW_NOTICE_WARN,
                          "sweep: run %s: skipped metric names that are not "
                          "UTF-8 or hold control characters",
                          s->rec.id);
    s->warned_names = s->warned_names || b->refused > refused;
    return true;
}

/* Records the metric lines in `buf` (complete lines only, TURN_LINES of
 * them at most); returns the bytes consumed. */
static size_t parse_lines(sw_engine *e, sw_slot *s, const char *buf, size_t len,
                          sw_metric_batch *b)
{
    size_t used = 0, n, lines = 0;
    const char *nl;

    while (used < len && lines < TURN_LINES &&
           (nl = memchr(buf + used, '\n', len - used))) {
        n = (size_t)(nl - (buf + used));
        lines += parse_line(e, s, buf + used, n, b);
        used += n + 1;
    }
    return used;
}

/* Says a line of `len` bytes (without its newline) was too long to read:
 * each dropped @metrics line, and the first of the others. */
static void warn_long(sw_engine *e, sw_slot *s, int64_t len)
{
    if (s->long_metrics || !s->warned_long)
        sw_engine__notice(
            e, SW_NOTICE_WARN,
            "sweep: run %s: skipped a %s line of %lld bytes (over %d)",
            s->rec.id, s->long_metrics ? "@metrics" : "log", (long long)len,
            READ_MAX);
    s->warned_long = s->warned_long || !s->long_metrics;
    s->long_scan = 0;
}

/* Records a batch and the offset it was read up to in one transaction;
 * on failure neither the store nor the slot has moved (but the stopping
 * rule may have seen values: a failed commit ends the sweep). Only the
 * offset and the value move here (every other change of the run is
 * committed where it is made), and the run's row is written once per
 * batch: only they are. */
static int record_metrics(sw_engine *e, sw_slot *s, sw_metric_batch *b,
                          size_t consumed)
{
    sw_run_rec before = s->rec;
    bool changed = false;
    int rc = sw_store_begin(e->st);

    if (rc >= 0)
        rc = sw_engine__ingest(e, s, b, sw_clock_wall(e->clock), &changed);
    s->rec.stdout_offset += (int64_t)consumed;
    if (rc >= 0)
        rc = sw_store_update_progress(e->st, &s->rec);
    if (rc >= 0)
        rc = sw_store_commit(e->st);
    if (rc < 0) {
        sw_store_rollback(e->st);
        sw_engine__forget(e);
        s->rec.stdout_offset = before.stdout_offset;
        s->rec.has_value = before.has_value;
        s->rec.value = before.value;
        return rc;
    }
    sw_engine__ingested(e);
    return SW_OK;
}

/* The trial's stdout, opened (and watched, where the host can) once per
 * slot; false while it has none. */
static bool open_output(sw_engine *e, sw_slot *s)
{
    char *path;

    if (s->out_fd >= 0)
        return true;
    path = sw_aprintf("%s/stdout.log", s->run_dir);
    s->out_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->out_fd >= 0 && e->watcher.watch)
        s->watch = e->watcher.watch(e->watcher.ctx, path, s);
    free(path);
    return s->out_fd >= 0;
}

void sw_engine__output_changed(void *slot)
{
    sw_slot *s = slot;

    s->out_dirty = true;
}

/* Reads `len` bytes at `pos` (the buffer holds what was read) into *b:
 * returns the bytes consumed from the committed offset, 0 for none. */
static size_t take(sw_engine *e, sw_slot *s, int64_t pos, size_t len, bool last,
                   sw_metric_batch *b)
{
    const char *nl;
    size_t used;

    if (s->long_scan) { /* inside a long line: only its end matters */
        nl = memchr(e->buf, '\n', len);
        s->long_scan = pos + (int64_t)(nl ? (size_t)(nl - e->buf) : len);
        if (!nl && !last)
            return 0;
        used = (size_t)(s->long_scan - s->rec.stdout_offset);
        warn_long(e, s, (int64_t)used);
        return used + (nl != NULL);
    }
    used = parse_lines(e, s, e->buf, len, b);
    if (used == 0 && len == READ_MAX) { /* a line longer than we read */
        s->long_metrics = sw_metrics_line(e->buf, len) != NULL;
        s->long_scan = pos + (int64_t)len;
        return take(e, s, s->long_scan, 0, last, b);
    }
    if (used == 0 && last) { /* the last line, without its newline */
        parse_line(e, s, e->buf, len, b);
        used = len;
    }
    return used;
}

/* Where the next read starts: past what is scanned of a long line. */
static int64_t read_pos(const sw_slot *s)
{
    return s->long_scan ? s->long_scan : s->rec.stdout_offset;
}

/* The most of an ended attempt's output still read. */
static int64_t backlog_bound(const sw_engine *e)
{
    int64_t b = e->spec->metrics_backlog;

    return b == 0 ? SW_METRICS_BACKLOG_DEFAULT : b;
}

/* Once an attempt has ended with more than the bound unread (`size`:
 * its output's end), skips it all: the offset goes to the end, committed
 * (on failure nothing has moved), and a person is told. Whether it did. */
static int skip_backlog(sw_engine *e, sw_slot *s, int64_t size, bool *skipped)
{
    int64_t from = s->rec.stdout_offset, bound = backlog_bound(e);
    int rc;

    *skipped = false;
    if (e->virtual_time || s->weighed || size - from <= bound)
        return SW_OK;
    s->rec.stdout_offset = size;
    if ((rc = sw_store_update_progress(e->st, &s->rec)) < 0) {
        s->rec.stdout_offset = from;
        return rc;
    }
    s->weighed = *skipped = true;
    s->long_scan = 0;
    sw_engine__notice(e, SW_NOTICE_WARN,
                      "sweep: run %s: skipped %lld bytes of output unread "
                      "at its end (over metrics_backlog, %lld bytes): their "
                      "@metrics lines are not recorded; they stay in %s/"
                      "stdout.log",
                      s->rec.id, (long long)(size - from), (long long)bound,
                      s->run_dir);
    return SW_OK;
}

/* Reads a turn of what the trial wrote since last time and records its
 * metrics: up to its last complete line, or with `at_end`, all of it
 * once the last turn reaches the end. */
static int tail_turn(sw_engine *e, sw_slot *s, bool at_end)
{
    sw_metric_batch b;
    struct stat st;
    int64_t pos, size = 0;
    ssize_t len;
    size_t used;
    bool skipped;
    int error = SW_OK;

    s->out_more = s->out_dirty = false;
    if (!open_output(e, s))
        return SW_OK;
    pos = read_pos(s);
    /* on a virtual clock nothing writes the log while it is read, so a
     * short read ends at its size: no fstat() for each line given */
    if (!e->virtual_time) {
        if (fstat(s->out_fd, &st) != 0 || st.st_size <= pos)
            return SW_OK;
        size = st.st_size;
    }
    if (at_end && s->phase == SW_SLOT_ENDED && !s->weighed) {
        if ((error = skip_backlog(e, s, size, &skipped)) < 0 || skipped)
            return error;
        s->weighed = true;
    }
    if (!e->buf)
        e->buf = sw_malloc(READ_MAX);
    len = pread(s->out_fd, e->buf, READ_MAX, pos);
    if (len <= 0)
        return SW_OK;
    if (e->virtual_time && len < READ_MAX)
        size = pos + len;
    else if (e->virtual_time) {
        if (fstat(s->out_fd, &st) != 0)
            return SW_OK;
        size = st.st_size;
    }
    sw_metric_batch_init(&b);
    used = take(e, s, pos, (size_t)len, at_end && pos + len >= size, &b);
    if (used > 0)
        error = record_metrics(e, s, &b, used);
    sw_metric_batch_dispose(&b);
    /* more to read now, unless all that is left is a partial line */
    s->out_more = !error && size > read_pos(s) && (used > 0 || s->long_scan);
    return error;
}

/* A turn; on a virtual clock (a simulation) every turn there is at once,
 * since lines appear only when the executor puts them there and nothing
 * waits on real time meanwhile. */
int sw_engine__tail(sw_engine *e, sw_slot *s, bool at_end)
{
    int error;

    do
        error = tail_turn(e, s, at_end);
    while (!error && e->virtual_time && s->out_more);
    return error;
}
