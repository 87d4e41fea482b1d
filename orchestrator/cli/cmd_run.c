/*
 * cmd_run.c - `sweep run FILE` creates a sweep and runs it to its end;
 * `sweep resume [SWEEP]` continues one after Ctrl-C or a crash. Both are
 * thin: the engine does the work.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/engine/engine.h"

static const char run_help[] =
    "usage: sweep run FILE [--parallel N] [--seed N] [--name NAME] "
    "[--backend local|slurm|sim] [--slurm-arg ARG]... [--sim-fail-rate P] "
    "[--listen ADDR:PORT] "
    "[--gpus SPEC] [--quiet] [-- COMMAND...]\n\n"
    "Creates a sweep from FILE and runs it to its end, N trials side by side\n"
    "(default: the file's `parallel`, else as many as the GPUs hold, else\n"
    "1), on the backend named (default:\n"
    "local, processes of this machine). Every run is recorded in\n"
    "$SWEEP_HOME/sweep.db (default ./.sweep). Ctrl-C once launches nothing\n"
    "more and waits for running trials; twice cancels them. `sweep resume`\n"
    "continues either way, and after a crash.\n\n"
    "-- COMMAND... replaces the file's command (for files with neither\n"
    "`program` nor `command`, written for wandb.agent(function=...)): the\n"
    "words as given, then the run's parameters as --name=value, unless a\n"
    "word is a ${macro}.\n\n"
    "--listen ADDR:PORT is where trials report metrics over HTTP (default:\n"
    "127.0.0.1 on a free port; 0.0.0.0:PORT for trials on other machines).\n\n"
    "--gpus SPEC declares the GPUs trials are packed on instead of NVML's:\n"
    "none (CPU only), N, or e.g. 2x80GiB,80GiB:mig=3g.40gb+3g.40gb. Each\n"
    "trial gets the devices its `resources` ask for (default: one whole GPU)\n"
    "as CUDA_VISIBLE_DEVICES (docs/gpus.md).\n\n"
    "--backend slurm submits each trial as a Slurm batch job (docs/slurm.md);\n"
    "--slurm-arg ARG (repeatable) adds an sbatch option to every job, after\n"
    "the file's `slurm:` section, e.g. --slurm-arg=--partition=gpu. The sweep\n"
    "remembers them: `sweep resume` submits as `sweep run` did.\n\n"
    "--backend sim simulates a cluster on a virtual clock: each trial runs\n"
    "once, at once, with SWEEP_SIMULATE=1, prints its whole curve as\n"
    "@metrics lines (each may carry _seconds, the virtual seconds of that\n"
    "step), and the curve is replayed as if live (docs/simulation.md).\n"
    "--sim-fail-rate P kills each simulated attempt at a random point with\n"
    "probability P, drawn from the sweep's seed.\n";

static const char resume_help[] =
    "usage: sweep resume [SWEEP] [--run-cap N] [--parallel N] "
    "[--listen ADDR:PORT] [--gpus SPEC] [--slurm-arg ARG]... [--quiet]\n\n"
    "Continues SWEEP (id, id prefix or name; default: the latest) on the\n"
    "backend it was started on: trials\n"
    "still running are re-adopted, lost ones rerun from their checkpoint\n"
    "folder, finished ones are never run again. Running trials keep their\n"
    "GPUs; --gpus SPEC declares the GPUs (default: those `sweep run` was\n"
    "given, else NVML's). On Slurm, jobs still queued or running are\n"
    "adopted by their job ids, never submitted twice; --slurm-arg adds\n"
    "sbatch options to the jobs submitted from now on.\n\n"
    "--run-cap N continues the sweep, even a finished one, up to N trials\n"
    "of the same search: the search state is replayed from its runs (an\n"
    "adaptive search knows every result), nothing is run again.\n";

/* A probability: a number from 0 to 1, nothing after it. */
static bool parse_rate(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || *end || !isfinite(v) || v < 0 || v > 1)
        return false;
    *out = v;
    return true;
}

/* The --slurm-arg values, NULL-terminated, for the engine's options. */
typedef struct {
    char **v;
    size_t n;
} arg_list;

static void arg_push(arg_list *l, char *arg)
{
    l->v = sw_realloc(l->v, (l->n + 2) * sizeof(*l->v));
    l->v[l->n++] = arg;
    l->v[l->n] = NULL;
}

static int parse(sw_engine_opts *o, arg_list *slurm, int argc, char **argv,
                 const char *cmd, const char *help, bool *helped)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"parallel", required_argument, NULL, 'p'},
        {"seed", required_argument, NULL, 's'},
        {"name", required_argument, NULL, 'n'},
        {"backend", required_argument, NULL, 'b'},
        {"listen", required_argument, NULL, 'l'},
        {"gpus", required_argument, NULL, 'g'},
        {"slurm-arg", required_argument, NULL, 'S'},
        {"quiet", no_argument, NULL, 'q'},
        {"sim-fail-rate", required_argument, NULL, 'f'},
        {"run-cap", required_argument, NULL, 'r'},
        {NULL, 0, NULL, 0}};
    uint64_t v;
    int c;

    while ((c = getopt_long(argc, argv, "hqp:", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            *helped = true;
            return SW_EXIT_OK;
        } else if (c == 'p') {
            if (!sw_cli_parse_u64(optarg, &v) || v < 1 || v > 100000)
                return sw_cli_usage(cmd,
                                    "--parallel wants a count from 1, "
                                    "not '%s'",
                                    optarg);
            o->parallel = (int64_t)v;
        } else if (c == 's' && strcmp(cmd, "run") == 0) {
            if (!sw_cli_parse_u64(optarg, &o->seed))
                return sw_cli_usage(cmd,
                                    "--seed wants a non-negative "
                                    "integer, not '%s'",
                                    optarg);
            o->has_seed = true;
        } else if (c == 'n' && strcmp(cmd, "run") == 0) {
            o->name = optarg;
        } else if (c == 'b' && strcmp(cmd, "run") == 0) {
            o->backend = optarg;
        } else if (c == 'l') {
            o->listen = optarg;
        } else if (c == 'g') {
            o->gpus = optarg;
        } else if (c == 'S') {
            arg_push(slurm, optarg);
            o->backend_args = slurm->v;
        } else if (c == 'f' && strcmp(cmd, "run") == 0) {
            if (!parse_rate(optarg, &o->sim_fail_rate))
                return sw_cli_usage(cmd,
                                    "--sim-fail-rate wants a probability "
                                    "from 0 to 1, not '%s'",
                                    optarg);
        } else if (c == 'r' && strcmp(cmd, "resume") == 0) {
            if (!sw_cli_parse_u64(optarg, &v) || v < 1 || v > INT64_MAX)
                return sw_cli_usage(cmd,
                                    "--run-cap wants a count from 1, not "
                                    "'%s'",
                                    optarg);
            o->run_cap = (int64_t)v;
        } else if (c == 'q') {
            o->quiet = true;
        } else {
            return sw_cli_usage(cmd, "unknown option");
        }
    }
    return SW_EXIT_OK;
}

/* 2 for an invalid file; 128 + the signal (130 after Ctrl-C), as a shell
 * reports a command a signal ended, for an interrupted sweep. */
static int status_of(int error)
{
    if (error == SW_EINVALID)
        return SW_EXIT_USAGE;
    if (error == SW_EINTR)
        return 128 + (sw_engine_stopped_by() ? sw_engine_stopped_by() : 2);
    return error ? SW_EXIT_FAIL : SW_EXIT_OK;
}

int sw_cmd_run(int argc, char **argv)
{
    sw_engine_opts o = SW_ENGINE_OPTS_INIT;
    arg_list slurm = {NULL, 0};
    bool helped = false;
    int dash = sw_cli_double_dash(argc, argv);
    int status = parse(&o, &slurm, dash, argv, "run", run_help, &helped);

    if (status != SW_EXIT_OK || helped)
        goto done;
    status = SW_EXIT_USAGE;
    if (optind != dash - 1) {
        status = sw_cli_usage("run", "expected one sweep file");
        goto done;
    }
    if (slurm.n > 0 && (!o.backend || strcmp(o.backend, "slurm") != 0)) {
        status = sw_cli_usage("run", "--slurm-arg needs --backend slurm");
        goto done;
    }
    if (o.sim_fail_rate > 0 && (!o.backend || strcmp(o.backend, "sim") != 0)) {
        status = sw_cli_usage("run", "--sim-fail-rate needs --backend sim");
        goto done;
    }
    if (dash < argc) {
        if (dash + 1 == argc) {
            status = sw_cli_usage("run", "expected a command after --");
            goto done;
        }
        o.command = argv + dash + 1; /* NULL-terminated, as argv is */
    }
    status = status_of(sw_engine_run(argv[optind], &o));
done:
    free(slurm.v);
    return status;
}

int sw_cmd_resume(int argc, char **argv)
{
    sw_engine_opts o = SW_ENGINE_OPTS_INIT;
    arg_list slurm = {NULL, 0};
    bool helped = false;
    int status = parse(&o, &slurm, argc, argv, "resume", resume_help, &helped);

    if (status == SW_EXIT_OK && !helped && optind < argc - 1)
        status = sw_cli_usage("resume", "expected at most one sweep");
    else if (status == SW_EXIT_OK && !helped)
        status = status_of(
            sw_engine_resume(optind < argc ? argv[optind] : NULL, &o));
    free(slurm.v);
    return status;
}
