//! Starter kits: a challenge's example entry (`entries/<definition>` of the checkout,
//! compiled into the binary so a server needs no checkout) packed as a zip that runs
//! as it is through `physiojudge evaluate` and uploads as it is (docs/web.md, "The
//! challenge page").

use std::io::Write;

use zip::write::SimpleFileOptions;

/// One file of a kit: its path in the kit, its bytes and its Unix mode (the scripts
/// the judge runs are executable, as in the repository).
struct KitFile {
    path: &'static str,
    bytes: &'static [u8],
    mode: u32,
}

macro_rules! kit_file {
    ($kit:literal, $path:literal, $mode:literal) => {
        KitFile {
            path: $path,
            bytes: include_bytes!(concat!("../../../entries/", $kit, "/", $path)),
            mode: $mode,
        }
    };
}

/// The example entries by built-in definition id: the ones written for the judge's
/// pinned Python runtime (the MATLAB ones need a MATLAB runtime a newcomer may not
/// have; their folders are in the repository).
const KITS: &[(&str, &[KitFile])] = &[
    (
        "cpsc2021",
        &[
            kit_file!("cpsc2021", "AUTHORS.txt", 0o644),
            kit_file!("cpsc2021", "LICENSE.txt", 0o644),
            kit_file!("cpsc2021", "README.md", 0o644),
            kit_file!("cpsc2021", "entry_2021.py", 0o644),
            kit_file!("cpsc2021", "requirements.txt", 0o644),
        ],
    ),
    (
        "cinc2017",
        &[
            kit_file!("cinc2017", "AUTHORS.txt", 0o644),
            kit_file!("cinc2017", "LICENSE.txt", 0o644),
            kit_file!("cinc2017", "README.md", 0o644),
            kit_file!("cinc2017", "answers.txt", 0o644),
            kit_file!("cinc2017", "classify.py", 0o755),
            kit_file!("cinc2017", "dependencies.txt", 0o644),
            kit_file!("cinc2017", "next.sh", 0o755),
            kit_file!("cinc2017", "rules.json", 0o644),
            kit_file!("cinc2017", "setup.sh", 0o755),
        ],
    ),
    (
        "physionet2022",
        &[
            kit_file!("physionet2022", "AUTHORS.txt", 0o644),
            kit_file!("physionet2022", "LICENSE.txt", 0o644),
            kit_file!("physionet2022", "README.md", 0o644),
            kit_file!("physionet2022", "requirements.txt", 0o644),
            kit_file!("physionet2022", "team_code.py", 0o644),
        ],
    ),
    (
        "p300speller",
        &[
            kit_file!("p300speller", "AUTHORS.txt", 0o644),
            kit_file!("p300speller", "LICENSE.txt", 0o644),
            kit_file!("p300speller", "README.md", 0o644),
            kit_file!("p300speller", "config.toml", 0o644),
            kit_file!("p300speller", "requirements.txt", 0o644),
            kit_file!("p300speller", "test_speller.py", 0o644),
            kit_file!(
                "p300speller",
                "AlgorithmImplement/AlgorithmImplement.py",
                0o644
            ),
            kit_file!("p300speller", "AlgorithmImplement/settings.py", 0o644),
            kit_file!("p300speller", "AlgorithmImplement/speller.py", 0o644),
            kit_file!("p300speller", "AlgorithmImplement/training.py", 0o644),
        ],
    ),
];

/// Whether a definition id has a starter kit.
pub fn has_kit(definition: &str) -> bool {
    KITS.iter().any(|(id, _)| *id == definition)
}

/// The kit of definition `definition` as a zip whose one folder is `folder` (the
/// judge unwraps a single top folder; unzipped, it keeps the kit together). `None`:
/// no kit for that definition.
pub fn kit_zip(definition: &str, folder: &str) -> Option<Result<Vec<u8>, zip::result::ZipError>> {
    let (_, files) = KITS.iter().find(|(id, _)| *id == definition)?;
    Some(pack(files, folder))
}

fn pack(files: &[KitFile], folder: &str) -> Result<Vec<u8>, zip::result::ZipError> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    // A fixed time: the same kit is the same bytes (a participant's checksum holds).
    let when = zip::DateTime::from_date_and_time(2026, 1, 1, 0, 0, 0).unwrap_or_default();
    for f in files {
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(f.mode)
            .last_modified_time(when);
        w.start_file(format!("{folder}/{}", f.path), options)?;
        w.write_all(f.bytes)?;
    }
    Ok(w.finish()?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kit_is_a_zip_of_its_entry_with_its_modes() {
        for (id, files) in KITS {
            let bytes = kit_zip(id, "k").unwrap().unwrap();
            let mut z = zip::ZipArchive::new(std::io::Cursor::new(&bytes)).unwrap();
            assert_eq!(z.len(), files.len(), "{id}");
            for f in *files {
                let mut m = z.by_name(&format!("k/{}", f.path)).unwrap();
                assert_eq!(
                    m.unix_mode().map(|m| m & 0o777),
                    Some(f.mode),
                    "{id} {}",
                    f.path
                );
                let mut body = Vec::new();
                std::io::Read::read_to_end(&mut m, &mut body).unwrap();
                assert_eq!(body, f.bytes);
            }
            // the same kit twice is the same bytes
            assert_eq!(kit_zip(id, "k").unwrap().unwrap(), bytes);
        }
        assert!(kit_zip("nosuch", "k").is_none());
    }

    #[test]
    fn every_kit_has_its_challenges_required_files_and_folders() {
        for (id, _) in KITS {
            let c = judge::Challenge::built_in(id).unwrap();
            for f in &c.required_files {
                assert!(
                    KITS.iter().any(|(k, files)| k == id
                        && files.iter().any(|kf| {
                            // a required folder is met by any file in it
                            kf.path == f.as_str() || kf.path.starts_with(&format!("{f}/"))
                        })),
                    "{id} lacks {f}"
                );
            }
        }
    }
}
