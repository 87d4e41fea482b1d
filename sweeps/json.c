/*
 * json.c - JSON text to values with cJSON. Integers that JSON writes
 * without a dot or exponent stay integers; everything else is a double.
 */
#include "sweeps/json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

static sw_value *convert(const cJSON *j, int depth);

static sw_value *convert_number(const cJSON *j)
{
    double d = j->valuedouble;

    if (d == floor(d) && fabs(d) < 9007199254740992.0 && j->valuestring == NULL)
        return sw_value_int((int64_t)d);
    return sw_value_float(d);
}

static sw_value *convert(const cJSON *j, int depth)
{
    sw_value *v;
    const cJSON *c;

    if (depth > 64)
        return NULL;
    if (cJSON_IsNull(j))
        return sw_value_null();
    if (cJSON_IsBool(j))
        return sw_value_bool(cJSON_IsTrue(j));
    if (cJSON_IsNumber(j))
        return convert_number(j);
    if (cJSON_IsString(j))
        return sw_value_str(j->valuestring);
    v = cJSON_IsArray(j) ? sw_value_list() : sw_value_map();
    cJSON_ArrayForEach(c, j)
    {
        sw_value *item = convert(c, depth + 1);
        if (!item) {
            sw_value_free(v);
            return NULL;
        }
        if (v->type == SW_LIST)
            sw_value_list_push(v, item);
        else
            sw_value_map_set(v, c->string, item);
    }
    return v;
}

int sw_json_parse(sw_value **out, const char *text, size_t len)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, false);
    sw_value *v;

    if (!j)
        return sw_error_set(SW_EINVALID, "not JSON (at byte %ld)",
                            end ? (long)(end - text) : 0L);
    while (end && (size_t)(end - text) < len &&
           strchr(" \t\r\n", *end) && *end)
        end++;
    if (end && (size_t)(end - text) < len) {
        cJSON_Delete(j);
        return sw_error_set(SW_EINVALID, "text after the JSON value (at "
                            "byte %ld)", (long)(end - text));
    }
    v = convert(j, 0);
    cJSON_Delete(j);
    if (!v)
        return sw_error_set(SW_EINVALID, "JSON nested too deeply");
    *out = v;
    return SW_OK;
}
