/*
 * fuzz_metrics.c - libFuzzer target: any bytes, read as the body of a
 * metrics report (what a trial POSTs, or writes after `@metrics`).
 *
 * sw_metrics_parse must never crash, leak or loop, and must keep its
 * contract: a refused report adds nothing to the batch, and every name
 * it accepts is a NUL-terminated string. The first byte picks the strict
 * (HTTP) or the lenient (stdout) reading.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sw_metric_batch b;
    size_t i;
    int rc;

    sw_metric_batch_init(&b);
    b.strict = size && (data[0] & 1);
    rc = sw_metrics_parse(&b, (const char *)data + (size ? 1 : 0),
                          size ? size - 1 : 0);
    if (rc != 0 && b.len != 0)
        abort(); /* a refused report added values */
    for (i = 0; i < b.len; i++)
        if (!b.items[i].name || strlen(b.items[i].name) > size)
            abort();
    sw_metric_batch_dispose(&b);
    return 0;
}
