#!/bin/bash
# Nothing to build or install: the classifier is one Python file that needs only numpy,
# which the judge's pinned runtime provides. Fail early, with a clear message, if the
# interpreter or numpy is missing, rather than on the first record.
set -euo pipefail
python3 -c 'import numpy' || { echo "setup.sh: python3 with numpy is required" >&2; exit 1; }
