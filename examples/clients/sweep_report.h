/*
 * sweep_report.h - report a trial's metrics to sweep from C or C++, and
 * hear when the run should stop.
 *
 * Needs nothing beyond libc and POSIX sockets: copy sweep_report.h and
 * sweep_report.c into your project. Under sweep, the trial's environment
 * holds SWEEP_METRICS_URL and SWEEP_TOKEN, and each report is POSTed there
 * as JSON:
 *
 *     sweep_metric m[] = {{"loss", loss}, {"acc", acc}};
 *     if (sweep_report(epoch, m, 2) == SWEEP_REPORT_STOP) {
 *         save_checkpoint();
 *         break;
 *     }
 *
 * - Without SWEEP_METRICS_URL (an older sweep, a run by hand), reports are
 *   printed as `@metrics {...}` lines on stdout and every call returns 0;
 *   sweep then stops a run by SIGTERM.
 * - A report the server cannot take now (not running, restarting on
 *   another port after `sweep resume`, busy) is kept in memory and sent
 *   with the next report or by sweep_report_flush(). Each call retries for
 *   at most its budget (1 s by default, sweep_report_set_budget()), with
 *   exponential backoff and jitter, honouring Retry-After, and re-reads
 *   SWEEP_METRICS_URL_FILE when a connection fails.
 * - At exit (atexit), what is still undelivered after SWEEP_FLUSH_TIMEOUT
 *   seconds (default 10) is printed as `@metrics` lines on stdout, which
 *   sweep reads too: a reported value is never dropped, except one the
 *   server refused as malformed.
 * - Once an answer said stop, every later call returns SWEEP_REPORT_STOP.
 *
 * Not thread-safe: call from one thread, or serialise the calls. Strings
 * passed in are only read during the call.
 */
#ifndef SWEEP_REPORT_H
#define SWEEP_REPORT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What sweep_report() and sweep_report_flush() return. */
enum {
    SWEEP_REPORT_STOP = 1,     /* the run should stop now */
    SWEEP_REPORT_CONTINUE = 0, /* delivered (or printed); go on */
    /* Bad arguments (a NULL, empty or control-character name, "step" as
     * a name, n == 0): nothing was kept. */
    SWEEP_REPORT_EINVAL = -1,
    /* Not delivered yet: kept, sent with a later call. Not a reason to
     * stop training. */
    SWEEP_REPORT_EPENDING = -2,
    /* The server refused a report as malformed (400; dropped) or too
     * large (413; printed on stdout instead). */
    SWEEP_REPORT_EREFUSED = -3,
    /* The URL or token cannot work (bad URL; 401, 403, 404 or 405): this
     * and every later report go to stdout instead. */
    SWEEP_REPORT_ECONFIG = -4,
    SWEEP_REPORT_ENOMEM = -5 /* out of memory: the report was not kept */
};

typedef struct {
    const char *name; /* UTF-8, no control characters, not "step" */
    double value;     /* NaN and infinities are sent as NaN, Infinity */
} sweep_metric;

/* Reports `n` metrics at `step` (negative: the step after the last
 * report's, 0 first; the server stores a value at a step once, so a
 * report sent again after a lost answer is not counted twice). Returns
 * SWEEP_REPORT_STOP when the run should stop, SWEEP_REPORT_CONTINUE, or
 * a negative SWEEP_REPORT_E... code (sweep_report_error() says why). A
 * stop answer wins over an error about an earlier report. */
int sweep_report(long long step, const sweep_metric *metrics, size_t n);

/* Tries to deliver every kept report for up to `timeout_s` seconds.
 * Returns 0 when none is left, else a negative code. */
int sweep_report_flush(double timeout_s);

/* Flushes for up to `timeout_s` seconds, prints what is still
 * undelivered as `@metrics` lines on stdout, and frees everything. Runs
 * at exit by itself; later reports start afresh. */
void sweep_report_finish(double timeout_s);

/* 1 once an answer said the run should stop, else 0. */
int sweep_report_should_stop(void);

/* How long one sweep_report() call may retry (default 1 s; 0: one
 * attempt, no waiting). */
void sweep_report_set_budget(double seconds);

/* The message of the last error ("" when none). */
const char *sweep_report_error(void);

#ifdef __cplusplus
}
#endif

#endif
