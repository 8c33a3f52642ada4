#!/bin/bash
# Usage: next.sh RECORD
# RECORD.hea and RECORD.mat are in the current directory; challenge.m appends
# "RECORD,LABEL" to answers.txt there. As the PhysioNet 2017 MATLAB sample entry did:
# one MATLAB session per record, and an error is this record's failure (exit 1).
set -euo pipefail
RECORD=$1
ENTRY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
matlab -nodisplay -nosplash -r "addpath('$ENTRY_DIR'); try; challenge('$RECORD'); catch e; disp(e.message); exit(1); end; quit;"
