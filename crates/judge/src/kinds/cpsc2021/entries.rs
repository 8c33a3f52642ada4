//! The entries that ship with CPSC 2021: the example (`entries/cpsc2021`, in MATLAB too)
//! and the trivial baseline, which finds no AF anywhere.

use crate::kinds::{EntryFile, Example, Shipped};

const EXAMPLE: Example = Example {
    folder: "cpsc2021",
    files: &[
        example_file!("cpsc2021", "AUTHORS.txt", 0o644),
        example_file!("cpsc2021", "LICENSE.txt", 0o644),
        example_file!("cpsc2021", "README.md", 0o644),
        example_file!("cpsc2021", "entry_2021.py", 0o644),
        example_file!("cpsc2021", "requirements.txt", 0o644),
    ],
};

const TRIVIAL: &[EntryFile] = &[
    text_file!(
        "entry_2021.py",
        "# Trivial baseline: no AF anywhere.\n\
         import json, os, sys\n\
         data, out = sys.argv[1], sys.argv[2]\n\
         for name in open(os.path.join(data, 'RECORDS')).read().split():\n\
         \x20   json.dump({'predict_endpoints': []}, open(os.path.join(out, name + '.json'), 'w'))\n"
    ),
    text_file!("AUTHORS.txt", "physiojudge demo\n"),
    text_file!("LICENSE.txt", "MIT\n"),
];

pub(super) const SHIPPED: Shipped = Shipped {
    example: Some(EXAMPLE),
    matlab_example: Some("cpsc2021-matlab"),
    trivial: TRIVIAL,
};
