/*
 * cmd_rm.c - `sweep rm SWEEP [--yes]` deletes a sweep: its rows in every
 * table of the store (one transaction, store_edit.c) and its runs'
 * folders under $SWEEP_HOME/runs/.
 *
 * It holds the sweep's lock throughout, as `sweep run` would, so a sweep
 * that runs is refused and none can start meanwhile; a sweep whose runs
 * are still marked running (its `sweep` was killed while trials ran) is
 * refused too, since its trials may still write their folders. Without
 * --yes it asks on a terminal and refuses elsewhere. The rows go first:
 * a folder that cannot be removed afterwards is an orphan, said, never a
 * half-removed sweep in the store.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/engine/engine.h"

static const char help[] =
    "usage: sweep rm SWEEP [--yes]\n\n"
    "Deletes SWEEP (id, id prefix or name): its runs, metrics, attempts,\n"
    "labels and export records in the store, and its runs' folders in\n"
    "$SWEEP_HOME/runs/. Refused while it runs. Asks first on a terminal;\n"
    "elsewhere --yes is needed.\n";

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0 && errno != ENOENT) {
        fprintf(stderr, "sweep rm: cannot remove %s: %s\n", path,
                strerror(errno));
        return 1;
    }
    return 0;
}

/* Removes the folder (or file) at `path` and all in it; false, said, when
 * some of it stays. */
static bool rm_tree(const char *path)
{
    if (access(path, F_OK) != 0)
        return true;
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

/* Whether the person at the terminal says yes to removing `s`. */
static bool confirmed(const sw_sweep_rec *s, size_t runs)
{
    char line[64];

    fprintf(stderr,
            "remove sweep %s%s%s%s (%zu runs and their folders)? [y/N] ", s->id,
            s->name ? " (" : "", s->name ? s->name : "", s->name ? ")" : "",
            runs);
    fflush(stderr);
    if (!fgets(line, sizeof(line), stdin))
        return false;
    return strcmp(line, "y\n") == 0 || strcmp(line, "yes\n") == 0 ||
           strcmp(line, "Y\n") == 0;
}

/* SW_EXIT_OK when no run of the sweep is marked running. */
static int none_running(const sw_sweep_rec *s, const sw_run_rec *runs, size_t n)
{
    size_t i, running = 0;

    for (i = 0; i < n; i++)
        running += runs[i].state == SW_RUN_RUNNING;
    if (running == 0)
        return SW_EXIT_OK;
    fprintf(stderr,
            "sweep rm: sweep %s has %zu runs marked running (its `sweep` "
            "was stopped while they ran, and they may still): `sweep resume "
            "%s`, then `sweep stop %s`, first\n",
            s->id, running, s->id, s->id);
    return SW_EXIT_FAIL;
}

/* Removes the runs' folders and the sweep's own files of the home. */
static int remove_files(const sw_sweep_rec *s, const sw_run_rec *runs, size_t n)
{
    const char *home = sw_engine_home();
    bool ok = true;
    char *path;
    size_t i;

    for (i = 0; i < n; i++) {
        path = sw_aprintf("%s/runs/%s", home, runs[i].id);
        ok = rm_tree(path) && ok;
        free(path);
    }
    path = sw_aprintf("%s/requests/%s", home, s->id);
    ok = rm_tree(path) && ok;
    free(path);
    return ok ? SW_EXIT_OK : SW_EXIT_FAIL;
}

static int parse(int argc, char **argv, bool *yes, bool *helped)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"yes", no_argument, NULL, 'y'},
                                         {NULL, 0, NULL, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "hy", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            *helped = true;
            return SW_EXIT_OK;
        } else if (c == 'y') {
            *yes = true;
        } else {
            return sw_cli_usage("rm", "unknown option");
        }
    }
    if (optind != argc - 1)
        return sw_cli_usage("rm", "expected one sweep");
    if (!*yes && !isatty(STDIN_FILENO))
        return sw_cli_usage("rm", "refusing to remove a sweep without --yes "
                                  "when stdin is not a terminal");
    return SW_EXIT_OK;
}

/* With the sweep found and locked: checks, asks, removes. */
static int remove_sweep(sw_store *st, const sw_sweep_rec *s, bool yes)
{
    sw_run_rec *runs = NULL;
    size_t n = 0, i;
    int status = SW_EXIT_FAIL;

    if (sw_store_list_runs(st, s->id, &runs, &n) != SW_OK) {
        fprintf(stderr, "sweep rm: %s\n", sw_error_last());
        goto done;
    }
    if ((status = none_running(s, runs, n)) != SW_EXIT_OK)
        goto done;
    status = SW_EXIT_FAIL;
    if (!yes && !confirmed(s, n)) {
        fprintf(stderr, "sweep rm: nothing removed\n");
        goto done;
    }
    if (sw_store_delete_sweep(st, s->id) != SW_OK) {
        fprintf(stderr, "sweep rm: %s\n", sw_error_last());
        goto done;
    }
    if ((status = remove_files(s, runs, n)) == SW_EXIT_OK)
        printf("removed sweep %s: %zu runs and their folders\n", s->id, n);
done:
    for (i = 0; i < n; i++)
        sw_run_rec_dispose(&runs[i]);
    free(runs);
    return status;
}

int sw_cmd_rm(int argc, char **argv)
{
    bool yes = false, helped = false;
    sw_store *st = NULL;
    sw_sweep_rec s;
    int status = parse(argc, argv, &yes, &helped), fd = -1;
    char *lock;

    if (status != SW_EXIT_OK || helped)
        return status;
    if ((status = sw_cli_open_store_as(&st, "rm", true)) != SW_EXIT_OK)
        return status;
    memset(&s, 0, sizeof(s));
    status = SW_EXIT_FAIL;
    if (sw_store_get_sweep(st, argv[optind], &s) != SW_OK)
        fprintf(stderr, "sweep rm: %s\n", sw_error_last());
    else if (sw_engine_lock(sw_engine_home(), s.id, &fd) != SW_OK)
        fprintf(stderr,
                "sweep rm: sweep %s is running: stop it first "
                "(`sweep stop %s`)\n",
                s.id, s.id);
    else
        status = remove_sweep(st, &s, yes);
    if (fd >= 0 && status == SW_EXIT_OK) {
        /* while it is held: no `sweep resume` takes it meanwhile */
        lock = sw_aprintf("%s/%s.lock", sw_engine_home(), s.id);
        unlink(lock);
        free(lock);
    }
    if (fd >= 0)
        close(fd);
    sw_sweep_rec_dispose(&s);
    sw_store_close(st);
    return status;
}
