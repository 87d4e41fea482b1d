/*
 * cmd_tag.c - `sweep tag RUN TAG... [--rm]` labels a run with tags, and
 * `sweep note RUN TEXT` gives it a note: stored in the tags and notes
 * tables (store_edit.c), shown by `sweep ls SWEEP` and `sweep show`, and
 * sent by `sweep export wandb` as the W&B run's tags and notes.
 *
 * Labels are not the engine's: they live in tables it never writes, so a
 * run is labelled while its sweep runs without racing its updates. Every
 * tag is checked before any is stored (W&B's own limit: 64 characters),
 * so a bad one changes nothing.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/cli/cli.h"

#define TAG_MAX 64           /* characters, as W&B allows */
#define NOTE_MAX (64 * 1024) /* bytes */

static const char tag_help[] =
    "usage: sweep tag RUN TAG... [--rm]\n\n"
    "Adds the tags to run RUN (each once), or with --rm takes them off.\n"
    "A tag is 1 to 64 characters, no spaces or control characters at its\n"
    "ends. `sweep ls SWEEP` and `sweep show` show them; `sweep export\n"
    "wandb` sends them as the W&B run's tags.\n";

static const char note_help[] =
    "usage: sweep note RUN TEXT...\n\n"
    "Sets the note of run RUN to TEXT (the words joined by spaces),\n"
    "replacing any; an empty TEXT (\"\") removes it. Shown by `sweep ls\n"
    "SWEEP` and `sweep show`; `sweep export wandb` sends it as the W&B\n"
    "run's notes.\n";

/* Characters, counting UTF-8 sequences as one. */
static size_t chars(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* Whether `tag` is one W&B takes; says why not. */
static bool tag_ok(const char *tag)
{
    size_t len = strlen(tag);
    const char *p;

    for (p = tag; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            break;
    if (len == 0 || *p || tag[0] == ' ' || tag[len - 1] == ' ' ||
        chars(tag) > TAG_MAX) {
        fprintf(stderr,
                "sweep tag: '%s' is not a tag: 1 to %d characters, without "
                "control characters or spaces at its ends\n",
                tag, TAG_MAX);
        return false;
    }
    return true;
}

static int parse(int argc, char **argv, const char *cmd, const char *help,
                 bool *remove, bool *helped)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"rm", no_argument, NULL, 'r'},
                                         {NULL, 0, NULL, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            *helped = true;
            return SW_EXIT_OK;
        } else if (c == 'r' && remove) {
            *remove = true;
        } else {
            return sw_cli_usage(cmd, "unknown option");
        }
    }
    if (argc - optind < 2)
        return sw_cli_usage(cmd, remove ? "expected a run and its tags"
                                        : "expected a run and its note");
    return SW_EXIT_OK;
}

/* Opens the store for writing and checks that run `id` is there. */
static int open_run(sw_store **st, const char *cmd, const char *id)
{
    sw_run_rec r;
    int status = sw_cli_open_store_as(st, cmd, true);

    if (status != SW_EXIT_OK)
        return status;
    if (sw_store_get_run(*st, id, &r) != SW_OK) {
        fprintf(stderr, "sweep %s: %s\n", cmd, sw_error_last());
        return SW_EXIT_FAIL;
    }
    sw_run_rec_dispose(&r);
    return SW_EXIT_OK;
}

/* Says which tags run `id` has now. */
static void print_tags(sw_store *st, const char *id)
{
    sw_labels l;

    if (sw_store_run_labels(st, id, &l) != SW_OK)
        return;
    printf("run %s tags:", id);
    for (size_t i = 0; i < l.n_tags; i++)
        printf("%s %s", i ? "," : "", l.tags[i]);
    printf("%s\n", l.n_tags ? "" : " none");
    sw_labels_dispose(&l);
}

int sw_cmd_tag(int argc, char **argv)
{
    bool remove = false, helped = false;
    sw_store *st = NULL;
    int status = parse(argc, argv, "tag", tag_help, &remove, &helped), i;

    if (status != SW_EXIT_OK || helped)
        return status;
    for (i = optind + 1; i < argc; i++)
        if (!tag_ok(argv[i]))
            return SW_EXIT_USAGE;
    if ((status = open_run(&st, "tag", argv[optind])) == SW_EXIT_OK &&
        sw_store_tag_run(st, argv[optind], argv + optind + 1,
                         (size_t)(argc - optind - 1), remove) != SW_OK) {
        fprintf(stderr, "sweep tag: %s\n", sw_error_last());
        status = SW_EXIT_FAIL;
    }
    if (status == SW_EXIT_OK)
        print_tags(st, argv[optind]);
    sw_store_close(st);
    return status;
}

int sw_cmd_note(int argc, char **argv)
{
    sw_buf text = SW_BUF_INIT;
    bool helped = false;
    sw_store *st = NULL;
    int status = parse(argc, argv, "note", note_help, NULL, &helped), i;

    if (status != SW_EXIT_OK || helped)
        return status;
    for (i = optind + 1; i < argc; i++)
        sw_buf_printf(&text, "%s%s", i > optind + 1 ? " " : "", argv[i]);
    if (text.len > NOTE_MAX) {
        fprintf(stderr, "sweep note: a note is at most %d bytes, not %zu\n",
                NOTE_MAX, text.len);
        status = SW_EXIT_USAGE;
    } else if ((status = open_run(&st, "note", argv[optind])) == SW_EXIT_OK &&
               sw_store_note_run(st, argv[optind], sw_buf_cstr(&text)) !=
                   SW_OK) {
        fprintf(stderr, "sweep note: %s\n", sw_error_last());
        status = SW_EXIT_FAIL;
    } else if (status == SW_EXIT_OK) {
        printf("run %s note %s\n", argv[optind], text.len ? "set" : "removed");
    }
    sw_buf_dispose(&text);
    sw_store_close(st);
    return status;
}
