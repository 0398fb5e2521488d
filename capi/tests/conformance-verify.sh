#!/bin/sh
# The C conformance reader's --verify-signature (the kit's protocol for verification vectors) over every
# verification of spec/vectors/manifest.json: "ok" and exit 0, or the rule id and exit 1, as the manifest says.
# Then a key set that is not of the protocol's shape must give exit 2. Run build-conformance.sh first.
#
#   capi/tests/conformance-verify.sh [READER]      default: target/capi/conformance_reader
#
# Needs jq.
set -eu

. "$(dirname "$0")/common.sh"
reader=${1:-$out/conformance_reader}
manifest="$root/spec/vectors/manifest.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

count=$(jq '[.vectors[] | select(.verifications) | .verifications[]] | length' "$manifest")
[ "$count" -gt 0 ] || { echo "conformance-verify: no verification in the manifest" >&2; exit 1; }
failed=0
i=0
while [ "$i" -lt "$count" ]; do
    jq -c "[.vectors[] | select(.verifications) | .file as \$f | .verifications[] | . + {file: \$f}][$i]" \
        "$manifest" > "$work/case.json"
    jq -c '.keys' "$work/case.json" > "$work/keys.json"
    jq -c '.policy' "$work/case.json" > "$work/policy.json"
    file=$(jq -r '.file' "$work/case.json")
    want=$(jq -r '.verdict' "$work/case.json")
    status=0
    got=$("$reader" --verify-signature "$work/keys.json" "$work/policy.json" "$root/spec/vectors/$file") || status=$?
    if [ "$want" = ok ]; then want_status=0; else want_status=1; fi
    if [ "$got" != "$want" ] || [ "$status" -ne "$want_status" ]; then
        echo "FAIL $file (verification $i): printed '$got', exit $status; want '$want', exit $want_status" >&2
        failed=$((failed + 1))
    fi
    i=$((i + 1))
done
echo '[{"algorithm": 1, "key_id": "00"}]' > "$work/bad-keys.json"
status=0
"$reader" --verify-signature "$work/bad-keys.json" "$work/policy.json" "$root/spec/vectors/valid/example.tpack" \
    >/dev/null 2>&1 || status=$?
if [ "$status" -ne 2 ]; then
    echo "FAIL: a key id of 1 byte gave exit $status, not 2" >&2
    failed=$((failed + 1))
fi
[ "$failed" -eq 0 ] || { echo "conformance-verify: $failed failed" >&2; exit 1; }
echo "conformance-verify: $count verifications give the manifest's verdict; a malformed key set exits 2"
