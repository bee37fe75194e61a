#!/usr/bin/env bash
# Writes packages/file/test/fixtures/*.ss and their expected outputs in
# packages/file/test/fixtures-expected/ again, with the Rust crates themselves (see the README
# beside the fixtures). Rerunning it leaves the committed files as they are.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fixtures=$root/packages/file/test/fixtures
expected=$root/packages/file/test/fixtures-expected

# Outside the clone, shared with packages/file/test/interop.test.ts, so neither compiles twice.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/ruststream/interop-target}
(cd "$here" && cargo build --release --locked --quiet)
bin=$CARGO_TARGET_DIR/release/ruststream-interop

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every byte of these is fixed, so they come out the same on every run.
"$bin" fixtures "$fixtures"

# The broker stamps the header and each message with the clock, so a new run differs in its
# timestamps; a file that differs in nothing else is not worth a diff, and the committed one stays.
"$bin" broker-write "$work/broker-envelopes.ss"
if [ -f "$fixtures/broker-envelopes.ss" ] &&
  "$bin" same-but-clock "$work/broker-envelopes.ss" "$fixtures/broker-envelopes.ss"; then
  echo "broker-envelopes.ss: the broker wrote the same file but for its timestamps; kept the committed one"
else
  cp "$work/broker-envelopes.ss" "$fixtures/broker-envelopes.ss"
fi

for name in multi-key beacons no-eos broker-envelopes; do
  "$bin" decode "$fixtures/$name.ss" >"$expected/$name.jsonl"
done
"$bin" broker-read "$fixtures/broker-envelopes.ss" >"$expected/broker-envelopes.deliveries.jsonl"
echo "wrote $(cd "$fixtures" && ls ./*.ss | tr '\n' ' ')and their expected outputs"
