/*
 * report_example.c - a stand-in training loop that reports through the C
 * client (sweep_report.h) and stops when the sweep says so.
 *
 * Usage: report_example [--lr=X] [--steps=N] [--ms=M]
 * (the flags sweep renders from a sweep file's parameters). Each "epoch"
 * sleeps M milliseconds and reports a loss that falls faster for a
 * learning rate near 0.1, so a sweep over --lr has something to find.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep_report.h"

/* The value of --NAME=VALUE among the arguments, or `fallback`. */
static double flag(int argc, char **argv, const char *name, double fallback)
{
    size_t n = strlen(name);
    char *end;
    double v;
    int i;

    for (i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) != 0 ||
            strncmp(argv[i] + 2, name, n) != 0 || argv[i][2 + n] != '=')
            continue;
        v = strtod(argv[i] + 3 + n, &end);
        if (end != argv[i] + 3 + n && *end == '\0')
            return v;
        fprintf(stderr, "report_example: --%s: not a number\n", name);
        exit(2);
    }
    return fallback;
}

int main(int argc, char **argv)
{
    double lr = flag(argc, argv, "lr", 0.01);
    long steps = (long)flag(argc, argv, "steps", 20);
    double ms = flag(argc, argv, "ms", 100);
    struct timespec pause = {(time_t)(ms / 1000),
                             (long)fmod(ms, 1000) * 1000000L};
    long step;
    int rc;

    for (step = 1; step <= steps; step++) {
        double speed = 0.3 * exp(-pow(log10(lr) + 1, 2)); /* best: 0.1 */
        double loss = 2.0 * exp(-speed * (double)step) + 0.05;
        sweep_metric m[] = {{"loss", loss}, {"acc", 1.0 - loss / 2.05}};

        nanosleep(&pause, NULL); /* "training" */
        rc = sweep_report(step, m, 2);
        if (rc == SWEEP_REPORT_STOP) {
            fprintf(stderr,
                    "report_example: stopped by the sweep at "
                    "step %ld\n",
                    step);
            break; /* a real trainer saves its checkpoint here */
        }
        /* Pending values are kept and sent later: not worth a word. */
        if (rc < 0 && rc != SWEEP_REPORT_EPENDING)
            fprintf(stderr, "report_example: %s\n", sweep_report_error());
    }
    sweep_report_finish(10.0); /* what atexit would do */
    return 0;
}
