/*
 * test_token.c - the SHA-256 metrics tokens are kept as: FIPS 180-2's
 * test vectors, and what counts as a hash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "orchestrator/token.h"

static void expect_hash(const char *text, size_t len, const char *want)
{
    char got[SW_TOKEN_HASH_LEN + 1];

    sw_token_hash(text, len, got);
    assert_string_equal(got, want);
    assert_true(sw_token_is_hash(got));
}

static void test_known_vectors(void **state)
{
    (void)state;
    expect_hash(
        "", 0,
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect_hash(
        "abc", 3,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect_hash(
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* the length is what is hashed, not up to a NUL */
    expect_hash(
        "abcdef", 3,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_is_hash(void **state)
{
    (void)state;
    assert_false(sw_token_is_hash(""));
    assert_false(sw_token_is_hash("abc"));
    assert_false(sw_token_is_hash(
        "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
    assert_false(sw_token_is_hash(
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0"));
    assert_false(sw_token_is_hash(
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_vectors),
        cmocka_unit_test(test_is_hash),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
