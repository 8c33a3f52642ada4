//! Tars (`.tar`, `.tar.gz`, `.tgz`), read with the `tar` crate in raw mode: its usual
//! mode reads GNU long names and PAX records whole into memory, whatever size they
//! declare; here each is refused past its cap before a byte of it is read.

use std::io::Read;

use super::{MAX_PATH_BYTES, MAX_PAX_BYTES, SHOWN_CHARS, UnpackError, Writer, shown, shown_start};

/// What a member's PAX record says that the judge uses.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Pax {
    pub(super) path: Option<Vec<u8>>,
    pub(super) size: Option<u64>,
}

/// Reads a PAX record's `<length> <key>=<value>\n` lines (POSIX pax). A key given twice
/// is refused rather than one copy chosen: readers differ on which wins.
pub(super) fn parse_pax(mut data: &[u8]) -> Result<Pax, String> {
    let mut pax = Pax::default();
    let bad = || "a malformed PAX record".to_string();
    let number = |s: &[u8]| {
        std::str::from_utf8(s)
            .ok()
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse::<u64>().ok())
    };
    // Some writers pad the record with NULs.
    while data.iter().any(|&b| b != 0) {
        let space = data.iter().position(|&b| b == b' ').ok_or_else(bad)?;
        let len = number(&data[..space]).ok_or_else(bad)?;
        let len = usize::try_from(len).map_err(|_| bad())?;
        if len <= space + 1 || len > data.len() || data[len - 1] != b'\n' {
            return Err(bad());
        }
        let line = &data[space + 1..len - 1];
        let eq = line.iter().position(|&b| b == b'=').ok_or_else(bad)?;
        let (key, value) = (&line[..eq], &line[eq + 1..]);
        let repeated = match key {
            b"path" => pax.path.replace(value.to_vec()).is_some(),
            b"size" => {
                let size = number(value).ok_or("a PAX size that is not a number")?;
                pax.size.replace(size).is_some()
            }
            // A sparse file's data is a map and fragments, not the file.
            k if k.starts_with(b"GNU.sparse.") => {
                return Err("a sparse file (not supported)".into());
            }
            _ => false,
        };
        if repeated {
            let key = String::from_utf8_lossy(key);
            return Err(format!("a PAX record giving {key} twice"));
        }
        data = &data[len..];
    }
    Ok(pax)
}

pub(super) fn unpack_tar(reader: Box<dyn Read>, w: &mut Writer) -> Result<(), UnpackError> {
    let mut ar = tar::Archive::new(reader);
    // Raw: extension records come to us as members, to be read with caps.
    let entries = ar.entries().map_err(|e| w.broken(e))?.raw(true);
    // A member's GNU long name and PAX record, which come before the member itself.
    let mut long_name: Option<Vec<u8>> = None;
    let mut pax: Option<Pax> = None;
    for entry in entries {
        let mut entry = entry.map_err(|e| w.broken(e))?;
        w.tick()?;
        let size = entry.size();
        let kind = entry.header().entry_type();
        let exec = entry.header().mode().is_ok_and(|m| m & 0o111 != 0);
        // At most 256 bytes (a ustar prefix and name).
        let header_name = entry.header().path_bytes().into_owned();
        let header_shown = || shown(&String::from_utf8_lossy(&header_name));
        match kind {
            tar::EntryType::GNULongName => {
                if long_name.is_some() {
                    return Err(w.unreadable("two GNU long names for one member"));
                }
                // The name and its terminating NUL.
                if size > MAX_PATH_BYTES as u64 + 1 {
                    let mut head = Vec::new();
                    (&mut entry)
                        .take(4 * SHOWN_CHARS as u64)
                        .read_to_end(&mut head)
                        .map_err(|e| w.broken(e))?;
                    return Err(UnpackError::BadName {
                        name: shown_start(&head),
                        why: format!(
                            "a name record of {size} bytes (names are at most {MAX_PATH_BYTES})"
                        ),
                    });
                }
                let mut name = record(&mut entry, size, w)?;
                if let Some(end) = name.iter().position(|&b| b == 0) {
                    name.truncate(end);
                }
                long_name = Some(name);
            }
            // It gives the target of a link, and links are refused.
            tar::EntryType::GNULongLink => {
                return Err(UnpackError::Link {
                    name: header_shown(),
                });
            }
            tar::EntryType::XHeader => {
                if pax.is_some() {
                    return Err(w.unreadable("two PAX records for one member"));
                }
                if size > MAX_PAX_BYTES {
                    return Err(w.unreadable(format!(
                        "{}: a PAX record of {size} bytes (at most {MAX_PAX_BYTES})",
                        header_shown()
                    )));
                }
                let data = record(&mut entry, size, w)?;
                let parsed = parse_pax(&data)
                    .map_err(|why| w.unreadable(format!("{}: {why}", header_shown())))?;
                pax = Some(parsed);
            }
            tar::EntryType::XGlobalHeader => {
                if long_name.is_some() || pax.is_some() {
                    return Err(w.unreadable(
                        "a PAX global record between a member's extension records and the member",
                    ));
                }
                if size > MAX_PAX_BYTES {
                    return Err(w.unreadable(format!(
                        "a PAX global record of {size} bytes (at most {MAX_PAX_BYTES})"
                    )));
                }
                // Nothing in it is used (its data is skipped on the next read), but it
                // counts: an archive of nothing else would otherwise cost time for free.
                w.count()?;
            }
            _ => {
                let pax = pax.take().unwrap_or_default();
                let raw = match (long_name.take(), pax.path) {
                    (Some(_), Some(_)) => {
                        return Err(w.unreadable(format!(
                            "{}: named by both a GNU long name and a PAX path",
                            header_shown()
                        )));
                    }
                    (Some(n), None) | (None, Some(n)) => n,
                    (None, None) => header_name,
                };
                let name = String::from_utf8_lossy(&raw).into_owned();
                // The tar crate in raw mode reads the header's size, so a PAX size that
                // differs would be read differently by other tools.
                if let Some(p) = pax.size.filter(|&p| p != size) {
                    if p > w.room() {
                        return Err(UnpackError::TooLarge {
                            cap: w.caps.bytes,
                            name: shown(&name),
                        });
                    }
                    return Err(w.unreadable(format!(
                        "{}: a PAX size of {p} bytes, a header size of {size}",
                        shown(&name)
                    )));
                }
                if kind.is_dir() {
                    if size != 0 {
                        return Err(w.unreadable(format!(
                            "{}: a folder holding {size} bytes",
                            shown(&name)
                        )));
                    }
                    w.dir(&name)?;
                } else if kind.is_file() {
                    let n = w.file(&name, exec, Some(size), &mut entry)?;
                    if n != size {
                        return Err(w.unreadable(format!(
                            "{}: truncated ({n} of {size} bytes)",
                            shown(&name)
                        )));
                    }
                } else {
                    return Err(UnpackError::Link { name: shown(&name) });
                }
            }
        }
    }
    if long_name.is_some() || pax.is_some() {
        return Err(w.unreadable("an extension record with no member after it"));
    }
    Ok(())
}

/// An extension record's data: `size` bytes, already checked against its cap.
fn record(entry: &mut impl Read, size: u64, w: &Writer) -> Result<Vec<u8>, UnpackError> {
    let mut data = Vec::new();
    entry
        .take(size)
        .read_to_end(&mut data)
        .map_err(|e| w.broken(e))?;
    if data.len() as u64 != size {
        return Err(w.unreadable("it ends early"));
    }
    Ok(data)
}
