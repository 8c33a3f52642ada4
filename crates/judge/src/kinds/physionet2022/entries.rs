//! The entries that ship with PhysioNet 2022: the example (`entries/physionet2022`) and
//! the trivial baseline, which calls every patient Absent and Normal.

use crate::kinds::{EntryFile, Example, Shipped};

const EXAMPLE: Example = Example {
    folder: "physionet2022",
    files: &[
        example_file!("physionet2022", "AUTHORS.txt", 0o644),
        example_file!("physionet2022", "LICENSE.txt", 0o644),
        example_file!("physionet2022", "README.md", 0o644),
        example_file!("physionet2022", "requirements.txt", 0o644),
        example_file!("physionet2022", "team_code.py", 0o644),
    ],
};

const TRIVIAL: &[EntryFile] = &[text_file!(
    "team_code.py",
    "# Trivial baseline: every patient Absent and Normal.\n\
     import os\n\
     def train_challenge_model(data_folder, model_folder, verbose):\n\
     \x20   open(os.path.join(model_folder, 'model.txt'), 'w').write('trivial')\n\
     def load_challenge_model(model_folder, verbose):\n\
     \x20   return None\n\
     def run_challenge_model(model, data, recordings, verbose):\n\
     \x20   classes = ['Present', 'Unknown', 'Absent', 'Abnormal', 'Normal']\n\
     \x20   return classes, [0, 0, 1, 0, 1], [0.0, 0.0, 1.0, 0.0, 1.0]\n"
)];

pub(super) const SHIPPED: Shipped = Shipped {
    example: Some(EXAMPLE),
    matlab_example: None,
    trivial: TRIVIAL,
};
