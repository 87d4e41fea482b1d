sw_test(backends local sw_backends)
sw_test(backends git sw_backends)
