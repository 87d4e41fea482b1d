/*
 * fuzz_load.c - libFuzzer target: any bytes, read as a sweep file.
 *
 * sw_spec_parse must never crash, leak or loop on any input, whatever it
 * decides about it. The first byte picks the name, so both the YAML and
 * the JSON readers (and the '{' guess between them) are exercised; a
 * spec that loads is also nested once, as the search would use it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sweeps/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"fuzz.yaml", "fuzz.json", "fuzz"};
    const char *name = names[size ? data[0] % 3 : 0];
    sw_value **vals;
    sw_value *nested;
    sw_spec *spec = NULL;
    sw_diags diags;
    size_t i;

    sw_diags_init(&diags, name);
    if (sw_spec_parse(&spec, name, (const char *)data + (size ? 1 : 0),
                      size ? size - 1 : 0, &diags) == 0) {
        vals = calloc(spec->n_params + 1, sizeof(*vals));
        for (i = 0; i < spec->n_params; i++)
            vals[i] = sw_value_int((int64_t)i);
        nested = sw_spec_nest(spec, vals);
        sw_value_free(nested);
        free(vals);
    }
    sw_spec_free(spec);
    sw_diags_dispose(&diags);
    return 0;
}
