/*
 * cmd_export.c - `sweep export wandb SWEEP --entity E --project P
 * [--run RUN]... [--dry-run] [--quiet]`: the sweep's runs in Weights &
 * Biases, as if they had been logged there (docs/wandb.md).
 *
 * It opens the store for writing (what was sent is recorded there, so a
 * second export sends only what is new and a killed one continues), and
 * leaves the work to export.c. Progress goes to stderr on a terminal; the
 * result, one line and the sweep's address, to stdout. A dry run sends
 * and records nothing and prints what it would do: a summary (runs,
 * history rows, bytes, what it would create in W&B), and with --verbose
 * the requests themselves, as JSON lines, before it.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/export.h"

static const char help[] =
    "usage: sweep export wandb SWEEP --entity E --project P [--run RUN]...\n"
    "                          [--dry-run [--verbose]] [--quiet] [--resend]\n\n"
    "Writes the sweep's runs to Weights & Biases over its API: config,\n"
    "metric history, summary, state, git commit and diff, under one W&B\n"
    "sweep. Safe to run again (only what is new is sent) and to interrupt.\n\n"
    "  --entity E    the W&B entity (default: the sweep file's, WANDB_ENTITY)\n"
    "  --project P   the W&B project (default: the sweep file's,\n"
    "                WANDB_PROJECT)\n"
    "  --run RUN     only this run (repeatable; RUN or its number)\n"
    "  --dry-run     send and record nothing; say what would be sent and\n"
    "                made (runs, history rows, bytes); --entity and\n"
    "                --project are not needed\n"
    "  --verbose     with --dry-run, print each request too, as JSON lines\n"
    "  --quiet       no progress and no summary line\n"
    "  --resend      forget earlier exports to this project (after runs\n"
    "                were deleted in W&B): a new W&B sweep, every run again\n\n"
    "The API key is WANDB_API_KEY, else ~/.netrc (`wandb login`);\n"
    "WANDB_BASE_URL sets the server. See docs/wandb.md.\n";

typedef struct {
    sw_export_opts o;
    const char **runs;
    bool quiet, helped, verbose;
} args;

/* A positive number from the environment variable `name`, or `dflt`. */
static double env_number(const char *name, double dflt)
{
    const char *s = getenv(name);
    char *end;
    double v;

    if (!s || !*s)
        return dflt;
    v = strtod(s, &end);
    return *end || !(v > 0) ? dflt : v;
}

static int parse(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"entity", required_argument, NULL, 'e'},
        {"project", required_argument, NULL, 'p'},
        {"run", required_argument, NULL, 'r'},
        {"dry-run", no_argument, NULL, 'n'},
        {"quiet", no_argument, NULL, 'q'},
        {"resend", no_argument, NULL, 'R'},
        {"verbose", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "he:p:r:nq", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            a->helped = true;
            return SW_EXIT_OK;
        } else if (c == 'e') {
            a->o.wandb.entity = optarg;
        } else if (c == 'p') {
            a->o.wandb.project = optarg;
        } else if (c == 'r') {
            a->runs = sw_realloc(a->runs, (a->o.n_runs + 1) * sizeof(char *));
            a->runs[a->o.n_runs++] = optarg;
            a->o.runs = a->runs;
        } else if (c == 'n') {
            a->o.wandb.dry_run = stdout;
        } else if (c == 'q') {
            a->quiet = true;
        } else if (c == 'R') {
            a->o.resend = true;
        } else if (c == 'v') {
            a->verbose = true;
        } else {
            return sw_cli_usage("export", "unknown option");
        }
    }
    if (optind != argc - 1)
        return sw_cli_usage("export", "expected one sweep (its id or name)");
    if (a->verbose && !a->o.wandb.dry_run)
        return sw_cli_usage("export", "--verbose goes with --dry-run");
    a->o.sweep = argv[optind];
    return SW_EXIT_OK;
}

/* A byte count for people: "812 B", "3.4 KiB", "12.0 MiB". */
static void put_bytes(FILE *out, int64_t n)
{
    if (n < 1024)
        fprintf(out, "%lld B", (long long)n);
    else if (n < 1024 * 1024)
        fprintf(out, "%.1f KiB", (double)n / 1024);
    else
        fprintf(out, "%.1f MiB", (double)n / (1024 * 1024));
}

/* What a dry run would have done, for people (on stderr under --verbose,
 * so stdout holds only the requests). */
static void dry_summary(FILE *out, const sw_export_stats *s)
{
    fprintf(out, "dry run: nothing sent, nothing recorded\n");
    fprintf(out, "  destination  %s%s\n", s->dest ? s->dest : "?",
            s->placeholder ? " (ENTITY, PROJECT: not given; --entity and "
                             "--project say where)"
                           : "");
    fprintf(out, "  sweep        %s\n",
            s->new_sweep ? "a new W&B sweep (UpsertSweep)"
                         : "the W&B sweep an earlier export made");
    fprintf(out,
            "  runs         %lld of %lld with something to send: %lld new "
            "W&B runs, %lld updated\n",
            (long long)s->sent, (long long)s->runs, (long long)s->new_runs,
            (long long)(s->sent - s->new_runs));
    fprintf(out, "  history      %lld rows\n", (long long)s->rows);
    fprintf(out, "  files        %lld (wandb-metadata.json, diff.patch)\n",
            (long long)s->files);
    fprintf(out, "  requests     %lld, ", (long long)s->requests);
    put_bytes(out, s->bytes);
    fprintf(out, " of request bodies\n");
}

static void report(const args *a, const sw_export_stats *s, double secs)
{
    if (a->quiet)
        return;
    if (a->o.wandb.dry_run) {
        dry_summary(a->verbose ? stderr : stdout, s);
        return;
    }
    printf("exported %lld runs to W&B (%lld with something new): %lld "
           "history rows in %lld requests, %.1f s\n",
           (long long)s->runs, (long long)s->sent, (long long)s->rows,
           (long long)s->requests, secs);
    if (s->sweep_url)
        printf("%s\n", s->sweep_url);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int sw_cmd_export(int argc, char **argv)
{
    args a = {.o = {.wandb = SW_WANDB_OPTS_INIT}};
    sw_export_stats stats;
    sw_store *st = NULL;
    double t0 = now_s();
    int status, error;

    if (argc < 2 || strcmp(argv[1], "wandb") != 0) {
        if (argc >= 2 &&
            (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            fputs(help, stdout);
            return SW_EXIT_OK;
        }
        return sw_cli_usage("export", "export to where? (`wandb` is the one "
                                      "destination)");
    }
    status = parse(argc - 1, argv + 1, &a);
    if (status != SW_EXIT_OK || a.helped ||
        (status = sw_cli_open_store_as(&st, "export", true)))
        goto done;
    if (a.o.wandb.dry_run && !a.verbose &&
        !(a.o.wandb.dry_run = fopen("/dev/null", "w"))) {
        fprintf(stderr, "sweep export: cannot open /dev/null\n");
        status = SW_EXIT_FAIL;
        goto done;
    }
    a.o.wandb.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    a.o.wandb.max_request = (size_t)env_number("SWEEP_WANDB_MAX_REQUEST", 0);
    a.o.wandb.backoff_s = env_number("SWEEP_WANDB_BACKOFF", 0);
    a.o.wandb.timeout_s = env_number("SWEEP_WANDB_TIMEOUT", 0);
    a.o.progress = !a.quiet && isatty(STDERR_FILENO);
    a.o.wandb.notices = a.quiet ? NULL : stderr;
    error = sw_export_wandb(st, &a.o, &stats);
    if (error == SW_OK)
        report(&a, &stats, now_s() - t0);
    else
        fprintf(stderr, "sweep export: %s\n", sw_error_last());
    status = error == SW_EUSAGE ? SW_EXIT_USAGE
             : error            ? SW_EXIT_FAIL
                                : SW_EXIT_OK;
    sw_export_stats_dispose(&stats);
done:
    if (a.o.wandb.dry_run && a.o.wandb.dry_run != stdout)
        fclose(a.o.wandb.dry_run);
    sw_store_close(st);
    free(a.runs);
    return status;
}
