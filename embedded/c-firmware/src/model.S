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

/* The signed models (embedded/c-firmware/models, made by capi/tests/firmware_models.rs; the build passes
   -Wa,-I<that folder>): tiny-mlp signed by the firmware's test key, and the forgeries it must refuse. Each is
   NAME (64-byte aligned) and NAME_len (a word). */
    .macro model name, file
    .section .rodata.tpack, "a", %progbits
    .balign 64
    .global \name
    .type \name, %object
\name:
    .incbin "\file"
\name\()_end:
    .size \name, \name\()_end - \name
    .balign 4
    .global \name\()_len
    .type \name\()_len, %object
\name\()_len:
    .word \name\()_end - \name
    .size \name\()_len, 4
    .endm

    model signed_model, "signed.tpack"
    model tampered_model, "tampered.tpack"
    model other_key_model, "other-key.tpack"
    model rollback_model, "rollback.tpack"
