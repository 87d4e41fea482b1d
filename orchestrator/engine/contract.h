/*
 * contract.h - the trial contract: what a trial is given and where its
 * files live (docs/cli.md, "A trial's environment"). Run, resume and
 * reproduce all go through here, so a variable added to a trial's
 * environment is added once.
 *
 * Under the sweep home ($SWEEP_HOME, default ./.sweep) each run has a
 * folder runs/<run id>/ holding params.json, params.yaml (the same
 * parameters as W&B's SDK reads them: WANDB_SWEEP_PARAM_PATH), stdout.log,
 * stderr.log, the checkpoint/ folder that every attempt of the run shares, the
 * executor's status files, `token.sha256` (the SHA-256 of the attempt's
 * metrics token: the token itself is only in the trial's environment,
 * never on disk nor in the store) and `metrics_url` (where to report, read
 * again by clients after an orchestrator restart moved the server:
 * SWEEP_METRICS_URL_FILE).
 */
#ifndef SW_CONTRACT_H
#define SW_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one attempt of a run is told. */
typedef struct {
    const char *home; /* the sweep home, absolute */
    const char *sweep_id;
    const char *run_id;
    int64_t attempt;         /* 1 for the first */
    const char *metrics_url; /* SWEEP_METRICS_URL; NULL: not set */
    const char *token;       /* SWEEP_TOKEN; NULL: not set */
    const char *devices;     /* CUDA_VISIBLE_DEVICES; NULL: inherited */
    int64_t train_until;     /* SWEEP_TRAIN_UNTIL (promotion ASHA, PBT:
                                the iteration to train to); 0: not set */
} sw_contract;

/* The sweep home: $SWEEP_HOME, else ./.sweep. Borrowed. */
const char *sw_contract_home(void);

/* "<home>/runs/<run id>"; the caller frees it. */
char *sw_contract_run_dir(const char *home, const char *run_id);

/* The trial's environment additions, "NAME=value" each, NULL-terminated;
 * free with sw_command_free(). Can't fail. */
char **sw_contract_env(const sw_contract *c);

/* The argv stored with a run (a JSON array of strings) as a
 * NULL-terminated array (free with sw_command_free()); NULL when it is
 * not such an array or is empty. */
char **sw_contract_argv(const char *argv_json);

/* Makes the run's folder (and, with `checkpoint`, its checkpoint/
 * folder) and writes its params.json and params.yaml (atomically). SW_EIO
 * with a message naming the path. Parameters params.yaml cannot be made
 * from (JSON sweep cannot read back, a NaN) leave it unwritten. */
int sw_contract_prepare(const char *run_dir, const char *params_json,
                        bool checkpoint);

/* Makes <to_run_dir>/checkpoint a copy of <from_run_dir>/checkpoint (an
 * empty folder when that is missing), replacing whatever was there, all
 * or nothing: a PBT exploit's new run starts from its parent's
 * checkpoint (contract_copy.c). Slow (the whole checkpoint is read and
 * written): for a worker thread. SW_EIO and the like, with a message
 * naming the path. */
int sw_contract_copy_checkpoint(const char *from_run_dir,
                                const char *to_run_dir);

/* *out: the run's parameters (a JSON object) as W&B's config file, the
 * one WANDB_SWEEP_PARAM_PATH names: "wandb_version: 1", then for each
 * parameter "name:" and "  value: V" (nested groups as YAML flow maps),
 * every value reading back through YAML 1.1 as the JSON value it is.
 * The caller frees *out. SW_EINVALID when params_json is not an object. */
int sw_contract_wandb_config(char **out, const char *params_json);

/* The status a long-lived worker exits with when its request for the
 * next run is refused as not its own (401, 403): a run the engine may
 * have handed it and it never heard of is lost, not failed
 * (docs/clients.md, "Long-lived workers"). EX_TEMPFAIL. */
#define SW_WORKER_LOST_EXIT 75

/* A new metrics token: SW_CONTRACT_TOKEN_LEN hex digits of the OS's
 * randomness (256 bits), NUL-terminated. SW_EIO when there is none. */
#define SW_CONTRACT_TOKEN_LEN 64
int sw_contract_new_token(char out[SW_CONTRACT_TOKEN_LEN + 1]);

/* The hash of the run's token (sw_token_hash(), the caller frees) that
 * <run_dir>/token.sha256 holds; NULL when there is none. A token in
 * clear in <run_dir>/token (by an older sweep) is hashed, and the hash written
 * in its place. */
char *sw_contract_read_token_hash(const char *run_dir);

/* Writes the hash of the run's token to <run_dir>/token.sha256, mode
 * 0600, atomically; never the token itself. */
int sw_contract_write_token(const char *run_dir, const char *token);

/* mkdir -p, with a message naming the folder on failure. New folders are
 * 0700 (a sweep home may hold secrets); existing ones keep their mode. */
int sw_contract_mkdirs(const char *path);

/* Writes `text` to `path` (mode 0600) through a temporary file and
 * rename. */
int sw_contract_write_file(const char *path, const char *text);

/* Writes `len` bytes to `path` through path.tmp and a rename, so readers
 * see the old file or the whole new one; mode 0600 (the sweep home's
 * files may hold secrets). SW_EIO with a message naming the path. */
int sw_contract_write_bytes(const char *path, const void *p, size_t len);

#endif
