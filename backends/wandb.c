/*
 * wandb.c - the W&B exporter's protocol: sessions, GraphQL (the sweep,
 * each run, its files), and the order of a run's requests.
 *
 * GraphQL goes to POST {base}/graphql as {"query", "variables",
 * "operationName"}; a JSONString variable carries JSON inside a string.
 * A run is exported as UpsertBucket (creating or updating it, and telling
 * how many history lines W&B already holds), then CreateRunFiles and a PUT
 * of each file W&B lacks (wandb-metadata.json, the run's diff.patch), then
 * for a run that was stopped StopRun (the run's `stopped` flag, as W&B's
 * own Stop button and its sweep controller set it), then file_stream
 * requests (wandb_stream.c). W&B's historyLineCount is trusted
 * over the caller's record when it is ahead: an export killed after W&B
 * took a request but before the caller recorded it resumes after those
 * lines, never sending them again.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/wandb_internal.h"
#include "sweeps/json.h"

/* ---- sessions ---------------------------------------------------------- */

/* Appends `s` percent-encoded for a URL path segment. */
static void put_segment(sw_buf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("-._~", *p)) {
            sw_buf_putc(out, (char)*p);
        } else {
            sw_buf_putc(out, '%');
            sw_buf_putc(out, hex[*p >> 4]);
            sw_buf_putc(out, hex[*p & 15]);
        }
    }
}

/* W&B's entity and project names: no slash, no control character. */
static int check_name(const char *what, const char *s)
{
    if (!s || !s[0])
        return sw_error_set(SW_EINVALID, "W&B export: the %s is required",
                            what);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < ' ' || *p == 0x7f || strchr("/\\#?%:", *p))
            return sw_error_set(SW_EINVALID,
                                "W&B export: %s '%s': W&B names cannot hold "
                                "'%c'",
                                what, s, *p < ' ' ? '?' : *p);
    return SW_OK;
}

static int check_base(const char *base)
{
    if (strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0)
        return sw_error_set(SW_EINVALID,
                            "W&B export: base URL '%s' is not an http:// "
                            "or https:// URL (WANDB_BASE_URL)",
                            base);
    return SW_OK;
}

static char *base_of(const sw_wandb_opts *o)
{
    const char *env = getenv("WANDB_BASE_URL");
    const char *b = o->base_url   ? o->base_url
                    : env && *env ? env
                                  : SW_WANDB_DEFAULT_BASE;
    size_t n = strlen(b);

    while (n > 0 && b[n - 1] == '/')
        n--;
    return sw_strndup(b, n);
}

int sw_wandb_open(sw_wandb **out, const sw_wandb_opts *o)
{
    sw_wandb *w = sw_calloc(1, sizeof(*w));
    sw_buf path = SW_BUF_INIT;
    char *key = NULL;
    int error;

    *out = NULL;
    w->base = base_of(o);
    w->entity = sw_strdup(o->entity ? o->entity : "");
    w->project = sw_strdup(o->project ? o->project : "");
    w->dry = o->dry_run;
    w->max_request = o->max_request && o->max_request < SW_WANDB_MAX_REQUEST
                         ? o->max_request
                         : SW_WANDB_MAX_REQUEST;
    put_segment(&path, w->entity);
    sw_buf_putc(&path, '/');
    put_segment(&path, w->project);
    w->path = sw_buf_detach(&path);
    if ((error = check_base(w->base)) < 0 ||
        (error = check_name("entity", o->entity)) < 0 ||
        (error = check_name("project", o->project)) < 0)
        goto done;
    if (!w->dry && ((error = sw_wandb__key(&key, w->base)) < 0 ||
                    (error = sw_wandb__http_new(&w->http, w->base, w->entity,
                                                key, o)) < 0))
        goto done;
    *out = w;
    w = NULL;
done:
    sw_wandb__wipe(key);
    sw_wandb_close(w);
    return error;
}

void sw_wandb_close(sw_wandb *w)
{
    if (!w)
        return;
    sw_wandb__http_free(w->http);
    free(w->base);
    free(w->entity);
    free(w->project);
    free(w->path);
    free(w);
}

const char *sw_wandb_base_url(const sw_wandb *w)
{
    return w->base;
}

/* The app is the API's host without "api." (api.wandb.ai: wandb.ai); a
 * server of one's own serves both from the same place. */
char *sw_wandb_sweep_url(const sw_wandb *w, const char *sweep_id)
{
    const char *host = strstr(w->base, "://") + 3;
    size_t scheme = (size_t)(host - w->base);

    if (strncmp(host, "api.", 4) == 0)
        return sw_aprintf("%.*s%s/%s/sweeps/%s", (int)scheme, w->base, host + 4,
                          w->path, sweep_id);
    return sw_aprintf("%s/%s/sweeps/%s", w->base, w->path, sweep_id);
}

void sw_wandb_dry_totals(const sw_wandb *w, int64_t *bytes, int64_t *files)
{
    *bytes = w->bytes;
    *files = w->files;
}

int64_t sw_wandb_requests(const sw_wandb *w)
{
    return w->http ? sw_wandb__http_count(w->http) : w->printed;
}

void sw_wandb__json_str(sw_buf *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t start = 0;

    sw_buf_putc(out, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
            continue;
        sw_buf_put(out, s + start, i - start);
        start = i + 1;
        if (c == '"' || c == '\\') {
            sw_buf_putc(out, '\\');
            sw_buf_putc(out, (char)c);
        } else if (c == '\n') {
            sw_buf_puts(out, "\\n");
        } else {
            sw_buf_puts(out, "\\u00");
            sw_buf_putc(out, hex[c >> 4]);
            sw_buf_putc(out, hex[c & 15]);
        }
    }
    sw_buf_put(out, s + start, n - start);
    sw_buf_putc(out, '"');
}

/* A dry run's line: the request as it would go, the key redacted. A JSON
 * body is shown as JSON, anything else by its size. */
static void print_request(sw_wandb *w, const sw_wandb__req *r)
{
    sw_buf b = SW_BUF_INIT;

    sw_buf_printf(&b, "{\"method\": \"%s\", \"url\": ", r->method);
    sw_wandb__json_str(&b, r->url, strlen(r->url));
    sw_buf_puts(&b, ", \"headers\": {");
    if (r->auth)
        sw_buf_puts(&b, "\"Authorization\": \"Basic <redacted>\", "
                        "\"Content-Type\": \"application/json\"");
    for (size_t i = 0; i < r->n_headers; i++) {
        const char *h = r->headers[i], *colon = strchr(h, ':');
        size_t k = colon ? (size_t)(colon - h) : strlen(h);
        const char *v = colon ? colon + 1 + strspn(colon + 1, " ") : "";
        sw_buf_puts(&b, i || r->auth ? ", " : "");
        sw_wandb__json_str(&b, h, k);
        sw_buf_puts(&b, ": ");
        sw_wandb__json_str(&b, v, strlen(v));
    }
    if (r->auth) {
        sw_buf_puts(&b, "}, \"body\": ");
        sw_buf_put(&b, r->body, r->len);
        sw_buf_puts(&b, "}\n");
    } else
        sw_buf_printf(&b, "}, \"bytes\": %zu}\n", r->len);
    fwrite(b.ptr, 1, b.len, w->dry);
    sw_buf_dispose(&b);
    w->printed++;
    w->bytes += (int64_t)r->len;
    w->files += strcmp(r->method, "PUT") == 0;
}

int sw_wandb__send(sw_wandb *w, const sw_wandb__req *r, sw_buf *answer)
{
    answer->len = 0;
    if (w->dry) {
        print_request(w, r);
        return SW_OK;
    }
    return sw_wandb__http_send(w->http, r, answer);
}

/* ---- GraphQL ----------------------------------------------------------- */

/* The first GraphQL error, on one line. */
static int graphql_error(const char *op, const cJSON *errors)
{
    const cJSON *first = cJSON_GetArrayItem(errors, 0);
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(first, "message");
    char text[300];
    size_t i;

    snprintf(text, sizeof(text), "%s",
             cJSON_IsString(msg) ? msg->valuestring : "(no message)");
    for (i = 0; text[i]; i++)
        if (text[i] == '\n' || text[i] == '\r')
            text[i] = ' ';
    return sw_error_set(SW_EIO, "W&B GraphQL error in %s: %s", op, text);
}

/* A GraphQL operation: its name, the field of `data` it answers in, its
 * text, and the answer a dry run pretends to get. */
typedef struct {
    const char *op, *field, *query, *dry;
} gql_op;

static const gql_op upsert_sweep = {
    "UpsertSweep", "upsertSweep",
    "mutation UpsertSweep($id: ID, $config: String, $description: String,"
    " $entityName: String, $projectName: String, $controller: JSONString,"
    " $scheduler: JSONString, $state: String, $priorRunsFilters: JSONString,"
    " $displayName: String) { upsertSweep(input: {id: $id, config: $config,"
    " description: $description, entityName: $entityName, projectName:"
    " $projectName, controller: $controller, scheduler: $scheduler, state:"
    " $state, priorRunsFilters: $priorRunsFilters, displayName:"
    " $displayName}) { sweep { id name project { id name entity { id name }"
    " } } } }",
    "{\"upsertSweep\": {\"sweep\": {\"id\": \"dry-run\", \"name\":"
    " \"dry-run\"}}}"};

static const gql_op upsert_bucket = {
    "UpsertBucket", "upsertBucket",
    "mutation UpsertBucket($id: String, $name: String, $project: String,"
    " $entity: String, $groupName: String, $description: String,"
    " $displayName: String, $notes: String, $commit: String, $config:"
    " JSONString, $host: String, $debug: Boolean, $program: String, $repo:"
    " String, $jobType: String, $state: String, $sweep: String, $tags:"
    " [String!], $summaryMetrics: JSONString) { upsertBucket(input: {id:"
    " $id, name: $name, groupName: $groupName, modelName: $project,"
    " entityName: $entity, description: $description, displayName:"
    " $displayName, notes: $notes, config: $config, commit: $commit, host:"
    " $host, debug: $debug, jobProgram: $program, jobRepo: $repo, jobType:"
    " $jobType, state: $state, sweep: $sweep, tags: $tags, summaryMetrics:"
    " $summaryMetrics}) { bucket { id name displayName historyLineCount }"
    " inserted } }",
    "{\"upsertBucket\": {\"bucket\": {\"id\": \"dry-run\", "
    "\"historyLineCount\": 0}, \"inserted\": true}}"};

static const gql_op create_run_files = {
    "CreateRunFiles", "createRunFiles",
    "mutation CreateRunFiles($entity: String!, $project: String!, $run:"
    " String!, $files: [String!]!) { createRunFiles(input: {entityName:"
    " $entity, projectName: $project, runName: $run, files: $files}) {"
    " runID uploadHeaders files { name uploadUrl } } }",
    "{\"createRunFiles\": {\"uploadHeaders\": [], \"files\": [{\"name\":"
    " \"wandb-metadata.json\", \"uploadUrl\": \"<uploadUrl>\"}, {\"name\":"
    " \"diff.patch\", \"uploadUrl\": \"<uploadUrl>\"}]}}"};

/* The text of W&B's own StopRun (core/api/graphql/mutation_stop_run.graphql
 * in wandb/wandb): it sets a running run's `stopped` flag by its storage
 * id, as the App's Stop button and wandb.Api().run(...).stop() do; W&B
 * then shows the run as killed once it ends. Idempotent. */
static const gql_op stop_run = {
    "StopRun", "stopRun",
    "mutation StopRun($id: ID!) { stopRun(input: {id: $id}) { success } }",
    "{\"stopRun\": {\"success\": true}}"};

/* Posts `q` with `vars` (consumed) and gives the answer's data.FIELD in
 * *out (owned by *root, which the caller deletes); both NULL when no
 * answer came. */
static int graphql(sw_wandb *w, const gql_op *q, cJSON *vars, cJSON **root,
                   cJSON **out)
{
    cJSON *body = cJSON_CreateObject(), *errors, *data;
    sw_buf answer = SW_BUF_INIT;
    char *text, *url = sw_aprintf("%s/graphql", w->base);
    int error;

    cJSON_AddStringToObject(body, "query", q->query);
    cJSON_AddItemToObject(body, "variables", vars);
    cJSON_AddStringToObject(body, "operationName", q->op);
    text = cJSON_PrintUnformatted(body);
    error = sw_wandb__send(
        w,
        &(sw_wandb__req){"POST", url, NULL, 0, true, text, strlen(text), q->op},
        &answer);
    cJSON_Delete(body);
    free(text);
    free(url);
    *root = NULL;
    *out = NULL; /* callers read it whatever the answer */
    if (error < 0)
        goto done;
    *root = cJSON_Parse(w->dry ? q->dry : sw_buf_cstr(&answer));
    errors = cJSON_GetObjectItemCaseSensitive(*root, "errors");
    data = w->dry ? *root : cJSON_GetObjectItemCaseSensitive(*root, "data");
    *out = cJSON_GetObjectItemCaseSensitive(data, q->field);
    if (cJSON_IsArray(errors) && cJSON_GetArraySize(errors) > 0)
        error = graphql_error(q->op, errors);
    else if (!cJSON_IsObject(*out))
        error = sw_error_set(SW_EIO, "W&B at %s: %s: an answer without %s",
                             w->base, q->op, q->field);
done:
    sw_buf_dispose(&answer);
    return error;
}

/* A string member of `obj`, or NULL. Borrowed. */
static const char *str_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void add_str(cJSON *obj, const char *key, const char *v)
{
    if (v)
        cJSON_AddStringToObject(obj, key, v);
    else
        cJSON_AddNullToObject(obj, key);
}

/* ---- the sweep --------------------------------------------------------- */

/* YAML: the text without its top-level `controller` block (the line and
 * the indented, blank or comment lines under it), then ours. */
static char *yaml_with_controller(const char *text)
{
    sw_buf b = SW_BUF_INIT;
    const char *p = text;
    bool skipping = false;

    while (*p) {
        size_t n = strcspn(p, "\n") + (p[strcspn(p, "\n")] ? 1 : 0);
        if (strncmp(p, "controller:", 11) == 0)
            skipping = true;
        else if (skipping && !strchr(" \t#\r\n", *p))
            skipping = false;
        if (!skipping)
            sw_buf_put(&b, p, n);
        p += n;
    }
    if (b.len && b.ptr[b.len - 1] != '\n')
        sw_buf_putc(&b, '\n');
    sw_buf_puts(&b, "controller:\n  type: local\n");
    return sw_buf_detach(&b);
}

/* The sweep file's text with `controller: {type: local}`: JSON stays
 * JSON (which YAML reads as well), YAML stays YAML. */
static char *sweep_config(const char *text)
{
    const char *p = text + strspn(text, " \t\r\n");
    sw_value *v = NULL, *ctl;
    sw_buf b = SW_BUF_INIT;

    if (*p != '{' || sw_json_parse(&v, text, strlen(text)) != SW_OK ||
        v->type != SW_MAP) {
        sw_value_free(v);
        sw_error_clear();
        return yaml_with_controller(text);
    }
    ctl = sw_value_map();
    sw_value_map_set(ctl, "type", sw_value_str("local"));
    sw_value_map_set(v, "controller", ctl);
    sw_value_write_json(&b, v, false);
    sw_value_free(v);
    return sw_buf_detach(&b);
}

int sw_wandb_upsert_sweep(sw_wandb *w, const char *node, const char *config,
                          const char *display_name, const char *state,
                          char **out_name, char **out_node)
{
    cJSON *vars = cJSON_CreateObject(), *root = NULL, *ans, *sweep;
    char *yaml = sweep_config(config);
    int error;

    add_str(vars, "id", node);
    cJSON_AddStringToObject(vars, "config", yaml);
    cJSON_AddStringToObject(vars, "entityName", w->entity);
    cJSON_AddStringToObject(vars, "projectName", w->project);
    add_str(vars, "displayName", display_name);
    add_str(vars, "state", state);
    free(yaml);
    error = graphql(w, &upsert_sweep, vars, &root, &ans);
    sweep = cJSON_GetObjectItemCaseSensitive(ans, "sweep");
    if (error == SW_OK && (!str_of(sweep, "name") || !str_of(sweep, "id")))
        error = sw_error_set(SW_EIO,
                             "W&B at %s: UpsertSweep: an answer without the "
                             "sweep's id and name",
                             w->base);
    if (error == SW_OK && out_name)
        *out_name = sw_strdup(str_of(sweep, "name"));
    if (error == SW_OK && out_node)
        *out_node = sw_strdup(str_of(sweep, "id"));
    cJSON_Delete(root);
    return error;
}

/* ---- runs -------------------------------------------------------------- */

void sw_wandb_run_name(char out[9], const char *run_id)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, then a finaliser */

    for (const unsigned char *p = (const unsigned char *)run_id; *p; p++)
        h = (h ^ *p) * 0x100000001b3ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    for (int i = 0; i < 8; i++) {
        out[i] = digits[h % 36];
        h /= 36;
    }
    out[8] = 0;
}

/* PBT's lineage as a config value: {"member": 2, "parent": "3f2a-1",
 * "parent_run": "<W&B's name of it>", "parent_iter": 8}, parent and
 * parent_run null for a run that started from scratch. */
static sw_value *lineage(const sw_wandb_run *run)
{
    sw_value *v = sw_value_map();
    char name[9];

    sw_value_map_set(v, "member", sw_value_int(run->member));
    if (run->parent)
        sw_wandb_run_name(name, run->parent);
    sw_value_map_set(v, "parent",
                     run->parent ? sw_value_str(run->parent) : sw_value_null());
    sw_value_map_set(v, "parent_run",
                     run->parent ? sw_value_str(name) : sw_value_null());
    sw_value_map_set(v, "parent_iter",
                     run->parent ? sw_value_int(run->parent_iter)
                                 : sw_value_null());
    return v;
}

/* The `_wandb` key W&B's SDK adds to every run's config: wandb-core's
 * RunConfig.AddInternalData (core/internal/runconfig/runconfig.go)
 * always sets `t` (the client's telemetry, field number to value) and
 * `m` (its define_metric list, [] when the run starts:
 * core/internal/runupserter/runupserter.go), and cli_version and
 * python_version only when the client gave them. wandb-core puts its
 * own version in `t`; not being W&B's client, we claim none: `t` is
 * empty, as for a client that reports no telemetry. */
#define WANDB_INTERNAL "{\"value\": {\"t\": {}, \"m\": []}}"

/* W&B's config: {"param": {"value": v}, ..., "_wandb": ...}, nested
 * values as they are; a PBT run's lineage as one more, "pbt". */
static char *run_config(const sw_wandb_run *run)
{
    sw_value *v = NULL;
    sw_buf b = SW_BUF_INIT;

    if (sw_json_parse(&v, run->params, strlen(run->params)) != SW_OK ||
        v->type != SW_MAP) {
        sw_value_free(v);
        sw_error_clear();
        return sw_strdup("{\"_wandb\": " WANDB_INTERNAL "}");
    }
    if (run->pbt && !sw_value_map_get(v, "pbt"))
        sw_value_map_set(v, "pbt", lineage(run));
    sw_buf_putc(&b, '{');
    for (size_t i = 0; i < v->u.map.len; i++) {
        sw_wandb__json_str(&b, v->u.map.keys[i], strlen(v->u.map.keys[i]));
        sw_buf_puts(&b, ": {\"value\": ");
        sw_value_write_json(&b, v->u.map.vals[i], false);
        sw_buf_puts(&b, "}, ");
    }
    if (!sw_value_map_get(v, "_wandb")) /* a parameter of that name wins */
        sw_buf_puts(&b, "\"_wandb\": " WANDB_INTERNAL);
    else if (b.len > 1)
        b.len -= 2;
    sw_buf_putc(&b, '}');
    sw_value_free(v);
    return sw_buf_detach(&b);
}

static cJSON *bucket_vars(const sw_wandb *w, const sw_wandb_run *run,
                          const char *name)
{
    cJSON *vars = cJSON_CreateObject(), *tags = cJSON_CreateArray();
    char *config = run_config(run);

    cJSON_AddStringToObject(vars, "name", name);
    cJSON_AddStringToObject(vars, "project", w->project);
    cJSON_AddStringToObject(vars, "entity", w->entity);
    add_str(vars, "groupName", run->group);
    cJSON_AddStringToObject(vars, "displayName", run->id);
    cJSON_AddStringToObject(vars, "config", config);
    add_str(vars, "commit", run->commit);
    add_str(vars, "repo", run->repo);
    add_str(vars, "host", run->host);
    add_str(vars, "program", run->program);
    add_str(vars, "sweep", run->sweep);
    if (run->tag)
        cJSON_AddItemToArray(tags, cJSON_CreateString(run->tag));
    for (size_t i = 0; i < run->n_tags; i++)
        cJSON_AddItemToArray(tags, cJSON_CreateString(run->tags[i]));
    cJSON_AddItemToObject(vars, "tags", tags);
    add_str(vars, "notes", run->notes);
    free(config);
    return vars;
}

/* Creates or updates the run; *lines gets the history lines W&B holds
 * and *node its storage id (the caller frees). */
static int upsert_run(sw_wandb *w, const sw_wandb_run *run, const char *name,
                      int64_t *lines, char **node)
{
    cJSON *root = NULL, *ans, *bucket, *count;
    int error =
        graphql(w, &upsert_bucket, bucket_vars(w, run, name), &root, &ans);

    bucket = cJSON_GetObjectItemCaseSensitive(ans, "bucket");
    count = cJSON_GetObjectItemCaseSensitive(bucket, "historyLineCount");
    *lines = cJSON_IsNumber(count) && count->valuedouble > 0
                 ? (int64_t)count->valuedouble
                 : 0;
    if (error == SW_OK && !str_of(bucket, "id"))
        error = sw_error_set(SW_EIO,
                             "W&B at %s: UpsertBucket: an answer without "
                             "the run's id",
                             w->base);
    *node = error == SW_OK ? sw_strdup(str_of(bucket, "id")) : NULL;
    cJSON_Delete(root);
    return error;
}

/* Sets the run's `stopped` flag, as W&B does for the runs it stops. */
static int stop(sw_wandb *w, const char *node)
{
    cJSON *vars = cJSON_CreateObject(), *root = NULL, *ans;
    int error;

    cJSON_AddStringToObject(vars, "id", node);
    error = graphql(w, &stop_run, vars, &root, &ans);
    cJSON_Delete(root);
    return error;
}

static const char *base_name(const char *s)
{
    const char *slash = strrchr(s, '/');

    return slash ? slash + 1 : s;
}

/* How many of the words of the command line `argv` (a JSON array) come
 * before the trainer's own arguments: W&B's `args` is sys.argv[1:] of
 * the script, so for W&B's default command, `/usr/bin/env python
 * train.py --a=1`, it is ["--a=1"]. The words up to the program (the
 * sweep's `program`, as ${program} put it) when it is one of them; else
 * an `env` with its NAME=VALUE words, then an interpreter (python*, or
 * any word after env) with its options and its script (or -m MODULE);
 * else the first word alone. */
static int script_words(const cJSON *argv, const char *program)
{
    int n = cJSON_GetArraySize(argv), i = 0;
    const char *w;

    for (int k = 0; program && k < n; k++) {
        w = cJSON_GetArrayItem(argv, k)->valuestring;
        if (w && (strcmp(w, program) == 0 ||
                  strcmp(base_name(w), base_name(program)) == 0))
            return k + 1;
    }
    w = cJSON_GetArrayItem(argv, 0)->valuestring;
    if (!w || strcmp(base_name(w), "env") != 0)
        return strncmp(w ? base_name(w) : "", "python", 6) == 0 && n > 1 ? 2
                                                                         : 1;
    for (i = 1; i < n && (w = cJSON_GetArrayItem(argv, i)->valuestring) &&
                (strchr(w, '=') || w[0] == '-');
         i++) /* env's NAME=VALUE and options */
        ;
    for (i++; i < n && (w = cJSON_GetArrayItem(argv, i)->valuestring) &&
              w[0] == '-' && strcmp(w, "-m") != 0;
         i++) /* the interpreter's options */
        ;
    if (i < n && strcmp(cJSON_GetArrayItem(argv, i)->valuestring, "-m") == 0)
        i++;
    return i + 1 <= n ? i + 1 : n;
}

/* wandb-metadata.json, as W&B's clients write it: what its Overview
 * shows (program, arguments, host, start, git remote and commit). */
static char *metadata(const sw_wandb_run *run)
{
    cJSON *m = cJSON_CreateObject(), *args = cJSON_Parse(run->argv);
    char when[40], *text;
    time_t t = (time_t)run->started_at;
    struct tm tm;

    if (run->program)
        cJSON_AddStringToObject(m, "program", run->program);
    if (cJSON_IsArray(args) && cJSON_GetArraySize(args) > 0) {
        for (int n = script_words(args, run->program); n > 0; n--)
            cJSON_DeleteItemFromArray(args, 0);
        cJSON_AddItemToObject(m, "args", args);
    } else {
        cJSON_Delete(args);
    }
    if (run->host)
        cJSON_AddStringToObject(m, "host", run->host);
    if (run->started_at > 0 && gmtime_r(&t, &tm)) {
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%06dZ",
                 (int)((run->started_at - (double)t) * 1e6));
        cJSON_AddStringToObject(m, "startedAt", when);
    }
    if (run->commit || run->repo) {
        cJSON *git = cJSON_AddObjectToObject(m, "git");
        add_str(git, "remote", run->repo);
        add_str(git, "commit", run->commit);
    }
    text = cJSON_PrintUnformatted(m);
    cJSON_Delete(m);
    return text;
}

/* A file to upload: its name in the run and its bytes. */
typedef struct {
    const char *name;
    char *bytes;
    size_t len;
} upload;

/* The files W&B lacks, as SW_WANDB__META | SW_WANDB__PATCH, read into
 * `up` (the caller frees the bytes); *n gets how many. */
static int files_owed(const sw_wandb_run *run, const sw_wandb_mark *mark,
                      upload up[2], size_t *n, unsigned *which)
{
    *n = 0;
    *which = 0;
    if (!mark->meta) {
        up[*n].name = "wandb-metadata.json";
        up[*n].bytes = metadata(run);
        up[*n].len = strlen(up[*n].bytes);
        (*n)++;
        *which |= SW_WANDB__META;
    }
    if (run->patch && !mark->patch) {
        up[*n].name = "diff.patch";
        if (!(up[*n].bytes = sw_buf_read_file(run->patch, &up[*n].len)))
            return sw_error_set(SW_EIO, "run %s: cannot read %s", run->id,
                                run->patch);
        (*n)++;
        *which |= SW_WANDB__PATCH;
    }
    return SW_OK;
}

/* PUTs `up` to the upload URL W&B gave for it, with W&B's headers and
 * without our Authorization. */
static int put_file(sw_wandb *w, const cJSON *ans, const upload *up)
{
    const cJSON *hdrs = cJSON_GetObjectItemCaseSensitive(ans, "uploadHeaders");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(ans, "files");
    const cJSON *f;
    const char *url = NULL, *list[16];
    size_t n = 0;
    sw_buf answer = SW_BUF_INIT;
    int error;

    cJSON_ArrayForEach(f, files)
    {
        const char *fname = str_of(f, "name");
        if (fname && strcmp(fname, up->name) == 0)
            url = str_of(f, "uploadUrl");
    }
    if (!url)
        return sw_error_set(SW_EIO,
                            "W&B at %s: CreateRunFiles: no upload URL for %s",
                            w->base, up->name);
    for (int i = 0; i < cJSON_GetArraySize(hdrs) && n < 16; i++)
        if (cJSON_IsString(cJSON_GetArrayItem(hdrs, i)))
            list[n++] = cJSON_GetArrayItem(hdrs, i)->valuestring;
    error = sw_wandb__send(w,
                           &(sw_wandb__req){"PUT", url, list, n, false,
                                            up->bytes, up->len, "upload"},
                           &answer);
    sw_buf_dispose(&answer);
    return error;
}

/* Uploads the run's files W&B lacks: one CreateRunFiles, then a PUT
 * each. *which gets what was uploaded. */
static int upload_files(sw_wandb *w, const sw_wandb_run *run, const char *name,
                        const sw_wandb_mark *mark, unsigned *which)
{
    cJSON *vars = NULL, *files, *root = NULL, *ans = NULL;
    upload up[2] = {{NULL, NULL, 0}, {NULL, NULL, 0}};
    size_t n = 0;
    int error = files_owed(run, mark, up, &n, which);

    if (error < 0 || n == 0)
        goto done;
    vars = cJSON_CreateObject();
    cJSON_AddStringToObject(vars, "entity", w->entity);
    cJSON_AddStringToObject(vars, "project", w->project);
    cJSON_AddStringToObject(vars, "run", name);
    files = cJSON_AddArrayToObject(vars, "files");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(files, cJSON_CreateString(up[i].name));
    error = graphql(w, &create_run_files, vars, &root, &ans);
    for (size_t i = 0; error == SW_OK && i < n; i++)
        error = put_file(w, ans, &up[i]);
done:
    cJSON_Delete(root);
    for (size_t i = 0; i < 2; i++)
        free(up[i].bytes);
    return error;
}

bool sw_wandb_run_done(const sw_wandb_run *run, const sw_wandb_mark *mark)
{
    return mark->history >= (int64_t)run->n_rows &&
           mark->summary == (int64_t)run->n_rows &&
           (!run->ended || mark->ended) && (!run->patch || mark->patch) &&
           mark->meta && mark->labels;
}

int sw_wandb_export_run(sw_wandb *w, const sw_wandb_run *run,
                        sw_wandb_mark *mark, sw_wandb_mark_fn fn, void *ctx)
{
    int64_t before = w->http ? sw_wandb__http_count(w->http) : w->printed;
    int64_t lines = 0;
    char name[9], *node = NULL;
    unsigned uploaded = 0;
    int error;

    mark->requests = mark->rows_sent = 0;
    if (sw_wandb_run_done(run, mark))
        return SW_OK;
    sw_wandb_run_name(name, run->id);
    if ((error = upsert_run(w, run, name, &lines, &node)) < 0)
        goto done;
    if (!mark->labels) { /* the upsert carried them */
        mark->labels = true;
        if (fn && (error = fn(ctx, mark)) != 0)
            goto done;
    }
    if (lines > mark->history) {
        /* W&B took lines we had not recorded: never send them again */
        mark->history =
            lines < (int64_t)run->n_rows ? lines : (int64_t)run->n_rows;
        if (fn && (error = fn(ctx, mark)) != 0)
            goto done;
    }
    if ((error = upload_files(w, run, name, mark, &uploaded)) < 0)
        goto done;
    /* stopped while it runs, as W&B stops its own: before its end */
    if (run->ended && run->stopped && !mark->ended &&
        (error = stop(w, node)) < 0)
        goto done;
    error = sw_wandb__stream(w, run, name, uploaded, mark, fn, ctx);
done:
    free(node);
    mark->requests =
        (w->http ? sw_wandb__http_count(w->http) : w->printed) - before;
    return error;
}
