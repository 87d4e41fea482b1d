/*
 * ledger.h - the machine's GPU ledger: what every sweep running on this
 * machine holds on each device, so that two sweeps never book the same
 * capacity (docs/gpus.md, "Several sweeps on one machine").
 *
 * The ledger is a folder ($SWEEP_GPU_LEDGER, default /tmp/sweep-gpus)
 * with one file per running sweep process, which that process holds
 * under an exclusive flock(2) for its life, and a file `lock` whose
 * flock makes reading the others and writing one's own one step. A
 * file whose flock can be taken belongs to a process that is gone (the
 * kernel drops a dead process's locks): it is not counted, and removed.
 */
#ifndef SW_ENGINE_LEDGER_H
#define SW_ENGINE_LEDGER_H

#include <stdint.h>

typedef struct sw_ledger sw_ledger;

/* What another sweep holds on one device: `key` as sw_gpus_device_key
 * spells it, `share` in SW_PACK_UNIT, `bytes` of memory; `who` names the
 * sweep ("sweep 3f2a9c01, pid 4242"). Borrowed for the call. */
typedef void (*sw_ledger_each)(void *ctx, const char *key, uint32_t share,
                               uint64_t bytes, const char *who);

/* The ledger's folder: $SWEEP_GPU_LEDGER, or /tmp/sweep-gpus; NULL when
 * $SWEEP_GPU_LEDGER is set and empty (no ledger). Borrowed. */
const char *sw_ledger__dir(void);

/* Joins the ledger in `dir` as sweep `sweep_id` (its folder is made, open
 * to every user, as /tmp is). On failure the message says why. */
int sw_ledger__open(sw_ledger **out, const char *dir, const char *sweep_id);

/* Leaves the ledger: this process's file is removed. Accepts NULL. */
void sw_ledger__close(sw_ledger *l);

/* Takes, or gives back, the ledger's lock; between them nothing another
 * sweep writes changes what sw_ledger__others reads. */
int sw_ledger__lock(sw_ledger *l);
void sw_ledger__unlock(sw_ledger *l);

/* Under the lock: calls `each` for every device line of every other live
 * sweep's file. */
int sw_ledger__others(sw_ledger *l, sw_ledger_each each, void *ctx);

/* Under the lock: this sweep's holdings become `text`, lines of
 * "KEY SHARE BYTES". */
int sw_ledger__publish(sw_ledger *l, const char *text);

#endif
