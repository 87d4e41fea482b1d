/*
 * main.c - the `sweep` tool: finds the subcommand in the table and runs
 * it. Each command lives in its own cmd_<name>.c.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "orchestrator/cli/cli.h"

#define SW_VERSION "0.1.0"

static const sw_cli_command commands[] = {
    {"validate", sw_cmd_validate, "FILE [--json]",
     "check a sweep file and describe its search space"},
    {"plan", sw_cmd_plan, "FILE [-n N] [--seed S] [--json]",
     "print the first N trials and their command lines, running nothing"},
    {"run", sw_cmd_run, "FILE [--parallel N] [--seed N] [--name NAME]",
     "create a sweep and run it to its end"},
    {"resume", sw_cmd_resume, "[SWEEP] [--run-cap N]",
     "continue a sweep after Ctrl-C or a crash, or with more trials"},
    {"ls", sw_cmd_ls, "[SWEEP] [--json|--csv]",
     "sweeps, or the runs of one sweep"},
    {"show", sw_cmd_show, "RUN [--json]",
     "one run: params, state, git, metrics"},
    {"best", sw_cmd_best, "[SWEEP] [--top N] [--json|--csv]",
     "the best runs by the sweep's metric"},
    {"report", sw_cmd_report, "[SWEEP] [--price USD] [--json] [--plot F.svg]",
     "GPU time used, idle, saved by stopping, lost to failures; its cost"},
    {"query", sw_cmd_query, "SQL [--json|--csv]",
     "read-only SQL over the store"},
    {"gpus", sw_cmd_gpus, "[FILE] [--gpus SPEC] [--json]",
     "the GPUs and MIG slices sweep sees, and what a sweep fits on them"},
    {"reproduce", sw_cmd_reproduce, "RUN [DIR] [--json]",
     "the exact code a run started with, and how to run it again"},
    {"stop", sw_cmd_stop, "RUN... | SWEEP",
     "stop running runs by hand, or a sweep as Ctrl-C does"},
    {"tag", sw_cmd_tag, "RUN TAG... [--rm]", "label a run with tags"},
    {"note", sw_cmd_note, "RUN TEXT", "give a run a note"},
    {"rm", sw_cmd_rm, "SWEEP [--yes]",
     "delete a sweep: its rows and its runs' folders"},
    {"compare", sw_cmd_compare, "SWEEP SWEEP... [--json]",
     "sweeps side by side: runs, best, GPU time, occupancy, spend"},
    {"ui", sw_cmd_ui, "[SWEEP] [--listen ADDR:PORT]",
     "the dashboard in a browser, for sweeps that have ended"},
    {"export", sw_cmd_export, "wandb SWEEP --entity E --project P",
     "the sweep's runs in Weights & Biases (--dry-run prints them)"},
};

static const size_t n_commands = sizeof(commands) / sizeof(commands[0]);

static void usage(FILE *out)
{
    size_t i;

    fprintf(out, "usage: sweep COMMAND [ARGS]\n\ncommands:\n");
    for (i = 0; i < n_commands; i++)
        fprintf(out, "  %-9s %-44s %s\n", commands[i].name, commands[i].usage,
                commands[i].summary);
    fprintf(out, "\nsweep COMMAND --help shows a command's options.\n");
}

/* OpenBLAS (loaded for the GP search) starts a thread per core as it
 * loads, each spinning about 0.1 s before it sleeps: CPU time that a short
 * command (sweep ls, show, --help) paid many times over, a core's worth
 * per core. It is held to one thread first, then its threads are
 * stopped: in that order, as setting the number after the stop starts
 * them again (and a sweep paid the 0.1 s of spinning anyway), while one
 * thread's BLAS calls start none. Looked up at run time: other BLAS
 * builds have neither. */
static void stop_blas_threads(void)
{
    void (*set)(int) = NULL;
    int (*stop)(void) = NULL;
    void *sym = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");

    memcpy(&set, &sym, sizeof(set));
    sym = dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
    memcpy(&stop, &sym, sizeof(stop));
    if (set)
        set(1);
    if (stop)
        stop();
}

int main(int argc, char **argv)
{
    size_t i;

    stop_blas_threads();
    if (argc < 2) {
        usage(stderr);
        return SW_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return SW_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("sweep %s\n", SW_VERSION);
        return SW_EXIT_OK;
    }
    for (i = 0; i < n_commands; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "sweep: unknown command '%s' (see sweep --help)\n",
            argv[1]);
    return SW_EXIT_USAGE;
}
