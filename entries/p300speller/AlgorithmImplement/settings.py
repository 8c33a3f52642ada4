"""Settings of the baseline meant to be changed by hand."""

# True: report a character as soon as, after a complete sequence, its posterior passes
# the threshold tuned in training (dynamic stopping). False: always wait for all 5
# sequences (the threshold is then unused).
DYNAMIC_STOPPING = True
