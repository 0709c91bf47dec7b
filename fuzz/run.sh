#!/usr/bin/env bash
# Coverage-guided fuzzing of the C loader, init and two invokes with libFuzzer, ASan and
# UBSan (signed overflow included), over the runtime and every kernel.
#
#   fuzz/run.sh SECONDS [TAG]     TAG: "reference" (default) or a kernel tag such as cmsis
#
# Seeds: fuzz/seeds.py (the shared models, the zoo, the examples, small built models and
# tests/regression). The corpus grows in fuzz/build/<tag>/corpus; a crash leaves its input
# in fuzz/build/<tag>/crash-* and the script exits non-zero.
# Environment: CC (default clang), FUZZ_ARGS (extra libFuzzer flags, e.g. -max_len=4096),
# FUZZ_WORK (the work folder instead of fuzz/build/<tag>), FUZZ_BUILD_ONLY=1 (build and
# seed, then stop: for campaigns that run $FUZZ_WORK/fuzz_loader themselves).
set -euo pipefail
seconds="${1:?usage: fuzz/run.sh SECONDS [TAG]}"
tag="${2:-reference}"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
work="${FUZZ_WORK:-$here/build/$tag}"
cc="${CC:-clang}"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"

rm -rf "$work/src" "$work/obj"
mkdir -p "$work/src" "$work/obj" "$work/corpus" "$work/seeds"
tags=()
if [ "$tag" != "reference" ]; then tags=("$tag"); fi
python3 -m fuzz.sources "$work/src" "${tags[@]}" >/dev/null
rm -f "$work/src/tflm_debug_log.c"
cp "$here/harness.c" "$here/harness.h" "$here/fuzz_main.c" "$here/silent_log.c" "$work/src/"
python3 -m fuzz.seeds "$work/seeds"

flags=(-std=c99 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -fno-omit-frame-pointer)
objects=()
for source in "$work"/src/*.c; do
  object="$work/obj/$(basename "$source" .c).o"
  if [ "$(basename "$source")" = fuzz_main.c ]; then
    "$cc" "${flags[@]}" -c "$source" -o "$object"
  else
    "$cc" "${flags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -c "$source" -o "$object"
  fi
  objects+=("$object")
done
"$cc" "${flags[@]}" "${objects[@]}" -o "$work/fuzz_loader" -lm
if [ "${FUZZ_BUILD_ONLY:-0}" = 1 ]; then exit 0; fi

cd "$work"
# shellcheck disable=SC2086
./fuzz_loader -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
  -dict="$here/tflite.dict" -artifact_prefix="$work/" -print_final_stats=1 \
  ${FUZZ_ARGS:-} corpus seeds
