sw_test(backends local sw_backends)
