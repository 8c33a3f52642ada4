//! Zips, read here (APPNOTE.TXT: PKWARE's .ZIP file format specification) rather than with
//! the `zip` crate, which holds the whole central directory in memory (its size is the
//! archive's to choose) and reads a member's data without comparing its local header with
//! the central directory. One central entry is read at a time, checked against its local
//! header, and its member written.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

use super::{MAX_PATH_BYTES, SHOWN_CHARS, Timed, UnpackError, Writer, shown, shown_start};

pub(super) const LOCAL: u32 = 0x0403_4b50;
pub(super) const CENTRAL: u32 = 0x0201_4b50;
pub(super) const END: u32 = 0x0605_4b50;
pub(super) const END64: u32 = 0x0606_4b50;
pub(super) const END64_LOCATOR: u32 = 0x0706_4b50;
pub(super) const DESCRIPTOR: u32 = 0x0807_4b50;
/// What a 32-bit size or offset holds when the zip64 extra field has the value.
const SATURATED: u64 = 0xFFFF_FFFF;

pub(super) fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}

pub(super) fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

pub(super) fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from(u32_at(b, i)) | u64::from(u32_at(b, i + 4)) << 32
}

type ZipReader = BufReader<Timed<File>>;

fn read_at(r: &mut ZipReader, w: &Writer, pos: u64, buf: &mut [u8]) -> Result<(), UnpackError> {
    r.seek(SeekFrom::Start(pos))
        .and_then(|_| r.read_exact(buf))
        .map_err(|e| w.broken(e))
}

/// The data of extra field `id`, if there is one.
fn extra_field(extra: &[u8], id: u16) -> Option<&[u8]> {
    let mut i = 0;
    while i + 4 <= extra.len() {
        let end = i + 4 + usize::from(u16_at(extra, i + 2));
        if end > extra.len() {
            return None;
        }
        if u16_at(extra, i) == id {
            return Some(&extra[i + 4..end]);
        }
        i = end;
    }
    None
}

/// Replaces the saturated ones of `fields` (each a value, its saturated form and its size
/// in the extra field) with the zip64 extra field's values, which come in that order.
fn zip64_values(extra: &[u8], fields: &mut [(&mut u64, u64, usize)]) -> Result<(), &'static str> {
    if fields.iter().all(|(v, sat, _)| **v != *sat) {
        return Ok(());
    }
    let mut data = extra_field(extra, 1).ok_or("a zip64 size without its extra field")?;
    for (v, sat, size) in fields.iter_mut() {
        if **v != *sat {
            continue;
        }
        if data.len() < *size {
            return Err("a zip64 extra field too short for its sizes");
        }
        **v = if *size == 8 {
            u64_at(data, 0)
        } else {
            u64::from(u32_at(data, 0))
        };
        data = &data[*size..];
    }
    Ok(())
}

/// IBM code page 437, bytes 0x80 to 0xFF: what a zip name not marked UTF-8 is in.
pub(super) const CP437_HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}";

/// A zip member's name: UTF-8 if it is (as the `zip` crate reads them), else code page
/// 437 unless flagged UTF-8.
pub(super) fn zip_name(raw: &[u8], flags: u16) -> Result<String, String> {
    match std::str::from_utf8(raw) {
        Ok(s) => Ok(s.to_owned()),
        Err(_) if flags & 0x800 != 0 => Err(format!(
            "{}: a name marked UTF-8 that is not",
            shown(&String::from_utf8_lossy(raw))
        )),
        Err(_) => Ok(raw
            .iter()
            .map(|&b| match b {
                0..0x80 => char::from(b),
                _ => CP437_HIGH.chars().nth(usize::from(b - 0x80)).unwrap_or('?'),
            })
            .collect()),
    }
}

/// Where the central directory is, per the end record (and its zip64 form).
struct Directory {
    start: u64,
    end: u64,
    entries: u64,
}

fn find_directory(r: &mut ZipReader, w: &Writer, len: u64) -> Result<Directory, UnpackError> {
    // The end record is the last thing in a zip, 22 bytes and a comment of up to 64 KiB.
    let tail_len = len.min(22 + 0xFFFF) as usize;
    let mut tail = vec![0; tail_len];
    read_at(r, w, len - tail_len as u64, &mut tail)?;
    let at = (0..=tail_len.saturating_sub(22))
        .rev()
        .find(|&i| {
            i + 22 <= tail_len
                && u32_at(&tail, i) == END
                && i + 22 + usize::from(u16_at(&tail, i + 20)) == tail_len
        })
        .ok_or_else(|| w.unreadable("no zip end record (not a zip file?)"))?;
    let end_pos = len - tail_len as u64 + at as u64;
    let e = &tail[at..at + 22];
    let mut disks = [u64::from(u16_at(e, 4)), u64::from(u16_at(e, 6))];
    let mut entries = [u64::from(u16_at(e, 8)), u64::from(u16_at(e, 10))];
    let mut size = u64::from(u32_at(e, 12));
    let mut start = u64::from(u32_at(e, 16));
    let mut end = end_pos;
    if end_pos >= 20 {
        let mut loc = [0; 20];
        read_at(r, w, end_pos - 20, &mut loc)?;
        if u32_at(&loc, 0) == END64_LOCATOR {
            let at64 = u64_at(&loc, 8);
            let locator = end_pos - 20;
            if u32_at(&loc, 4) != 0 || u32_at(&loc, 16) > 1 {
                return Err(w.unreadable("a zip split over several disks (not supported)"));
            }
            let mut e64 = [0; 56];
            if at64.checked_add(56).is_none_or(|x| x > locator) {
                return Err(w.unreadable("a zip64 locator pointing past it"));
            }
            read_at(r, w, at64, &mut e64)?;
            let record = u64_at(&e64, 4);
            if u32_at(&e64, 0) != END64
                || at64.checked_add(12).and_then(|x| x.checked_add(record)) != Some(locator)
            {
                return Err(w.unreadable("a broken zip64 end record"));
            }
            let long = [
                u64::from(u32_at(&e64, 16)),
                u64::from(u32_at(&e64, 20)),
                u64_at(&e64, 24),
                u64_at(&e64, 32),
                u64_at(&e64, 40),
                u64_at(&e64, 48),
            ];
            let short = [disks[0], disks[1], entries[0], entries[1], size, start];
            let saturated = [0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, SATURATED, SATURATED];
            // Writers put the value in the 32-bit record too when it fits.
            if (0..6).any(|i| short[i] != long[i] && short[i] != saturated[i]) {
                return Err(w.unreadable("the zip end record and its zip64 form disagree"));
            }
            disks = [long[0], long[1]];
            entries = [long[2], long[3]];
            size = long[4];
            start = long[5];
            end = at64;
        }
    }
    if disks != [0, 0] || entries[0] != entries[1] {
        return Err(w.unreadable("a zip split over several disks (not supported)"));
    }
    if start.checked_add(size) != Some(end) {
        return Err(w.unreadable("the central directory is not where the end record says"));
    }
    Ok(Directory {
        start,
        end,
        entries: entries[1],
    })
}

/// One central directory entry, with its zip64 values.
struct Central {
    name_raw: Vec<u8>,
    name: String,
    flags: u16,
    method: u16,
    crc: u32,
    csize: u64,
    usize: u64,
    offset: u64,
    /// The Unix mode, if the zip was made on Unix and gives one.
    mode: Option<u32>,
}

fn read_central(
    r: &mut ZipReader,
    w: &Writer,
    pos: u64,
    end: u64,
    extra: &mut Vec<u8>,
) -> Result<(Central, u64), UnpackError> {
    let mut h = [0u8; 46];
    if pos.checked_add(46).is_none_or(|x| x > end) {
        return Err(w.unreadable("the central directory is shorter than its entries"));
    }
    read_at(r, w, pos, &mut h)?;
    if u32_at(&h, 0) != CENTRAL {
        return Err(w.unreadable("a broken central directory"));
    }
    let name_len = usize::from(u16_at(&h, 28));
    let extra_len = usize::from(u16_at(&h, 30));
    let next = pos + 46 + (name_len + extra_len + usize::from(u16_at(&h, 32))) as u64;
    if next > end {
        return Err(w.unreadable("the central directory is shorter than its entries"));
    }
    if name_len > MAX_PATH_BYTES {
        let mut head = vec![0; 4 * SHOWN_CHARS];
        r.read_exact(&mut head).map_err(|e| w.broken(e))?;
        return Err(UnpackError::BadName {
            name: shown_start(&head),
            why: format!("a name of {name_len} bytes (at most {MAX_PATH_BYTES})"),
        });
    }
    let mut name_raw = vec![0; name_len];
    r.read_exact(&mut name_raw).map_err(|e| w.broken(e))?;
    extra.resize(extra_len, 0);
    r.read_exact(extra).map_err(|e| w.broken(e))?;
    let flags = u16_at(&h, 8);
    let name = zip_name(&name_raw, flags).map_err(|why| w.unreadable(why))?;
    let mut csize = u64::from(u32_at(&h, 20));
    let mut usize = u64::from(u32_at(&h, 24));
    let mut offset = u64::from(u32_at(&h, 42));
    let mut disk = u64::from(u16_at(&h, 34));
    zip64_values(
        extra,
        &mut [
            (&mut usize, SATURATED, 8),
            (&mut csize, SATURATED, 8),
            (&mut offset, SATURATED, 8),
            (&mut disk, 0xFFFF, 4),
        ],
    )
    .map_err(|why| w.unreadable(format!("{}: {why}", shown(&name))))?;
    if disk != 0 {
        return Err(w.unreadable("a zip split over several disks (not supported)"));
    }
    let external = u32_at(&h, 38);
    let mode = (u16_at(&h, 4) >> 8 == 3 && external >> 16 != 0).then_some(external >> 16);
    let c = Central {
        name_raw,
        name,
        flags,
        method: u16_at(&h, 10),
        crc: u32_at(&h, 16),
        csize,
        usize,
        offset,
        mode,
    };
    Ok((c, next))
}

/// Checks a member's local header against its central directory entry; gives where its
/// data starts and whether a data descriptor follows the data.
fn check_local(
    r: &mut ZipReader,
    w: &Writer,
    c: &Central,
    extra: &mut Vec<u8>,
) -> Result<(u64, bool), UnpackError> {
    let disagree = |what: &str| {
        w.unreadable(format!(
            "{}: the local header and the central directory disagree on {what}",
            shown(&c.name)
        ))
    };
    let mut h = [0u8; 30];
    read_at(r, w, c.offset, &mut h)?;
    if u32_at(&h, 0) != LOCAL {
        return Err(w.unreadable(format!(
            "{}: no local header where the central directory says",
            shown(&c.name)
        )));
    }
    let flags = u16_at(&h, 6);
    let name_len = usize::from(u16_at(&h, 26));
    let extra_len = usize::from(u16_at(&h, 28));
    if name_len != c.name_raw.len() {
        return Err(disagree("the name"));
    }
    let mut name = vec![0; name_len];
    r.read_exact(&mut name).map_err(|e| w.broken(e))?;
    if name != c.name_raw {
        return Err(disagree("the name"));
    }
    if flags & 1 != 0 {
        return Err(w.unreadable(format!("{}: encrypted (not supported)", shown(&c.name))));
    }
    if u16_at(&h, 8) != c.method {
        return Err(disagree("the compression method"));
    }
    extra.resize(extra_len, 0);
    r.read_exact(extra).map_err(|e| w.broken(e))?;
    let mut csize = u64::from(u32_at(&h, 18));
    let mut usize = u64::from(u32_at(&h, 22));
    zip64_values(
        extra,
        &mut [(&mut usize, SATURATED, 8), (&mut csize, SATURATED, 8)],
    )
    .map_err(|why| w.unreadable(format!("{}: {why}", shown(&c.name))))?;
    // With a data descriptor, the local header may leave them 0 (written before the data).
    let descriptor = flags & 8 != 0;
    let agrees = |local: u64, central: u64| local == central || (descriptor && local == 0);
    if !agrees(u64::from(u32_at(&h, 14)), u64::from(c.crc)) {
        return Err(disagree("the CRC"));
    }
    if !agrees(csize, c.csize) || !agrees(usize, c.usize) {
        return Err(disagree("the sizes"));
    }
    Ok((c.offset + 30 + (name_len + extra_len) as u64, descriptor))
}

/// Checks a data descriptor (at `at`, before `limit`) against the central directory:
/// an optional signature, the CRC, and both sizes in 4 or (zip64) 8 bytes.
fn check_descriptor(
    r: &mut ZipReader,
    w: &Writer,
    c: &Central,
    at: u64,
    limit: u64,
) -> Result<(), UnpackError> {
    let mut d = [0u8; 24];
    let n = limit.saturating_sub(at).min(24) as usize;
    read_at(r, w, at, &mut d[..n])?;
    let d = &d[..n];
    let body = if n >= 4 && u32_at(d, 0) == DESCRIPTOR {
        &d[4..]
    } else {
        d
    };
    let crc = body.len() >= 4 && u32_at(body, 0) == c.crc;
    let short = body.len() >= 12
        && u64::from(u32_at(body, 4)) == c.csize
        && u64::from(u32_at(body, 8)) == c.usize;
    let long = body.len() >= 20 && u64_at(body, 4) == c.csize && u64_at(body, 12) == c.usize;
    if !(crc && (short || long)) {
        return Err(w.unreadable(format!(
            "{}: the data descriptor and the central directory disagree",
            shown(&c.name)
        )));
    }
    Ok(())
}

pub(super) fn unpack_zip(file: Timed<File>, w: &mut Writer) -> Result<(), UnpackError> {
    let len = file.inner.metadata().map_err(|e| w.broken(e))?.len();
    let mut r = BufReader::new(file);
    let dir = find_directory(&mut r, w, len)?;
    // Declared: refused before any is read.
    if dir.entries > w.caps.files as u64 {
        // Refused on the count, having read the names only (the central directory),
        // to say which folder holds them.
        let mut pos = dir.start;
        let mut extra = Vec::new();
        for _ in 0..dir.entries {
            w.tick()?;
            let Ok((c, next)) = read_central(&mut r, w, pos, dir.end, &mut extra) else {
                break;
            };
            pos = next;
            if let Ok(Some(rel)) = w.relative(&c.name) {
                w.note(&rel);
            }
        }
        return Err(w.too_many());
    }
    // Each member's span (local header and data), by start: members may not share bytes,
    // the trick of zip bombs that pass one member's data off as many members.
    let mut spans: BTreeMap<u64, u64> = BTreeMap::new();
    let mut extra = Vec::new();
    let mut pos = dir.start;
    for _ in 0..dir.entries {
        w.tick()?;
        let (c, next) = read_central(&mut r, w, pos, dir.end, &mut extra)?;
        pos = next;
        let name = c.name.as_str();
        if c.flags & 1 != 0 || c.method == 99 {
            return Err(w.unreadable(format!("{}: encrypted (not supported)", shown(name))));
        }
        if c.method != 0 && c.method != 8 {
            return Err(w.unreadable(format!(
                "{}: compressed with method {} (only stored and deflate are supported)",
                shown(name),
                c.method
            )));
        }
        let kind = c.mode.map_or(0, |m| m & 0o170000);
        if !matches!(kind, 0 | 0o100000 | 0o040000) {
            return Err(UnpackError::Link { name: shown(name) });
        }
        let (data_start, descriptor) = check_local(&mut r, w, &c, &mut extra)?;
        let data_end = data_start
            .checked_add(c.csize)
            .filter(|&e| e <= dir.start)
            .ok_or_else(|| {
                w.unreadable(format!(
                    "{}: its data runs into the central directory",
                    shown(name)
                ))
            })?;
        if spans
            .range(..data_end)
            .next_back()
            .is_some_and(|(_, &end)| end > c.offset)
        {
            return Err(w.unreadable(format!(
                "{}: its data overlaps another member's",
                shown(name)
            )));
        }
        spans.insert(c.offset, data_end);
        if name.ends_with('/') || kind == 0o040000 {
            if c.usize != 0 {
                return Err(w.unreadable(format!("{}: a folder holding data", shown(name))));
            }
            w.dir(name)?;
            continue;
        }
        if c.usize > w.room() {
            return Err(UnpackError::TooLarge {
                cap: w.caps.bytes,
                name: shown(name),
            });
        }
        let exec = c.mode.is_some_and(|m| m & 0o111 != 0);
        r.seek(SeekFrom::Start(data_start))
            .map_err(|e| w.broken(e))?;
        let raw = (&mut r).take(c.csize);
        // One byte more than declared, to see a member longer than it says.
        let limit = c.usize.saturating_add(1);
        let (n, crc, consumed) = if c.method == 0 {
            if c.csize != c.usize {
                return Err(w.unreadable(format!(
                    "{}: stored, but {} bytes packed for {} unpacked",
                    shown(name),
                    c.csize,
                    c.usize
                )));
            }
            let mut data = flate2::CrcReader::new(raw);
            let n = w.file(name, exec, Some(c.usize), &mut (&mut data).take(limit))?;
            (n, data.crc().sum(), n)
        } else {
            let mut data = flate2::CrcReader::new(flate2::read::DeflateDecoder::new(raw));
            let n = w.file(name, exec, Some(c.usize), &mut (&mut data).take(limit))?;
            (n, data.crc().sum(), data.get_ref().total_in())
        };
        if n != c.usize {
            return Err(w.unreadable(format!(
                "{}: {n}{} bytes where the central directory says {}",
                shown(name),
                if n > c.usize { " or more" } else { "" },
                c.usize
            )));
        }
        if crc != c.crc {
            return Err(w.unreadable(format!("{}: its data does not match its CRC", shown(name))));
        }
        if consumed != c.csize {
            return Err(w.unreadable(format!(
                "{}: {consumed} bytes of packed data where the central directory says {}",
                shown(name),
                c.csize
            )));
        }
        if descriptor {
            check_descriptor(&mut r, w, &c, data_end, dir.start)?;
        }
    }
    if pos != dir.end {
        return Err(w.unreadable("the central directory is longer than its entries"));
    }
    Ok(())
}
