/* A stand-in for Windows' bcryptprimitives.dll, which Debian's wine 8.0 lacks: Rust's standard library
 * (1.78 and later) imports ProcessPrng from it for HashMap's random keys, so no Rust test binary for
 * x86_64-pc-windows-gnu starts under that wine without it ("Library bcryptprimitives.dll ... not found",
 * exit status 53). Wine 9 ships the DLL; drop this file when CI's wine has it.
 *
 * ProcessPrng is forwarded to RtlGenRandom (advapi32's SystemFunction036), which wine implements. It takes
 * a 32-bit length, so a longer request is filled in pieces. Used only to run tests under wine, never shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG piece = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, piece)) {
            return FALSE;
        }
        data += piece;
        length -= piece;
    }
    return TRUE;
}
