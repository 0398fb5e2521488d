/* Vector table and reset handler for the Cortex-M4F of mps2-an386: copy .data, zero .bss, enable the FPU,
   paint the stack (for the high-water mark), call main. Faults end the run with a failure. */
#include <stdint.h>

#include "firmware.h"
#include "semihost.h"

extern uint32_t _data_start, _data_end, _data_load, _bss_start, _bss_end;
extern uint8_t _stack_bottom, _stack_top;

int main(void);

/* Coprocessor Access Control Register: CP10 and CP11 (the FPU) full access is bits 20..23. */
#define SCB_CPACR (*(volatile uint32_t *) 0xE000ED88u)
#define CPACR_CP10_CP11_FULL (0xFu << 20)

/* Stack bytes left unpainted below the reset handler's own frame. */
#define PAINT_GUARD 64u

__attribute__((noreturn)) void reset_handler(void)
{
    /* First, before any code that might use a floating-point register. */
    SCB_CPACR |= CPACR_CP10_CP11_FULL;
    __asm__ volatile("dsb\n\tisb" ::: "memory");

    for (uint32_t *src = &_data_load, *dst = &_data_start; dst < &_data_end;) {
        *dst++ = *src++;
    }
    for (uint32_t *dst = &_bss_start; dst < &_bss_end;) {
        *dst++ = 0;
    }
    uint8_t *below = (uint8_t *) __builtin_frame_address(0) - PAINT_GUARD;
    for (volatile uint8_t *p = &_stack_bottom; p < below; p++) {
        *p = STACK_PAINT;
    }
    sh_exit(main());
}

size_t stack_high_water(void)
{
    const volatile uint8_t *p = &_stack_bottom;
    while (p < &_stack_top && *p == STACK_PAINT) {
        p++;
    }
    return (size_t) (&_stack_top - (const uint8_t *) p);
}

static void fault(void)
{
    fail("hardware fault (HardFault, MemManage, BusFault, UsageFault or NMI)");
}

/* The library's panic handler calls this (capi/firmware-staticlib): report, and never return. */
void tpack_panic(void)
{
    say("FAIL: tpack panicked\n");
    sh_exit(2);
}

typedef void (*vector)(void);

/* The initial stack pointer, then the 15 system exceptions (only the ones the M4 has are set). */
__attribute__((section(".vectors"), used)) static const vector vectors[16] = {
    (vector) (uintptr_t) &_stack_top,
    (vector) reset_handler,
    fault, /* NMI */
    fault, /* HardFault */
    fault, /* MemManage */
    fault, /* BusFault */
    fault, /* UsageFault */
};
