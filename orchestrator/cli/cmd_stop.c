/*
 * cmd_stop.c - `sweep stop RUN...` stops running runs by hand; `sweep
 * stop SWEEP` is a Ctrl-C for the `sweep run` (or `sweep resume`) of a
 * sweep, from another terminal sharing its home.
 *
 * The engine that runs the sweep is the store's one writer: this command
 * writes nothing there. It leaves a request for the engine
 * (sw_engine_ask, engine/requests.c), waits for the engine to take it,
 * and for a run, for the run to end. Every argument is checked before
 * any request is made, so a bad one changes nothing.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/engine/engine.h"

#define TAKE_S 10.0 /* how long the engine may take to see a request */

static const char help[] =
    "usage: sweep stop RUN... | SWEEP [--timeout SECONDS]\n\n"
    "Stops runs by hand while their sweep runs: each RUN ends `stopped`,\n"
    "reason \"stopped by hand\", as a stopping rule stops one (its trial\n"
    "is told to stop, then gets SIGTERM, SIGKILL after the grace period),\n"
    "and its last value counts as a stopped run's. Waits for them to end,\n"
    "at most --timeout seconds (default 60).\n\n"
    "With a SWEEP (id, id prefix or name) instead: as Ctrl-C on its `sweep\n"
    "run`: nothing new is launched, running trials finish, the sweep is\n"
    "left `interrupted` (`sweep resume` continues it); asked again, its\n"
    "running trials are canceled.\n";

typedef struct {
    char *sweep_id;
    char *run_id; /* NULL: the whole sweep */
    char *request;
} target;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(void)
{
    struct timespec ts = {0, 50 * 1000 * 1000};

    nanosleep(&ts, NULL);
}

/* A run of `key`, which must be running; false, said, when it is not. */
static bool resolve_run(const sw_run_rec *r, target *t)
{
    if (r->state != SW_RUN_RUNNING) {
        fprintf(stderr,
                "sweep stop: run %s is %s%s%s%s: only a running run can be "
                "stopped\n",
                r->id, sw_run_state_name(r->state), r->reason ? " (" : "",
                r->reason ? r->reason : "", r->reason ? ")" : "");
        return false;
    }
    t->sweep_id = sw_strdup(r->sweep_id);
    t->run_id = sw_strdup(r->id);
    return true;
}

/* What `key` names, a run or a sweep, held by a running `sweep`. */
static bool resolve(sw_store *st, const char *key, target *t)
{
    sw_run_rec r;
    sw_sweep_rec s;
    bool ok = false;

    memset(&s, 0, sizeof(s));
    if (sw_store_get_run(st, key, &r) == SW_OK) {
        ok = resolve_run(&r, t);
        sw_run_rec_dispose(&r);
    } else if (sw_store_get_sweep(st, key, &s) == SW_OK) {
        t->sweep_id = sw_strdup(s.id);
        ok = true;
    } else {
        fprintf(stderr, "sweep stop: no run or sweep '%s' in %s\n", key,
                sw_engine_home());
    }
    sw_sweep_rec_dispose(&s);
    if (ok && !sw_engine_is_running(sw_engine_home(), t->sweep_id)) {
        fprintf(stderr,
                "sweep stop: sweep %s is not running (no `sweep run` or "
                "`sweep resume` of it holds %s): nothing to stop\n",
                t->sweep_id, sw_engine_home());
        ok = false;
    }
    return ok;
}

/* Waits for the engine to take the request (it removes the file); one it
 * does not take in time is taken back. */
static bool taken(target *t)
{
    double until = now_s() + TAKE_S;

    while (access(t->request, F_OK) == 0) {
        if (now_s() > until) {
            unlink(t->request);
            fprintf(stderr,
                    "sweep stop: the `sweep` running sweep %s did not take "
                    "the request within %g s; nothing was asked\n",
                    t->sweep_id, TAKE_S);
            return false;
        }
        nap();
    }
    return true;
}

/* Waits for run t->run_id to end, at most until `until`; says how. */
static bool ended(sw_store *st, const target *t, double until)
{
    sw_run_rec r;

    for (;;) {
        if (sw_store_get_run(st, t->run_id, &r) != SW_OK) {
            fprintf(stderr, "sweep stop: %s\n", sw_error_last());
            return false;
        }
        if (r.state != SW_RUN_RUNNING && r.state != SW_RUN_PENDING)
            break;
        sw_run_rec_dispose(&r);
        if (now_s() > until) {
            fprintf(stderr,
                    "sweep stop: run %s was asked to stop and still runs "
                    "after --timeout\n",
                    t->run_id);
            return false;
        }
        nap();
    }
    printf("run %s %s%s%s\n", r.id, sw_run_state_name(r.state),
           r.reason ? ": " : "", r.reason ? r.reason : "");
    sw_run_rec_dispose(&r);
    return true;
}

static int parse(int argc, char **argv, double *timeout, bool *helped)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"timeout", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            *helped = true;
            return SW_EXIT_OK;
        } else if (c == 't') {
            if (!sw_cli_parse_seconds(optarg, timeout))
                return sw_cli_usage("stop", "--timeout wants seconds, not '%s'",
                                    optarg);
        } else {
            return sw_cli_usage("stop", "unknown option");
        }
    }
    if (optind >= argc)
        return sw_cli_usage("stop", "expected a run or a sweep");
    return SW_EXIT_OK;
}

/* Asks for every target, then waits for each: SW_EXIT_OK when all were
 * taken and every run ended. */
static int ask_all(sw_store *st, target *ts, size_t n, double timeout)
{
    double until;
    bool ok = true;
    size_t i;

    for (i = 0; i < n && ok; i++)
        if (sw_engine_ask(sw_engine_home(), ts[i].sweep_id, ts[i].run_id,
                          &ts[i].request) != SW_OK) {
            fprintf(stderr, "sweep stop: %s\n", sw_error_last());
            ok = false;
        }
    for (i = 0; i < n && ts[i].request; i++)
        ok = taken(&ts[i]) && ok;
    until = now_s() + timeout;
    for (i = 0; i < n && ok; i++) {
        if (ts[i].run_id)
            ok = ended(st, &ts[i], until);
        else
            printf("sweep %s: stopping: nothing new is launched and its "
                   "running trials finish (`sweep stop %s` again cancels "
                   "them; `sweep resume %s` continues)\n",
                   ts[i].sweep_id, ts[i].sweep_id, ts[i].sweep_id);
    }
    return ok ? SW_EXIT_OK : SW_EXIT_FAIL;
}

int sw_cmd_stop(int argc, char **argv)
{
    double timeout = 60;
    bool helped = false, ok = true;
    sw_store *st = NULL;
    target *ts = NULL;
    size_t n = 0, i;
    int status = parse(argc, argv, &timeout, &helped);

    if (status != SW_EXIT_OK || helped)
        return status;
    if ((status = sw_cli_open_store_as(&st, "stop", false)) != SW_EXIT_OK)
        return status;
    n = (size_t)(argc - optind);
    ts = sw_calloc(n, sizeof(*ts));
    for (i = 0; i < n; i++)
        ok = resolve(st, argv[optind + (int)i], &ts[i]) && ok;
    status = ok ? ask_all(st, ts, n, timeout) : SW_EXIT_FAIL;
    for (i = 0; i < n; i++) {
        free(ts[i].sweep_id);
        free(ts[i].run_id);
        free(ts[i].request);
    }
    free(ts);
    sw_store_close(st);
    return status;
}
