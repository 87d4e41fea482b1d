/*
 * cmd_validate.c - `sweep validate FILE`: checks a sweep file without
 * running anything. A valid file gets a description of its search space
 * and exit 0; an invalid one gets every problem, located, and exit 2.
 */
#include <getopt.h>
#include <string.h>

#include "orchestrator/cli/cli.h"

static const char help[] =
    "usage: sweep validate FILE\n\n"
    "Checks a sweep file (YAML or JSON) and describes its search space:\n"
    "each parameter, its distribution, and the grid size or 'unbounded'.\n"
    "Problems go to stderr as FILE:LINE:COLUMN: KEY: PROBLEM, all of them;\n"
    "the exit status is 2 when there is any.\n";

/* A grid must be one the search can hold (a q_uniform of 10^40 values is
 * not): run refuses it, so validate does too. */
static bool grid_fits(const sw_spec *spec)
{
    uint64_t n;
    bool saturated;

    if (spec->method != SW_METHOD_GRID ||
        sw_grid_size(spec, &n, &saturated) == SW_OK)
        return true;
    fprintf(stderr, "%s\n", sw_error_last());
    return false;
}

int sw_cmd_validate(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    sw_spec *spec = NULL;
    int c, status;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            return SW_EXIT_OK;
        }
        return sw_cli_usage("validate", "unknown option");
    }
    if (optind != argc - 1)
        return sw_cli_usage("validate", "expected one sweep file");
    status = sw_cli_load(&spec, argv[optind]);
    if (status != SW_EXIT_OK)
        return status;
    if (!grid_fits(spec)) {
        sw_spec_free(spec); /* refused as `sweep run` refuses it */
        return SW_EXIT_USAGE;
    }
    printf("%s: valid\n", argv[optind]);
    sw_cli_describe(stdout, spec);
    sw_spec_free(spec);
    return SW_EXIT_OK;
}
