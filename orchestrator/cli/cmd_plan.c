/*
 * cmd_plan.c - `sweep plan FILE [-n N] [--seed S] [--json]`: the first N
 * trials of a sweep and their command lines, exactly as `sweep run` would
 * start them, without running anything. The search is lazy, so a grid of
 * 10^12 points answers at once. Where the trials depend on a seed that
 * `sweep run` would draw at random, a note on stderr says so. A file with
 * neither `program` nor `command` (written for wandb.agent) shows its
 * trials' parameters, and their command lines once `-- COMMAND...` gives
 * one, as `sweep run` takes it.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/engine/engine.h"

static const char help[] =
    "usage: sweep plan FILE [-n N] [--seed S] [--json] [-- COMMAND...]\n\n"
    "Prints the first N trials (default 10) of the sweep and the argv each\n"
    "would be started with. --seed sets the seed of random methods (default:\n"
    "the file's `seed`, else 0; `sweep run` picks a random one instead, so\n"
    "give it the same --seed, or put `seed:` in the file). --json prints\n"
    "one object per line: {\"params\": {...}, \"argv\": [...]}.\n"
    "-- COMMAND... replaces the file's command, as in `sweep run`; a file\n"
    "with neither `program` nor `command` shows only its trials' params\n"
    "without one (\"argv\": null).\n";

typedef struct {
    uint64_t n;
    uint64_t seed;
    bool has_seed;
    bool json;
} plan_opts;

static int parse(plan_opts *o, int argc, char **argv, bool *helped)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"seed", required_argument, NULL, 's'},
                                         {NULL, 0, NULL, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "hn:", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            *helped = true;
            return SW_EXIT_OK;
        } else if (c == 'j') {
            o->json = true;
        } else if (c == 'n') {
            if (!sw_cli_parse_u64(optarg, &o->n))
                return sw_cli_usage("plan", "-n wants a count, not '%s'",
                                    optarg);
        } else if (c == 's') {
            if (!sw_cli_parse_u64(optarg, &o->seed))
                return sw_cli_usage("plan",
                                    "--seed wants a non-negative "
                                    "integer, not '%s'",
                                    optarg);
            o->has_seed = true;
        } else {
            return sw_cli_usage("plan", "unknown option");
        }
    }
    if (optind != argc - 1)
        return sw_cli_usage("plan", "expected one sweep file");
    return SW_EXIT_OK;
}

static void print_json(const sw_trial *t, char **argv)
{
    sw_value *obj = sw_value_map(), *list = argv ? sw_value_list() : NULL;
    sw_buf b = SW_BUF_INIT;
    size_t i;

    for (i = 0; argv && argv[i]; i++)
        sw_value_list_push(list, sw_value_str(argv[i]));
    if (!list)
        list = sw_value_null();
    sw_value_map_set(obj, "params", sw_value_clone(t->params));
    sw_value_map_set(obj, "argv", list);
    sw_value_write_json(&b, obj, false);
    printf("%s\n", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    sw_value_free(obj);
}

static void print_human(const sw_trial *t, char **argv)
{
    sw_buf b = SW_BUF_INIT;

    if (argv)
        sw_cli_quote_argv(&b, argv);
    else /* no command: what it would be given */
        sw_value_write_json(&b, t->params, false);
    printf("%5llu  %s  %s\n", (unsigned long long)t->index + 1, t->id,
           sw_buf_cstr(&b));
    sw_buf_dispose(&b);
}

static int print_trial(const sw_spec *spec, const sw_trial *t, bool json)
{
    sw_command_opts co = SW_COMMAND_OPTS_INIT;
    char **argv = NULL;

    co.interpreter = sw_command_interpreter();
    co.keep_envvars = true; /* as stored: a variable may hold a secret */
    if (!spec->command && !spec->program) {
        (json ? print_json : print_human)(t, NULL);
        return SW_EXIT_OK;
    }
    if (sw_command_render(&argv, NULL, spec, t->params, &co) != SW_OK) {
        fprintf(stderr, "sweep plan: %s\n", sw_error_last());
        return SW_EXIT_FAIL;
    }
    if (json)
        print_json(t, argv);
    else
        print_human(t, argv);
    sw_command_free(argv);
    return SW_EXIT_OK;
}

static void print_header(const sw_spec *spec, const sw_search *s,
                         const plan_opts *o)
{
    uint64_t count;
    bool bounded, saturated;

    sw_search_size(s, &count, &bounded, &saturated);
    if (spec->method == SW_METHOD_PBT) /* the rest come from exploits */
        printf("trials: the population of %llu, then one for each exploit; "
               "the first %llu (seed %llu):\n",
               (unsigned long long)count,
               (unsigned long long)(o->n < count ? o->n : count),
               (unsigned long long)o->seed);
    else if (!bounded)
        printf("trials: unbounded; the first %llu (seed %llu):\n",
               (unsigned long long)o->n, (unsigned long long)o->seed);
    else
        printf("trials: %s%llu; the first %llu (seed %llu):\n",
               saturated ? "more than " : "", (unsigned long long)count,
               (unsigned long long)(o->n < count ? o->n : count),
               (unsigned long long)o->seed);
}

/* Without `seed:` in the file, `sweep run` draws a random seed unless it
 * is given one, so the trials of a method that uses the seed (all but
 * grid) are previewed only if run gets the seed plan used: said on
 * stderr, which keeps --json output clean. */
static void note_seed(const sw_spec *spec, const plan_opts *o)
{
    unsigned long long seed = (unsigned long long)o->seed;

    if (spec->has_seed || spec->method == SW_METHOD_GRID)
        return;
    if (o->has_seed)
        fprintf(stderr,
                "sweep plan: note: these are the trials of seed %llu; "
                "`sweep run` picks a random seed unless given --seed "
                "%llu too (or `seed: %llu` in the file)\n",
                seed, seed, seed);
    else
        fprintf(stderr,
                "sweep plan: note: these are the trials of seed %llu (no "
                "--seed, no `seed:` in the file); `sweep run` would pick a "
                "random seed: run it with --seed %llu, or add `seed: %llu` "
                "to the file, to get these trials\n",
                seed, seed, seed);
}

static int plan(const sw_spec *spec, const plan_opts *o)
{
    sw_search *s = NULL;
    sw_trial t;
    uint64_t i;
    int status = SW_EXIT_OK;

    if (sw_search_new(&s, spec, o->seed) != SW_OK) {
        /* named as `sweep run` names it: the search puts the file in */
        fprintf(stderr, "%s\n", sw_error_last());
        return SW_EXIT_USAGE;
    }
    if (!o->json)
        print_header(spec, s, o);
    sw_trial_init(&t);
    for (i = 0; i < o->n && status == SW_EXIT_OK; i++) {
        if (sw_search_next(s, &t) != SW_OK)
            break;
        status = print_trial(spec, &t, o->json);
        sw_trial_dispose(&t);
    }
    sw_search_free(s);
    if (status == SW_EXIT_OK) {
        fflush(stdout); /* the note comes last on a terminal */
        note_seed(spec, o);
    }
    return status;
}

int sw_cmd_plan(int argc, char **argv)
{
    plan_opts o = {10, 0, false, false};
    sw_spec *spec = NULL;
    bool helped = false;
    int dash = sw_cli_double_dash(argc, argv), status;

    status = parse(&o, dash, argv, &helped);
    if (status != SW_EXIT_OK || helped)
        return status;
    if (dash + 1 == argc)
        return sw_cli_usage("plan", "expected a command after --");
    status = sw_engine_load(&spec, argv[optind], NULL,
                            dash < argc ? argv + dash + 1 : NULL);
    if (status != SW_OK)
        return status == SW_EINVALID ? SW_EXIT_USAGE : SW_EXIT_FAIL;
    if (!o.has_seed && spec->has_seed)
        o.seed = spec->seed;
    status = plan(spec, &o);
    sw_spec_free(spec);
    return status;
}
