/*
 * output.c - what trials write: each running trial's stdout.log is read
 * from where the last look stopped, its `@metrics` lines are recorded,
 * and the offset they were read up to is committed with them, so a
 * metric is recorded exactly once whatever crashes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orchestrator/engine_internal.h"
#include "orchestrator/metrics.h"

#define READ_MAX (1 << 20)

/* Records the metric lines in `buf` (complete lines only); returns the
 * bytes consumed. */
static size_t parse_lines(sw_engine *e, sw_slot *s, const char *buf, size_t len,
                          sw_metric_batch *b)
{
    size_t used = 0;
    const char *nl, *json;

    while (used < len && (nl = memchr(buf + used, '\n', len - used))) {
        size_t n = (size_t)(nl - (buf + used));
        json = sw_metrics_line(buf + used, n);
        if (json &&
            sw_metrics_parse(b, json, n - (size_t)(json - (buf + used))) !=
                SW_OK &&
            !e->quiet)
            fprintf(stderr, "sweep: run %s: ignored a @metrics line: %s\n",
                    s->rec.id, sw_error_last());
        used += n + 1;
    }
    if (used == 0 && len == READ_MAX)
        used = len; /* a line longer than we read: skip it */
    return used;
}

/* Records a batch and the offset it was read up to in one transaction;
 * on failure neither the store nor the slot has moved. */
static int record_metrics(sw_engine *e, sw_slot *s, sw_metric_batch *b,
                          size_t consumed)
{
    double now = sw_clock_wall(e->clock);
    const char *name = e->spec->metric.name;
    sw_run_rec before = s->rec;
    size_t i;
    int error = sw_store_begin(e->st);

    for (i = 0; !error && i < b->len; i++) {
        error = sw_store_put_metric(e->st, s->rec.id, b->items[i].step,
                                    b->items[i].name, b->items[i].value, now);
        if (name && strcmp(name, b->items[i].name) == 0) {
            s->rec.has_value = true;
            s->rec.value = b->items[i].value;
        }
    }
    s->rec.stdout_offset += (int64_t)consumed;
    if (!error)
        error = sw_store_update_run(e->st, &s->rec);
    if (!error)
        error = sw_store_commit(e->st);
    if (error) {
        sw_store_rollback(e->st);
        s->rec.stdout_offset = before.stdout_offset;
        s->rec.has_value = before.has_value;
        s->rec.value = before.value;
    }
    return error;
}

/* The trial's stdout, opened once per slot; false while it has none. */
static bool open_output(sw_slot *s)
{
    char *path;

    if (s->out_fd >= 0)
        return true;
    path = sw_aprintf("%s/stdout.log", s->run_dir);
    s->out_fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    return s->out_fd >= 0;
}

/* Reads what the trial wrote since last time and records its metrics:
 * everything up to its last complete line. */
int sw_engine__tail(sw_engine *e, sw_slot *s)
{
    sw_metric_batch b;
    struct stat st;
    ssize_t len;
    size_t used = 1;
    int error = SW_OK;

    if (!open_output(s))
        return SW_OK;
    if (!e->buf)
        e->buf = sw_malloc(READ_MAX);
    sw_metric_batch_init(&b);
    while (!error && used > 0 && fstat(s->out_fd, &st) == 0 &&
           st.st_size > s->rec.stdout_offset) {
        len = pread(s->out_fd, e->buf, READ_MAX, s->rec.stdout_offset);
        if (len <= 0)
            break;
        used = parse_lines(e, s, e->buf, (size_t)len, &b);
        if (used > 0)
            error = record_metrics(e, s, &b, used);
        if (b.len) {
            s->proven = true; /* it got as far as reporting */
            sw_engine__note_value(e, &s->rec);
        }
        sw_metric_batch_dispose(&b);
    }
    return error;
}
