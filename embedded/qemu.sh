# Sourced by the firmwares' run.sh (bash): boots an image on QEMU's mps2-an386 board (Cortex-M4, needs
# qemu-system-arm) with semihosting, so that the firmware's output reaches the log and its exit code QEMU's.
# QEMU_TIMEOUT (seconds, default 60) bounds each boot.

QEMU_TIMEOUT=${QEMU_TIMEOUT:-60}

# boot IMAGE LOG: runs IMAGE until it exits or QEMU_TIMEOUT passes, its output into LOG; sets `status` to the
# exit status (124: the timeout).
boot() {
  status=0
  timeout "$QEMU_TIMEOUT" qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic \
    -semihosting-config enable=on,target=native -kernel "$1" >"$2" 2>&1 || status=$?
}

# boot_and_expect IMAGE LOG PATTERN...: boots IMAGE and prints its log; exits 1 with a message if it hung,
# exited non-zero, or its log lacks a line matching one of the grep patterns.
boot_and_expect() {
  local image=$1 log=$2 line
  shift 2
  boot "$image" "$log"
  cat "$log"
  if [ "$status" -eq 124 ]; then
    echo "FAILED: the firmware hung (no exit within $QEMU_TIMEOUT s)" >&2
    exit 1
  fi
  if [ "$status" -ne 0 ]; then
    echo "FAILED: the firmware exited with status $status" >&2
    exit 1
  fi
  for line in "$@"; do
    grep -q -- "$line" "$log" || { echo "FAILED: the output lacks \"$line\"" >&2; exit 1; }
  done
}
