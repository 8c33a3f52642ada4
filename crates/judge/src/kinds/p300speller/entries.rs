//! The entries that ship with the P300 speller: the example (`entries/p300speller`) and
//! the trivial baseline, which spells 'A' for every character.

use crate::kinds::{EntryFile, Example, Shipped};

const EXAMPLE: Example = Example {
    folder: "p300speller",
    files: &[
        example_file!("p300speller", "AUTHORS.txt", 0o644),
        example_file!("p300speller", "LICENSE.txt", 0o644),
        example_file!("p300speller", "README.md", 0o644),
        example_file!("p300speller", "config.toml", 0o644),
        example_file!("p300speller", "requirements.txt", 0o644),
        example_file!("p300speller", "test_speller.py", 0o644),
        example_file!(
            "p300speller",
            "AlgorithmImplement/AlgorithmImplement.py",
            0o644
        ),
        example_file!("p300speller", "AlgorithmImplement/settings.py", 0o644),
        example_file!("p300speller", "AlgorithmImplement/speller.py", 0o644),
        example_file!("p300speller", "AlgorithmImplement/training.py", 0o644),
    ],
};

const TRIVIAL: &[EntryFile] = &[
    text_file!(
        "AlgorithmImplement/AlgorithmImplement.py",
        "# Trivial baseline: 'A' for every character, as early as a report counts.\n\
         from physiojudge_stream import AlgorithmInterface, ReportModel\n\
         class AlgorithmImplement(AlgorithmInterface):\n\
         \x20   def run(self):\n\
         \x20       pending = False\n\
         \x20       while True:\n\
         \x20           packet = self.task.get_data()\n\
         \x20           if pending:\n\
         \x20               self.task.report(ReportModel(101))\n\
         \x20               pending = False\n\
         \x20           if (packet.data[-1] == 101).any():\n\
         \x20               pending = True\n\
         \x20           if packet.finished_flag:\n\
         \x20               break\n"
    ),
    text_file!("config.toml", "unitImage = \"python:3\"\n"),
];

pub(super) const SHIPPED: Shipped = Shipped {
    example: Some(EXAMPLE),
    matlab_example: None,
    trivial: TRIVIAL,
};
