#!/bin/bash
# Usage: next.sh RECORD
# RECORD.hea and RECORD.mat are in the current directory. Appends "RECORD,LABEL" to
# answers.txt in the current directory, LABEL one of N, A, O, ~.
set -euo pipefail
RECORD=$1
# classify.py sits next to this script, wherever the judge runs it from.
ENTRY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LABEL=$(python3 "$ENTRY_DIR/classify.py" "$RECORD")
echo "$RECORD,$LABEL" >> answers.txt
