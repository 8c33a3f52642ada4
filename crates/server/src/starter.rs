//! Starter kits: the example entry of a challenge's kind (`entries/<folder>` of the
//! checkout, compiled into the binary by the kind so a server needs no checkout) packed
//! as a zip that runs as it is through `physiojudge evaluate` and uploads as it is
//! (docs/web.md, "The challenge page").

use std::io::Write;

use judge::Challenge;
use judge::kinds::EntryFile;
use zip::write::SimpleFileOptions;

/// The kit of a challenge: the example entry of its kind (`judge::kinds::Kind::example`,
/// written for the judge's pinned Python runtime; the MATLAB ones need a MATLAB runtime a
/// newcomer may not have, and their folders are in the repository), when the example
/// has every file the challenge requires: a definition may pair a kind's scorer with
/// another interface, and then the example would not run as it is.
fn kit(challenge: &Challenge) -> Option<&'static [EntryFile]> {
    let files = judge::kinds::of(challenge.scorer).shipped().example?.files;
    challenge
        .required_files
        .iter()
        .all(|f| {
            // a required folder is met by any file in it
            files
                .iter()
                .any(|kf| kf.path == f.as_str() || kf.path.starts_with(&format!("{f}/")))
        })
        .then_some(files)
}

/// Whether a challenge has a starter kit.
pub fn has_kit(challenge: &Challenge) -> bool {
    kit(challenge).is_some()
}

/// The kit of a challenge as a zip whose one folder is `folder` (the judge unwraps a
/// single top folder; unzipped, it keeps the kit together). `None`: no kit for it.
pub fn kit_zip(
    challenge: &Challenge,
    folder: &str,
) -> Option<Result<Vec<u8>, zip::result::ZipError>> {
    Some(pack(kit(challenge)?, folder))
}

fn pack(files: &[EntryFile], folder: &str) -> Result<Vec<u8>, zip::result::ZipError> {
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

    fn built_in() -> impl Iterator<Item = Challenge> {
        judge::challenge::BUILT_IN
            .iter()
            .map(|(id, _)| Challenge::built_in(id).unwrap())
    }

    #[test]
    fn every_kit_is_a_zip_of_its_entry_with_its_modes() {
        for c in built_in() {
            let id = &c.id;
            let files = kit(&c).unwrap();
            let bytes = kit_zip(&c, "k").unwrap().unwrap();
            let mut z = zip::ZipArchive::new(std::io::Cursor::new(&bytes)).unwrap();
            assert_eq!(z.len(), files.len(), "{id}");
            for f in files {
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
            assert_eq!(kit_zip(&c, "k").unwrap().unwrap(), bytes);
        }
    }

    #[test]
    fn a_kit_goes_only_where_it_has_the_challenges_required_files() {
        for c in built_in() {
            assert!(has_kit(&c), "{} lacks a required file", c.id);
            // The same scorer behind another interface's files: the example would
            // not run as it is, so there is no kit.
            let mut other = c.clone();
            other.required_files.push("nosuch.py".into());
            assert!(!has_kit(&other), "{}", c.id);
            assert!(kit_zip(&other, "k").is_none(), "{}", c.id);
        }
    }
}
