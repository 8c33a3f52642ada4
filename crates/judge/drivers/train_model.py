#!/usr/bin/env python3
"""physiojudge's train-stage driver for the PhysioNet Challenge 2022 interface.

Usage: python train_model.py DATA_FOLDER MODEL_FOLDER [VERBOSE]

Calls the entry's train_challenge_model(DATA_FOLDER, MODEL_FOLDER, VERBOSE) once.
VERBOSE is an integer (default 1). Exit codes: 0 trained, 1 the entry raised (the
traceback is on stderr), 2 usage error.

The organisers ran their own copy of this driver and of helper_code.py in place of the
team's; physiojudge does the same. Import order, set below: this driver's folder first,
so our helper_code.py wins over any copy the entry ships; then the working directory,
which the judge sets to the entry's folder (it holds team_code.py and the team's other
modules); then the rest of the usual path.
"""

import os
import sys

DRIVERS = os.path.dirname(os.path.abspath(__file__))
ENTRY = os.getcwd()
sys.path[:] = [DRIVERS, ENTRY] + [p for p in sys.path if p not in ("", DRIVERS, ENTRY)]


def main(argv):
    if len(argv) not in (3, 4):
        print("usage: python train_model.py DATA_FOLDER MODEL_FOLDER [VERBOSE]", file=sys.stderr)
        return 2
    data_folder, model_folder = argv[1], argv[2]
    try:
        verbose = int(argv[3]) if len(argv) == 4 else 1
    except ValueError:
        print(f"train_model.py: VERBOSE must be an integer, not {argv[3]!r}", file=sys.stderr)
        return 2
    from team_code import train_challenge_model

    train_challenge_model(data_folder, model_folder, verbose)
    if verbose >= 1:
        print("Done.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
