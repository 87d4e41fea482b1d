/*
 * test_gpus.c - the GPU inventory as plain data: memory sizes, declared
 * inventories (good ones and every kind of refusal), and the narrowing
 * CUDA_VISIBLE_DEVICES makes, on an inventory built by hand as NVML
 * would fill it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "sweeps/gpus.h"

#define GIB ((uint64_t)1 << 30)

static void test_sizes(void **state)
{
    double mib;

    (void)state;
    assert_true(sw_gpus_parse_size("40GiB", false, &mib) && mib == 40960);
    assert_true(sw_gpus_parse_size("40 gb", false, &mib) && mib == 40960);
    assert_true(sw_gpus_parse_size("1.5t", false, &mib) &&
                mib == 1.5 * 1048576);
    assert_true(sw_gpus_parse_size("512MiB", false, &mib) && mib == 512);
    assert_true(sw_gpus_parse_size("512", true, &mib) && mib == 512);
    assert_false(sw_gpus_parse_size("512", false, &mib));
    assert_false(sw_gpus_parse_size("lots", true, &mib));
    assert_false(sw_gpus_parse_size("-1GiB", true, &mib));
    assert_false(sw_gpus_parse_size("40GiBs", true, &mib));
    assert_false(sw_gpus_parse_size("1e999GB", true, &mib));
    assert_false(sw_gpus_parse_size("nan", true, &mib));
    assert_false(sw_gpus_parse_size("", true, &mib));
}

static void test_put_size(void **state)
{
    sw_buf b = SW_BUF_INIT;

    (void)state;
    sw_gpus_put_size(&b, 80 * GIB);
    sw_buf_puts(&b, "|");
    sw_gpus_put_size(&b, 150754820096ull);
    sw_buf_puts(&b, "|");
    sw_gpus_put_size(&b, 512ull << 20);
    assert_string_equal(sw_buf_cstr(&b), "80 GiB|140.4 GiB|512 MiB");
    sw_buf_dispose(&b);
}

static void test_declare_count(void **state)
{
    sw_gpu_inventory inv;

    (void)state;
    sw_gpus_init(&inv);
    assert_int_equal(sw_gpus_declare(&inv, "4"), SW_OK);
    assert_int_equal(inv.source, SW_GPUS_DECLARED);
    assert_int_equal(inv.n_gpus, 4);
    assert_int_equal(inv.n_devices, 4);
    assert_int_equal(inv.gpus[3].index, 3);
    assert_int_equal(inv.devices[2].gpu, 2);
    assert_int_equal(inv.devices[2].mig, -1);
    assert_int_equal(inv.devices[2].total_bytes, 0);
    assert_null(inv.reason);
    sw_gpus_dispose(&inv);
}

static void test_declare_none(void **state)
{
    sw_gpu_inventory inv;

    (void)state;
    sw_gpus_init(&inv);
    assert_int_equal(sw_gpus_declare(&inv, "none"), SW_OK);
    assert_int_equal(inv.n_devices, 0);
    assert_non_null(inv.reason);
    sw_gpus_dispose(&inv);
    assert_int_equal(sw_gpus_declare(&inv, "0"), SW_OK);
    assert_int_equal(inv.n_gpus, 0);
    sw_gpus_dispose(&inv);
}

static void test_declare_rich(void **state)
{
    sw_gpu_inventory inv;

    (void)state;
    sw_gpus_init(&inv);
    assert_int_equal(sw_gpus_declare(&inv,
                                     "2x80GiB, 80GiB:mig=3g.40gb+2x1g.10gb,"
                                     "1:mig=1c.3g.20gb"),
                     SW_OK);
    assert_int_equal(inv.n_gpus, 4);
    assert_int_equal(inv.n_devices, 2 + 3 + 1);
    assert_false(inv.gpus[1].mig);
    assert_true(inv.gpus[2].mig && inv.gpus[2].total_bytes == 80 * GIB);
    assert_int_equal(inv.devices[1].total_bytes, 80 * GIB);
    assert_int_equal(inv.devices[2].gpu, 2);
    assert_int_equal(inv.devices[2].mig, 0);
    assert_int_equal(inv.devices[2].slices, 3);
    assert_int_equal(inv.devices[2].total_bytes, 40 * GIB);
    assert_string_equal(inv.devices[2].name, "3g.40gb");
    assert_int_equal(inv.devices[4].mig, 2);
    assert_int_equal(inv.devices[4].total_bytes, 10 * GIB);
    assert_int_equal(inv.devices[5].gpu, 3);
    assert_int_equal(inv.devices[5].slices, 3);
    assert_int_equal(inv.gpus[3].total_bytes, 0);
    sw_gpus_dispose(&inv);
}

/* Each bad declaration is refused with a message naming what is wrong,
 * and leaves the inventory empty. */
static void test_declare_refused(void **state)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"", "empty part"},
        {"2,,2", "empty part"},
        {"lots", "neither a count"},
        {"2x", "goes after 'x'"},
        {"x80GiB", "before 'x'"},
        {"0x80GiB", "before 'x'"},
        {"1.5", "neither a count"},
        {"5000", "from 1 to 4096"},
        {"4000,100", "more than 4096"},
        {"2x80", "neither a count"},
        {"80GiB:mag=3g.40gb", "after ':'"},
        {"80GiB:mig=", "after ':'"},
        {"80GiB:mig=3g", "MIG profile '3g'"},
        {"80GiB:mig=3g.40gb+me", "MIG profile 'me'"},
        {"80GiB:mig=4g.40gb+4g.40gb", "7 slices"},
        {"80GiB:mig=8x1g.10gb", "MIG profile"},
        {"40GiB:mig=3g.40gb+3g.40gb", "more than the GPU's memory"},
    };
    sw_gpu_inventory inv;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        sw_gpus_init(&inv);
        if (sw_gpus_declare(&inv, bad[i].text) != SW_EINVALID)
            fail_msg("'%s' was accepted", bad[i].text);
        if (!strstr(sw_error_last(), bad[i].says))
            fail_msg("'%s': %s", bad[i].text, sw_error_last());
        assert_int_equal(inv.n_gpus, 0);
        assert_int_equal(inv.n_devices, 0);
        sw_gpus_dispose(&inv);
    }
}

/* Two whole GPUs and one in MIG mode with two slices, as NVML fills it. */
static void make_machine(sw_gpu_inventory *inv)
{
    static const char *const gpu_uuids[] = {
        "GPU-aaaa1111-0000", "GPU-bbbb2222-0000", "GPU-aaaa9999-0000"};
    static const char *const mig_uuids[] = {"MIG-dddd4444", "MIG-eeee5555"};
    sw_gpu g = {0};
    sw_gpu_device d = {0};
    size_t i;

    sw_gpus_init(inv);
    for (i = 0; i < 3; i++) {
        g.index = (unsigned)i;
        g.uuid = (char *)gpu_uuids[i];
        g.mig = i == 2;
        d.gpu = sw_gpus_add_gpu(inv, &g);
        d.mig = -1;
        d.uuid = g.uuid;
        if (!g.mig)
            sw_gpus_add_device(inv, &d);
    }
    for (i = 0; i < 2; i++) {
        d.gpu = 2;
        d.mig = (int)i;
        d.uuid = (char *)mig_uuids[i];
        sw_gpus_add_device(inv, &d);
    }
}

/* What CUDA_VISIBLE_DEVICES leaves: the devices' UUIDs, joined. */
static void check_visible(const char *visible, const char *want)
{
    sw_gpu_inventory inv;
    sw_buf b = SW_BUF_INIT;
    size_t i;

    make_machine(&inv);
    sw_gpus_restrict(&inv, visible);
    for (i = 0; i < inv.n_devices; i++) {
        sw_buf_printf(&b, "%s%s", i ? "," : "", inv.devices[i].uuid);
        assert_true(inv.devices[i].gpu < inv.n_gpus);
        assert_true(inv.gpus[inv.devices[i].gpu].mig ==
                    (inv.devices[i].mig >= 0));
    }
    if (strcmp(sw_buf_cstr(&b), want) != 0)
        fail_msg("CUDA_VISIBLE_DEVICES='%s': got '%s', want '%s'",
                 visible ? visible : "(unset)", sw_buf_cstr(&b), want);
    if (inv.n_devices == 0)
        assert_non_null(inv.reason);
    sw_buf_dispose(&b);
    sw_gpus_dispose(&inv);
}

static void test_visible(void **state)
{
    (void)state;
    check_visible(NULL, "GPU-aaaa1111-0000,GPU-bbbb2222-0000,MIG-dddd4444,"
                        "MIG-eeee5555");
    check_visible("1", "GPU-bbbb2222-0000");
    check_visible("1,0", "GPU-aaaa1111-0000,GPU-bbbb2222-0000");
    check_visible("2", "MIG-dddd4444,MIG-eeee5555");
    check_visible("GPU-bbbb", "GPU-bbbb2222-0000");
    check_visible("MIG-eeee5555", "MIG-eeee5555");
    check_visible(" 0 , MIG-dddd", "GPU-aaaa1111-0000,MIG-dddd4444");
    /* CUDA stops at the first entry that names nothing */
    check_visible("0,7,1", "GPU-aaaa1111-0000");
    check_visible("0,-1,1", "GPU-aaaa1111-0000");
    check_visible("GPU-,1", "");
    /* the inventory keeps NVML's order, whatever the listing's */
    check_visible("GPU-aaaa9,1", "GPU-bbbb2222-0000,MIG-dddd4444,MIG-eeee5555");
    /* an ambiguous prefix names nothing, as in CUDA */
    check_visible("GPU-aaaa,1", "");
    check_visible("GPU-", "");
    check_visible("", "");
    check_visible("-1", "");
    check_visible("0,0", "GPU-aaaa1111-0000");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_put_size),
        cmocka_unit_test(test_declare_count),
        cmocka_unit_test(test_declare_none),
        cmocka_unit_test(test_declare_rich),
        cmocka_unit_test(test_declare_refused),
        cmocka_unit_test(test_visible),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
