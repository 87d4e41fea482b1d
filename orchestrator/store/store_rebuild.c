/*
 * store_rebuild.c - rebuilding a table with one CHECK (column IN (...))
 * made from a vocabulary list (vocab.h), for the migration steps that
 * follow a list (store_schema.c).
 *
 * SQLite cannot alter a constraint, so this is its documented rebuild
 * (https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of
 * Table Schema Changes"): a new table from the current CREATE statement
 * with only that clause replaced, so every column, default, NOT NULL,
 * UNIQUE and PRIMARY KEY stays as it was; every row copied with its
 * rowid; the old table dropped, the new one renamed to its name; its
 * indexes and triggers made again. A table whose CHECK holds the list's
 * words already, in its order, is left as it is (a new store: its CREATE
 * wrote the same words). It runs inside the migration's
 * transaction, with foreign keys off (migrate() sees to it): other tables
 * reference the table by name, and those references hold again once the
 * new table has the name. The store has no views.
 */
#include <stdlib.h>
#include <string.h>

#include "orchestrator/store/store_internal.h"

/* The one text column of the rows of `sql`, bound to `arg`, each
 * appended to out[] (*n of them); the caller frees them. */
static int texts(const sw_store *st, const char *sql, const char *arg,
                 char ***out, size_t *n)
{
    sqlite3_stmt *s = NULL;
    size_t cap = 0;
    int rc, error = sw_store__prepare(st, sql, &s, "rebuild: schema");

    if (error < 0)
        return error;
    sqlite3_bind_text(s, 1, arg, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        sw_grow(out, &cap, *n + 1, sizeof(**out));
        (*out)[(*n)++] = sw_store__col_str(s, 0);
    }
    if (rc != SQLITE_DONE)
        error = sw_store__fail(st, "rebuild %s: schema", arg);
    sqlite3_finalize(s);
    return error;
}

static void free_texts(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The end of the parenthesised text that starts at `p` ('('), past its
 * ')', skipping quoted strings; NULL when it does not close. */
static const char *past_parens(const char *p)
{
    int depth = 0;

    for (; *p; p++) {
        if (*p == '\'') {
            while (*++p && *p != '\'')
                ;
            if (!*p)
                return NULL;
        } else if (*p == '(') {
            depth++;
        } else if (*p == ')' && --depth == 0) {
            return p + 1;
        }
    }
    return NULL;
}

/* `create` (a CREATE TABLE statement) as the CREATE of table `name`, its
 * CHECK (column IN (...)) replaced by one of the words of `v`; 1, and
 * nothing written, when it holds exactly those words already. */
static int new_create(const sw_store *st, sw_buf *out, const char *create,
                      const char *name, const char *column, sw_vocab v)
{
    sw_buf check = SW_BUF_INIT;
    const char *body = strchr(create, '('), *at, *end = NULL;
    int same;

    sw_buf_printf(&check, "CHECK (%s IN ", column);
    at = strstr(create, sw_buf_cstr(&check));
    if (at && at[check.len] == '(')
        end = past_parens(at + check.len);
    while (end && *end == ' ')
        end++;
    if (!body || !end || *end != ')' || at < body) {
        sw_buf_dispose(&check);
        return sw_error_set(SW_EINVALID,
                            "store %s: migrate: no CHECK (%s IN (...)) to "
                            "rebuild in: %s",
                            st->path, column, create);
    }
    sw_vocab_sql_list(&check, v);
    sw_buf_putc(&check, ')');
    same = (size_t)(end + 1 - at) == check.len &&
           memcmp(at, check.ptr, check.len) == 0;
    if (!same) {
        sw_buf_printf(out, "CREATE TABLE \"%s\" ", name);
        sw_buf_put(out, body, (size_t)(at - body));
        sw_buf_puts(out, sw_buf_cstr(&check));
        sw_buf_puts(out, end + 1);
    }
    sw_buf_dispose(&check);
    return same;
}

/* The table's columns, quoted and comma-separated, for the copy. */
static int columns(const sw_store *st, const char *table, sw_buf *out)
{
    char **names = NULL;
    size_t n = 0;
    int error =
        texts(st, "SELECT name FROM pragma_table_info(?1)", table, &names, &n);

    for (size_t i = 0; error == SW_OK && i < n; i++)
        sw_buf_printf(out, "%s\"%s\"", i ? ", " : "", names[i]);
    free_texts(names, n);
    return error;
}

/* Runs the statements of the rebuild, in order. */
static int run_all(const sw_store *st, const sw_buf *steps, size_t n)
{
    int error = SW_OK;

    for (size_t i = 0; error == SW_OK && i < n; i++)
        error = sw_store__exec(st, sw_buf_cstr(&steps[i]), "migrate: rebuild");
    return error;
}

/* The four statements of the rebuild of `table` into step[], from the
 * new table's CREATE in step[0]. */
static int copy_steps(const sw_store *st, const char *table, const char *tmp,
                      sw_buf step[4])
{
    sw_buf cols = SW_BUF_INIT;
    int error = columns(st, table, &cols);

    if (error == SW_OK) {
        sw_buf_printf(&step[1],
                      "INSERT INTO \"%s\" (rowid, %s) SELECT rowid, %s FROM "
                      "\"%s\" ORDER BY rowid",
                      tmp, sw_buf_cstr(&cols), sw_buf_cstr(&cols), table);
        sw_buf_printf(&step[2], "DROP TABLE \"%s\"", table);
        sw_buf_printf(&step[3], "ALTER TABLE \"%s\" RENAME TO \"%s\"", tmp,
                      table);
    }
    sw_buf_dispose(&cols);
    return error;
}

int sw_store__rebuild_check(const sw_store *st, const char *table,
                            const char *column, sw_vocab v)
{
    char **create = NULL, **extra = NULL;
    size_t n_create = 0, n_extra = 0, i;
    sw_buf step[4] = {SW_BUF_INIT, SW_BUF_INIT, SW_BUF_INIT, SW_BUF_INIT};
    char *tmp = sw_aprintf("sw_rebuild_%s", table);
    int error = texts(st,
                      "SELECT sql FROM sqlite_master WHERE type = 'table'"
                      " AND name = ?1",
                      table, &create, &n_create);

    if (error == SW_OK && n_create != 1)
        error = sw_error_set(SW_EINVALID, "store %s: migrate: no table %s",
                             st->path, table);
    if (error == SW_OK &&
        (error = new_create(st, &step[0], create[0], tmp, column, v)) == 1)
        error = SW_OK; /* the CHECK holds the list already */
    else if (error == SW_OK)
        error = texts(st,
                      "SELECT sql FROM sqlite_master WHERE tbl_name = ?1"
                      " AND type IN ('index', 'trigger') AND sql NOT NULL"
                      " ORDER BY rowid",
                      table, &extra, &n_extra);
    if (error == SW_OK && step[0].len &&
        (error = copy_steps(st, table, tmp, step)) == SW_OK)
        error = run_all(st, step, 4);
    for (i = 0; error == SW_OK && i < n_extra; i++)
        error = sw_store__exec(st, extra[i], "migrate: rebuild an index");
    for (i = 0; i < 4; i++)
        sw_buf_dispose(&step[i]);
    free_texts(create, n_create);
    free_texts(extra, n_extra);
    free(tmp);
    return error;
}
