#!/usr/bin/env bash
# Runs example jobs of a checkout with a given tress binary, for comparing the outputs of two
# builds (scripts/compare-outputs.py): every job writes under TREE/out, a log per job under
# TREE/out/logs, and the seconds each took to TREE/out/logs/summary.txt.
#
#   scripts/run-examples.sh BINARY TREE [EXAMPLE…]     # EXAMPLE: a job of TREE/examples, or
#                                                     # drape_train (the drape example's model)
#
# SOURCE_DATE_EPOCH is fixed so Alembic files record the same date in both runs; TRESS_DATA
# defaults to ../shared/data beside TREE.
set -u
BIN=$(realpath "$1")
TREE=$(realpath "$2")
shift 2
export SOURCE_DATE_EPOCH=1700000000
export TRESS_DATA="${TRESS_DATA:-$(realpath "$TREE/../shared/data" 2>/dev/null || echo "$TREE/../shared/data")}"
cd "$TREE"
mkdir -p out/logs
[ $# -gt 0 ] || set -- quickstart reduced rod hairmesh real_groom experiments neural drape_train drape
for ex in "$@"; do
  start=$(date +%s)
  case $ex in
    drape_train) "$BIN" train drape --config drape_small -o out/drape_small.tnn > out/logs/$ex.log 2>&1 ;;
    *) "$BIN" run "examples/$ex.toml" > "out/logs/$ex.log" 2>&1 ;;
  esac
  echo "$ex rc=$? $(( $(date +%s) - start )) s" >> out/logs/summary.txt
done
