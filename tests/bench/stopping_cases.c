/*
 * stopping_cases.c - the stopper's answers to Hyperband cases read on
 * stdin, for wandb_hyperband_ref.py to set beside W&B's own code.
 *
 * Each case is a header line "MIN_ITER MAX_ITER S ETA STRICT MAXIMIZE N"
 * (0 for an absent min_iter or max_iter, -1 for an absent s), then N
 * lines "RUNNING LEN V1 ... VLEN" (values as strtod reads them, "nan"
 * too). For each case it prints the 0-based indices of the running runs
 * to stop, as a Python list ("[1, 4]"), or "error" when the stopper
 * refuses the config. The values are fed one of each run in turn.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search/stopping.h"

#define MAX_RUNS 256
#define MAX_LEN 512

static int running[MAX_RUNS], len[MAX_RUNS];
static double v[MAX_RUNS][MAX_LEN];

static int read_runs(int n, int *longest)
{
    char tok[64];
    int i, t;

    *longest = 0;
    for (i = 0; i < n; i++) {
        if (scanf("%d %d", &running[i], &len[i]) != 2 || len[i] < 0 ||
            len[i] > MAX_LEN)
            return -1;
        for (t = 0; t < len[i]; t++) {
            if (scanf("%63s", tok) != 1)
                return -1;
            v[i][t] = strtod(tok, NULL);
        }
        *longest = len[i] > *longest ? len[i] : *longest;
    }
    return 0;
}

static void answer(const sw_early_terminate *et, bool maximize, int n,
                   int longest)
{
    sw_stopper *s;
    int i, t, first = 1;

    if (sw_stopper_new(&s, et, maximize) < 0) {
        printf("error\n");
        return;
    }
    for (t = 0; t < longest; t++)
        for (i = 0; i < n; i++)
            if (t < len[i])
                sw_stopper_observe(s, 1000 + 7 * i, v[i][t]);
    printf("[");
    for (i = 0; i < n; i++)
        if (running[i] && sw_stopper_should_stop(s, 1000 + 7 * i)) {
            printf(first ? "%d" : ", %d", i);
            first = 0;
        }
    printf("]\n");
    sw_stopper_free(s);
}

int main(void)
{
    long long min_iter, max_iter, s;
    int strict, maximize, n, longest;
    double eta;

    while (scanf("%lld %lld %lld %lf %d %d %d", &min_iter, &max_iter, &s, &eta,
                 &strict, &maximize, &n) == 7) {
        sw_early_terminate et = {.rule = SW_STOP_HYPERBAND,
                                 .min_iter = min_iter,
                                 .max_iter = max_iter,
                                 .s = s,
                                 .eta = eta,
                                 .strict = strict};

        if (n < 1 || n > MAX_RUNS || read_runs(n, &longest) < 0) {
            fprintf(stderr, "stopping_cases: malformed case\n");
            return 2;
        }
        answer(&et, maximize, n, longest);
    }
    return 0;
}
