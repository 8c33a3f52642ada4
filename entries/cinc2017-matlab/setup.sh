#!/bin/bash
# Nothing to build: the entry is MATLAB code the judge's `matlab` (GNU Octave) runs.
# Fail early, with a clear message, if `matlab` is missing, rather than on every record.
set -euo pipefail
command -v matlab >/dev/null || { echo "setup.sh: no matlab on the PATH" >&2; exit 1; }
