/*
 * cmd_validate.c - `sweep validate FILE [--json]`: checks a sweep file
 * without running anything. A valid file gets a description of its search
 * space and exit 0; an invalid one gets every problem, located, and exit
 * 2 (1 when the file cannot be read). Problems always go to stderr, one
 * line each; --json also prints one object on stdout, valid or not, with
 * the problems and the description (docs/cli.md), so a script or an
 * editor reads both from one place.
 */
#include <getopt.h>
#include <string.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/engine/engine.h"

static const char help[] =
    "usage: sweep validate FILE [--json]\n\n"
    "Checks a sweep file (YAML or JSON) and describes its search space:\n"
    "each parameter, its distribution, and the grid size or 'unbounded'.\n"
    "Problems go to stderr as FILE:LINE:COLUMN: KEY: PROBLEM, all of them;\n"
    "the exit status is 2 when there is any. --json prints one object on\n"
    "stdout, valid or not: {\"file\", \"valid\", \"errors\", \"warnings\",\n"
    "\"problems\": [...], \"sweep\": {...} or null}.\n";

/* Loads and checks `path` into `diags`, printing each problem to stderr;
 * a problem that has no place in the file (it cannot be read, a grid the
 * search cannot hold) is added to `diags` too. Returns the exit status;
 * *out is set when the file is valid. */
static int check(sw_spec **out, const char *path, sw_diags *diags)
{
    uint64_t n;
    bool saturated;
    int error = sw_engine_check(out, path, NULL, NULL, diags);

    sw_diags_print(diags, stderr);
    if (error == SW_OK && (*out)->method == SW_METHOD_GRID &&
        sw_grid_size(*out, &n, &saturated) != SW_OK) {
        /* refused as `sweep run` refuses it */
        sw_spec_free(*out);
        *out = NULL;
        error = SW_EINVALID;
    }
    if (error != SW_OK && diags->errors == 0) {
        fprintf(stderr, "%s\n", sw_error_last());
        sw_diags_add(diags, false, 0, 0, NULL, "%s", sw_error_last());
    }
    return error == SW_OK         ? SW_EXIT_OK
           : error == SW_EINVALID ? SW_EXIT_USAGE
                                  : SW_EXIT_FAIL;
}

/* {"severity", "line", "column", "key", "message"}: one problem. */
static sw_value *problem_value(const sw_diag *g)
{
    sw_value *v = sw_value_map();

    sw_value_map_set(v, "severity",
                     sw_value_str(g->warning ? "warning" : "error"));
    sw_value_map_set(v, "line",
                     g->line > 0 ? sw_value_int(g->line) : sw_value_null());
    sw_value_map_set(v, "column",
                     g->line > 0 ? sw_value_int(g->col) : sw_value_null());
    sw_value_map_set(v, "key",
                     g->path[0] ? sw_value_str(g->path) : sw_value_null());
    sw_value_map_set(v, "message", sw_value_str(g->msg));
    return v;
}

static void print_json(const char *path, const sw_diags *diags,
                       const sw_spec *spec)
{
    sw_value *v = sw_value_map(), *problems = sw_value_list();
    sw_buf b = SW_BUF_INIT;

    for (size_t i = 0; i < diags->len; i++)
        sw_value_list_push(problems, problem_value(&diags->items[i]));
    sw_value_map_set(v, "file", sw_value_str(path));
    sw_value_map_set(v, "valid", sw_value_bool(spec != NULL));
    sw_value_map_set(v, "errors", sw_value_int((int64_t)diags->errors));
    sw_value_map_set(v, "warnings",
                     sw_value_int((int64_t)(diags->len - diags->errors)));
    sw_value_map_set(v, "problems", problems);
    sw_value_map_set(v, "sweep",
                     spec ? sw_cli_describe_value(spec) : sw_value_null());
    sw_value_write_json(&b, v, false);
    printf("%s\n", sw_buf_cstr(&b));
    sw_buf_dispose(&b);
    sw_value_free(v);
}

int sw_cmd_validate(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"json", no_argument, NULL, 'j'},
                                         {NULL, 0, NULL, 0}};
    sw_spec *spec = NULL;
    sw_diags diags;
    bool json = false;
    int c, status;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            return SW_EXIT_OK;
        }
        if (c != 'j')
            return sw_cli_usage("validate", "unknown option");
        json = true;
    }
    if (optind != argc - 1)
        return sw_cli_usage("validate", "expected one sweep file");
    sw_diags_init(&diags, argv[optind]);
    status = check(&spec, argv[optind], &diags);
    if (json) {
        print_json(argv[optind], &diags, spec);
    } else if (spec) {
        printf("%s: valid\n", argv[optind]);
        sw_cli_describe(stdout, spec);
    }
    sw_diags_dispose(&diags);
    sw_spec_free(spec);
    return status;
}
