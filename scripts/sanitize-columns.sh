#!/usr/bin/env bash
# Run the normaliser's tests against assets/_columns.c built with AddressSanitizer and UBSan
# (docs/benchmarks.md, "Session 20: the normaliser's C extension, fuzzed"). A tool to run by
# hand after changing the C, not part of `make setup` or CI.
#
#   bash scripts/sanitize-columns.sh [pytest arguments]
#
# It copies the committed tree (HEAD: commit first) to a scratch folder (never touching the working tree's build),
# compiles the extension there with -fsanitize=address,undefined, and runs pytest from it with
# the sanitizer runtimes preloaded and Python's own allocator off (PYTHONMALLOC=malloc, so that
# ASan sees every buffer). Without arguments: the C's edge tests, the extension's property test,
# the seeded fuzz and FUZZ_EXAMPLES (default 1000) examples of the long fuzz; arguments replace
# that selection (give test paths, or pytest runs the whole suite). A report is written
# to $OUT/asan.<pid> or $OUT/ubsan.<pid>; the script fails when pytest does or a report exists.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
OUT=${OUT:-${TMPDIR:-/tmp}/sanitize-columns}
rm -rf "$OUT" && mkdir -p "$OUT/tree"
git -C "$ROOT" archive HEAD | tar -x -C "$OUT/tree"
INC=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
SUFFIX=$("$PY" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
gcc -shared -fPIC -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
    -fno-sanitize-recover=undefined -I"$INC" \
    "$OUT/tree/assets/_columns.c" -o "$OUT/tree/assets/_columns$SUFFIX"

if [ $# -eq 0 ]; then
    set -- tests/assets/test_columns_ext.py tests/assets/test_normalise_compiled.py \
        tests/assets/test_normalise_fuzz.py -k "not int32"
fi
cd "$OUT/tree"
export FUZZ_EXAMPLES=${FUZZ_EXAMPLES:-1000} PYTHONMALLOC=malloc
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS="detect_leaks=0:log_path=$OUT/asan"
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$OUT/ubsan"
"$PY" -c "from assets import _columns; assert _columns.__file__.startswith('$OUT'), _columns"
status=0
"$PY" -m pytest -p no:xdist -p no:cacheprovider -q "$@" || status=$?
if ls "$OUT"/asan.* "$OUT"/ubsan.* >/dev/null 2>&1; then
    echo "sanitizer reports:" "$OUT"/asan.* "$OUT"/ubsan.* 2>/dev/null
    exit 1
fi
exit $status
