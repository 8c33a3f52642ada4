#!/usr/bin/env python3
"""physiojudge's run-stage driver for the PhysioNet Challenge 2022 interface.

Usage: python run_model.py MODEL_FOLDER DATA_FOLDER OUTPUT_FOLDER [VERBOSE]

Loads the entry's model once with load_challenge_model(MODEL_FOLDER, VERBOSE), then for
each patient file in DATA_FOLDER (the *.txt files, dot-files skipped, sorted, by number
when every name is an integer) calls run_challenge_model(model, data, recordings,
VERBOSE) and writes OUTPUT_FOLDER/<file root>.csv with save_challenge_outputs.

As in the official driver (allow_failures = False), an exception for any patient stops
the whole run: no later patient is processed. Exit codes: 0 every patient has an
output, 1 the entry raised or there was no patient file (message on stderr), 2 usage
error.

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
    if len(argv) not in (4, 5):
        print("usage: python run_model.py MODEL_FOLDER DATA_FOLDER OUTPUT_FOLDER [VERBOSE]", file=sys.stderr)
        return 2
    model_folder, data_folder, output_folder = argv[1], argv[2], argv[3]
    try:
        verbose = int(argv[4]) if len(argv) == 5 else 1
    except ValueError:
        print(f"run_model.py: VERBOSE must be an integer, not {argv[4]!r}", file=sys.stderr)
        return 2

    from helper_code import find_patient_files, get_patient_id, load_patient_data, load_recordings, save_challenge_outputs
    from team_code import load_challenge_model, run_challenge_model

    patient_files = find_patient_files(data_folder)
    if not patient_files:
        print(f"run_model.py: no patient files (*.txt) in {data_folder}", file=sys.stderr)
        return 1
    model = load_challenge_model(model_folder, verbose)
    os.makedirs(output_folder, exist_ok=True)
    for i, path in enumerate(patient_files):
        if verbose >= 2:
            print(f"    {i + 1}/{len(patient_files)} {path}")
        data = load_patient_data(path)
        recordings = load_recordings(data_folder, data)
        classes, labels, probabilities = run_challenge_model(model, data, recordings, verbose)
        root = os.path.splitext(os.path.basename(path))[0]
        save_challenge_outputs(
            os.path.join(output_folder, root + ".csv"), get_patient_id(data), classes, labels, probabilities
        )
    if verbose >= 1:
        print("Done.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
