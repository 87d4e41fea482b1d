/*
 * local_shim_blob.c - the shim program (local_shim.c, linked on its own:
 * backends/CMakeLists.txt) as bytes of whatever program makes a local
 * executor, so that its supervisor needs no path on disk to start it:
 * `sweep` installed anywhere, or a test, carries its own.
 */
#include "backends/local_internal.h"

__asm__(".section .rodata\n"
        ".balign 16\n"
        ".globl sw_local__shim_elf\n"
        ".hidden sw_local__shim_elf\n"
        "sw_local__shim_elf:\n"
        ".incbin \"" SW_LOCAL_SHIM_PATH "\"\n"
        ".globl sw_local__shim_elf_end\n"
        ".hidden sw_local__shim_elf_end\n"
        "sw_local__shim_elf_end:\n"
        ".byte 0\n"
        ".previous\n");
