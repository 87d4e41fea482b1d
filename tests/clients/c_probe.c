/*
 * c_probe.c - drives the C client (examples/clients/sweep_report.c) from
 * its arguments, for test_c_client.py. Each argument is one action:
 *
 *   STEP:NAME=VALUE,...   sweep_report() (STEP "-": none); VALUE by strtod,
 *                         so nan, inf and -inf work; no VALUE: n == 0
 *   sleep:MS              pause
 *   flush:SECONDS         sweep_report_flush()
 *   budget:SECONDS        sweep_report_set_budget()
 *   finish:SECONDS        sweep_report_finish()
 *
 * and prints one line on stderr per call: `ACTION RC [ELAPSED_MS]`.
 * stdout carries only what the client prints there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep_report.h"

#define MAX_METRICS 64

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Splits "NAME=VALUE,NAME=VALUE" in place into `m`; returns the count. */
static size_t parse_metrics(char *s, sweep_metric *m)
{
    size_t n = 0;
    char *next, *eq;

    while (s && *s && n < MAX_METRICS) {
        next = strchr(s, ',');
        if (next)
            *next++ = '\0';
        eq = strrchr(s, '=');
        if (eq) {
            *eq = '\0';
            m[n].name = s;
            m[n].value = strtod(eq + 1, NULL);
            n++;
        }
        s = next;
    }
    return n;
}

static int run_report(char *arg)
{
    sweep_metric m[MAX_METRICS];
    char *colon = strchr(arg, ':');
    long long step = -1;
    size_t n;

    *colon = '\0';
    if (strcmp(arg, "-") != 0)
        step = strtoll(arg, NULL, 10);
    n = parse_metrics(colon + 1, m);
    return sweep_report(step, n ? m : NULL, n);
}

static int act(char *arg)
{
    double v = strchr(arg, ':') ? strtod(strchr(arg, ':') + 1, NULL) : 0;
    struct timespec ts;

    if (strncmp(arg, "sleep:", 6) == 0) {
        ts.tv_sec = (time_t)(v / 1000);
        ts.tv_nsec = (long)(v - (double)ts.tv_sec * 1000) * 1000000L;
        nanosleep(&ts, NULL);
        return 0;
    }
    if (strncmp(arg, "flush:", 6) == 0)
        return sweep_report_flush(v);
    if (strncmp(arg, "budget:", 7) == 0) {
        sweep_report_set_budget(v);
        return 0;
    }
    if (strncmp(arg, "finish:", 7) == 0) {
        sweep_report_finish(v);
        return 0;
    }
    return run_report(arg);
}

int main(int argc, char **argv)
{
    char name[64];
    double t;
    int i, rc;

    for (i = 1; i < argc; i++) {
        if (!strchr(argv[i], ':')) {
            fprintf(stderr, "c_probe: %s: expected ACTION:ARGS\n", argv[i]);
            return 2;
        }
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(argv[i], ":"),
                 argv[i]);
        t = now_ms();
        rc = act(argv[i]);
        fprintf(stderr, "%s %d %.0f %s\n", name, rc, now_ms() - t,
                rc < 0 ? sweep_report_error() : "");
    }
    return 0;
}
