//! The entries that ship with CinC 2017: the example (`entries/cinc2017`, in MATLAB too)
//! and the trivial baseline, which calls every record normal rhythm.

use crate::kinds::{EntryFile, Example, Shipped};

const EXAMPLE: Example = Example {
    folder: "cinc2017",
    files: &[
        example_file!("cinc2017", "AUTHORS.txt", 0o644),
        example_file!("cinc2017", "LICENSE.txt", 0o644),
        example_file!("cinc2017", "README.md", 0o644),
        example_file!("cinc2017", "answers.txt", 0o644),
        example_file!("cinc2017", "classify.py", 0o755),
        example_file!("cinc2017", "dependencies.txt", 0o644),
        example_file!("cinc2017", "next.sh", 0o755),
        example_file!("cinc2017", "rules.json", 0o644),
        example_file!("cinc2017", "setup.sh", 0o755),
    ],
};

const TRIVIAL: &[EntryFile] = &[
    text_file!("setup.sh", "#!/bin/bash\ntrue\n"),
    text_file!(
        "next.sh",
        "#!/bin/bash\n# Trivial baseline: every record is normal rhythm.\necho \"$1,N\" >> answers.txt\n"
    ),
    text_file!("answers.txt", "# no submitted answers\n"),
    text_file!("dependencies.txt", "# none\n"),
    text_file!("AUTHORS.txt", "physiojudge demo\n"),
    text_file!("LICENSE.txt", "MIT\n"),
];

pub(super) const SHIPPED: Shipped = Shipped {
    example: Some(EXAMPLE),
    matlab_example: Some("cinc2017-matlab"),
    trivial: TRIVIAL,
};
