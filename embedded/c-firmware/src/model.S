/* The model container in flash. A payload is aligned to its entry's alignment relative to the container's first
   byte, so the container itself must start at a multiple of the largest alignment an entry asks for: 64 for
   tiny-mlp (the format's default). main.c checks every payload pointer against its entry's alignment, so a
   model that needs more fails loudly rather than being read misaligned. The build passes -Wa,-I<dir of the
   model>. */
    .section .rodata.tpack, "a", %progbits
    .balign 64
    .global tpack_model
    .type tpack_model, %object
tpack_model:
    .incbin "tiny-mlp.tpack"
tpack_model_end:
    .size tpack_model, tpack_model_end - tpack_model

    .balign 4
    .global tpack_model_len
    .type tpack_model_len, %object
tpack_model_len:
    .word tpack_model_end - tpack_model
    .size tpack_model_len, 4
