//! Hostile archives against the unpacker (docs/judge.md, stage prep), one test per finding
//! of issue 21's review: a huge GNU long name (memory and message size), folders created by
//! deep paths, duplicate and inconsistent zip members, names with terminal escapes. The
//! peak-memory test runs each unpack in a child process (this test binary, run again on one
//! test) and reads its VmHWM, so nothing else the harness does is measured.
//!
//! Issue 32's bomb: a refused archive may write at most 4× its own size (measured in a
//! child process as the bytes it passed to `write`, `/proc/self/io`'s `wchar`).
//!
//! These tests use only `unpack`, `Caps` and error messages, so they also build against
//! the unpacker as it was before the fix (to see them fail there).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;

use judge::unpack::{Caps, unpack};

/// Writes a tar member header (GNU format) for `name` of `size` bytes of kind `kind`.
fn header(out: &mut impl Write, name: &[u8], size: u64, kind: tar::EntryType) {
    let mut h = tar::Header::new_gnu();
    h.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name);
    h.set_size(size);
    h.set_mode(0o644);
    h.set_entry_type(kind);
    h.set_cksum();
    out.write_all(h.as_bytes()).unwrap();
}

/// Writes `n` bytes of `byte`, then the padding to the next 512-byte block.
fn filler(out: &mut impl Write, byte: u8, n: u64) {
    let chunk = vec![byte; 1 << 20];
    let mut left = n;
    while left > 0 {
        let k = left.min(chunk.len() as u64) as usize;
        out.write_all(&chunk[..k]).unwrap();
        left -= k as u64;
    }
    let pad = (512 - n % 512) % 512;
    out.write_all(&vec![0; pad as usize]).unwrap();
}

/// A `.tar.gz` whose one member `x` is named by a GNU long-name record declaring `len`
/// bytes of 'a' (the review's archive: 256 MiB of name in 261 KB).
fn long_name_tgz(path: &Path, len: u64) {
    let f = BufWriter::new(File::create(path).unwrap());
    let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::new(6));
    header(&mut gz, b"././@LongLink", len, tar::EntryType::GNULongName);
    filler(&mut gz, b'a', len);
    header(&mut gz, b"x", 0, tar::EntryType::Regular);
    gz.write_all(&[0; 1024]).unwrap();
    gz.finish().unwrap().flush().unwrap();
}

/// A `.tar.gz` whose one member has a PAX record declaring a `path` of `len` bytes.
fn long_pax_tgz(path: &Path, len: u64) {
    let f = BufWriter::new(File::create(path).unwrap());
    let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::new(6));
    // "<size> path=<value>\n", where <size> counts itself.
    let body = len + " path=\n".len() as u64;
    let mut size = body + 1;
    while size != body + size.to_string().len() as u64 {
        size = body + size.to_string().len() as u64;
    }
    header(&mut gz, b"PaxHeader/x", size, tar::EntryType::XHeader);
    gz.write_all(format!("{size} path=").as_bytes()).unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let mut left = len;
    while left > 0 {
        let k = left.min(chunk.len() as u64) as usize;
        gz.write_all(&chunk[..k]).unwrap();
        left -= k as u64;
    }
    gz.write_all(b"\n").unwrap();
    gz.write_all(&vec![0; ((512 - size % 512) % 512) as usize])
        .unwrap();
    header(&mut gz, b"x", 0, tar::EntryType::Regular);
    gz.write_all(&[0; 1024]).unwrap();
    gz.finish().unwrap().flush().unwrap();
}

/// A `.tar.gz` of the given members: regular files of `data`, folders when the name ends in
/// '/'. Names are written with GNU long-name records when they do not fit the header.
fn tgz(members: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for (name, data) in members {
        let kind = if name.ends_with(b"/") {
            tar::EntryType::Directory
        } else {
            tar::EntryType::Regular
        };
        if name.len() > 99 {
            header(
                &mut gz,
                b"././@LongLink",
                name.len() as u64 + 1,
                tar::EntryType::GNULongName,
            );
            gz.write_all(name).unwrap();
            gz.write_all(&[0]).unwrap();
            gz.write_all(&vec![0; (512 - (name.len() + 1) % 512) % 512])
                .unwrap();
            header(&mut gz, b"long", data.len() as u64, kind);
        } else {
            header(&mut gz, name, data.len() as u64, kind);
        }
        gz.write_all(data).unwrap();
        gz.write_all(&vec![0; (512 - data.len() % 512) % 512])
            .unwrap();
    }
    gz.write_all(&[0; 1024]).unwrap();
    gz.finish().unwrap()
}

/// One member of a zip written by hand: the central directory says `name`, the local
/// header `local_name` (or the same), stored (uncompressed).
struct Member<'a> {
    name: &'a [u8],
    local_name: Option<&'a [u8]>,
    data: &'a [u8],
    /// The CRC the local header claims (else the true one).
    local_crc: Option<u32>,
}

fn member<'a>(name: &'a str, data: &'a [u8]) -> Member<'a> {
    Member {
        name: name.as_bytes(),
        local_name: None,
        data,
        local_crc: None,
    }
}

/// A zip written byte by byte, so it can hold what zip writers refuse to write.
fn raw_zip(members: &[Member]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for m in members {
        let offset = out.len() as u32;
        let crc = {
            let mut c = flate2::Crc::new();
            c.update(m.data);
            c.sum()
        };
        let local_name = m.local_name.unwrap_or(m.name);
        let size = m.data.len() as u32;
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes()); // version needed
        out.extend_from_slice(&0u16.to_le_bytes()); // flags
        out.extend_from_slice(&0u16.to_le_bytes()); // stored
        out.extend_from_slice(&[0; 4]); // time, date
        out.extend_from_slice(&m.local_crc.unwrap_or(crc).to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&(local_name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // extra
        out.extend_from_slice(local_name);
        out.extend_from_slice(m.data);

        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&(3u16 << 8 | 20).to_le_bytes()); // made by Unix
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&[0; 4]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&(m.name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 4]); // extra, comment
        central.extend_from_slice(&[0; 4]); // disk, internal attributes
        central.extend_from_slice(&(0o100644u32 << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(m.name);
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(members.len() as u16).to_le_bytes());
    out.extend_from_slice(&(members.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// A zip whose central directory lists `n` members named by 500-byte names, all pointing
/// at the one local header (a central directory of 35 MB in as many bytes of archive: what
/// a reader holding the whole directory holds).
fn wide_zip(path: &Path, n: u16) {
    let mut f = BufWriter::new(File::create(path).unwrap());
    let first = format!("{:0>500}", 0);
    let mut local = Vec::new();
    local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
    local.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    local.extend_from_slice(&[0; 12]); // crc, sizes: empty
    local.extend_from_slice(&500u16.to_le_bytes());
    local.extend_from_slice(&0u16.to_le_bytes());
    local.extend_from_slice(first.as_bytes());
    f.write_all(&local).unwrap();
    let mut cd_size = 0u32;
    for i in 0..n {
        let name = format!("{i:0>500}");
        let mut c = Vec::new();
        c.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        c.extend_from_slice(&(3u16 << 8 | 20).to_le_bytes());
        c.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        c.extend_from_slice(&[0; 12]);
        c.extend_from_slice(&500u16.to_le_bytes());
        c.extend_from_slice(&[0; 8]);
        c.extend_from_slice(&(0o100644u32 << 16).to_le_bytes());
        c.extend_from_slice(&0u32.to_le_bytes());
        c.extend_from_slice(name.as_bytes());
        cd_size += c.len() as u32;
        f.write_all(&c).unwrap();
    }
    f.write_all(&0x0605_4b50u32.to_le_bytes()).unwrap();
    f.write_all(&[0; 4]).unwrap();
    f.write_all(&n.to_le_bytes()).unwrap();
    f.write_all(&n.to_le_bytes()).unwrap();
    f.write_all(&cd_size.to_le_bytes()).unwrap();
    f.write_all(&(local.len() as u32).to_le_bytes()).unwrap();
    f.write_all(&0u16.to_le_bytes()).unwrap();
    f.flush().unwrap();
}

fn unpack_file(
    name: &str,
    bytes: &[u8],
    caps: Caps,
) -> (tempfile::TempDir, Result<String, String>) {
    let src = tempfile::tempdir().unwrap();
    let path = src.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let dest = tempfile::tempdir().unwrap();
    let r = unpack(&path, dest.path(), caps)
        .map(|u| format!("{u:?}"))
        .map_err(|e| e.to_string());
    (dest, r)
}

/// Folders under `dir`, however deep (counted without recursion: the old unpacker made
/// trees thousands of folders deep).
fn folders_under(dir: &Path) -> usize {
    let mut n = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                n += 1;
                todo.push(e.path());
            }
        }
    }
    n
}

fn assert_quotable(message: &str) {
    assert!(
        message.len() <= 600,
        "{} bytes: {}…",
        message.len(),
        &message[..200]
    );
    assert!(
        !message.chars().any(char::is_control),
        "control characters in {message:?}"
    );
}

#[test]
fn a_huge_gnu_long_name_is_refused_with_a_short_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("entry.tar.gz");
    long_name_tgz(&path, 16 << 20);
    assert!(std::fs::metadata(&path).unwrap().len() < 64 << 10);
    let dest = tempfile::tempdir().unwrap();
    let e = unpack(&path, dest.path(), Caps::default())
        .unwrap_err()
        .to_string();
    assert_quotable(&e);
    assert!(e.contains("aaaa"), "{e}");
}

#[test]
fn a_huge_pax_path_is_refused_with_a_short_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("entry.tgz");
    long_pax_tgz(&path, 16 << 20);
    let dest = tempfile::tempdir().unwrap();
    let e = unpack(&path, dest.path(), Caps::default())
        .unwrap_err()
        .to_string();
    assert_quotable(&e);
}

/// The review's archive made 99,551 folders out of 50 members; each member nested ~2,000
/// deep counted as one file.
#[test]
fn folders_created_by_deep_paths_count_against_the_file_cap() {
    // Too deep for any entry: refused before a folder is made.
    let deep = format!("{}f", "a/".repeat(2000));
    let (dest, r) = unpack_file(
        "entry.tar.gz",
        &tgz(&[(deep.as_bytes(), b"x")]),
        Caps::default(),
    );
    let e = r.unwrap_err();
    assert_quotable(&e);
    assert_eq!(folders_under(dest.path()), 0, "{e}");

    // Deep enough to be allowed, but the folders count: 3 members 40 deep make 3 files
    // and 117 folders, over a cap of 100.
    let names: Vec<String> = (0..3)
        .map(|i| format!("d{i}/{}f", "a/".repeat(38)))
        .collect();
    let members: Vec<(&[u8], &[u8])> = names.iter().map(|n| (n.as_bytes(), &b"x"[..])).collect();
    let caps = Caps {
        files: 100,
        ..Caps::default()
    };
    let (dest, r) = unpack_file("entry.tar.gz", &tgz(&members), caps);
    let e = r.unwrap_err();
    assert!(e.contains("more than 100"), "{e}");
    assert!(folders_under(dest.path()) <= 100);

    // The same members fit a cap counting them all.
    let caps = Caps {
        files: 120,
        ..Caps::default()
    };
    let (dest, r) = unpack_file("entry.tar.gz", &tgz(&members), caps);
    r.unwrap();
    assert_eq!(folders_under(dest.path()), 117);
}

#[test]
fn duplicate_zip_members_are_refused() {
    let z = raw_zip(&[member("a.txt", b"first"), member("a.txt", b"second")]);
    let (_d, r) = unpack_file("entry.zip", &z, Caps::default());
    let e = r.unwrap_err();
    assert!(e.contains("a.txt") && e.contains("twice"), "{e}");

    // The same path spelt twice, and a file shadowed by a folder.
    let z = raw_zip(&[member("a.txt", b"first"), member("./a.txt", b"second")]);
    let (_d, r) = unpack_file("entry.zip", &z, Caps::default());
    assert!(r.unwrap_err().contains("twice"));
    let z = raw_zip(&[member("a", b"file"), member("a/b", b"inside")]);
    let (_d, r) = unpack_file("entry.zip", &z, Caps::default());
    r.unwrap_err();
}

#[test]
fn zip_central_directory_and_local_headers_must_agree() {
    // The local header names another file than the central directory.
    let mut m = member("model.py", b"print('listed')");
    m.local_name = Some(b"other.py");
    let (_d, r) = unpack_file("entry.zip", &raw_zip(&[m]), Caps::default());
    let e = r.unwrap_err();
    assert!(e.contains("model.py") && e.contains("local header"), "{e}");

    // The local header's CRC differs from the central directory's.
    let mut m = member("model.py", b"print('listed')");
    m.local_crc = Some(7);
    let (_d, r) = unpack_file("entry.zip", &raw_zip(&[m]), Caps::default());
    let e = r.unwrap_err();
    assert!(e.contains("local header"), "{e}");

    // Agreeing headers unpack.
    let (dest, r) = unpack_file(
        "entry.zip",
        &raw_zip(&[member("model.py", b"ok")]),
        Caps::default(),
    );
    r.unwrap();
    assert_eq!(std::fs::read(dest.path().join("model.py")).unwrap(), b"ok");
}

/// Member `b`'s local header lies inside member `a`'s stored data: the bytes of one
/// member passed off as two (how the smallest zip bombs multiply their data).
#[test]
fn zip_members_sharing_bytes_are_refused() {
    let inner = raw_zip(&[member("b", b"bbbb")]);
    let local_b = &inner[..30 + 1 + 4];
    let mut z = raw_zip(&[member("a", local_b), member("b", b"bbbb")]);
    // Point b's central entry at the copy inside a's data (offset 30 + 1).
    let cd = z.len() - 22 - (46 + 1) * 2;
    let b_entry = cd + 46 + 1;
    z[b_entry + 42..b_entry + 46].copy_from_slice(&31u32.to_le_bytes());
    let (_d, r) = unpack_file("entry.zip", &z, Caps::default());
    let e = r.unwrap_err();
    assert!(e.contains("overlaps"), "{e}");
}

#[test]
fn messages_quote_names_short_and_without_control_characters() {
    // A name that would clear the terminal and retitle it, leaving the entry with '..'.
    let evil = format!("\x1b[2J\x1b]0;judge\x07{}/../../x", "b".repeat(300));
    let (_d, r) = unpack_file(
        "entry.tar.gz",
        &tgz(&[(evil.as_bytes(), b"x")]),
        Caps::default(),
    );
    let e = r.unwrap_err();
    assert_quotable(&e);
    assert!(e.contains("\\u{1b}[2J"), "{e}");

    let z = raw_zip(&[member(&evil, b"x")]);
    let (_d, r) = unpack_file("entry.zip", &z, Caps::default());
    assert_quotable(&r.unwrap_err());
}

/// Peak resident memory (VmHWM, KiB) of this process so far.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

const CHILD: &str = "PHYSIOJUDGE_UNPACK_CHILD";

/// Not a test of its own: the child of `peak_memory_is_bounded_on_hostile_archives`,
/// unpacking the archive named in the environment and printing its peak memory before
/// and after.
#[test]
fn child_unpacks_and_reports_peak_memory() {
    let Ok(src) = std::env::var(CHILD) else {
        return;
    };
    let dest = tempfile::tempdir().unwrap();
    let before = peak_kib();
    let r = unpack(Path::new(&src), dest.path(), Caps::default());
    let after = peak_kib();
    let message_len = r.err().map_or(0, |e| e.to_string().len());
    println!("peak_kib {before} {after} message_bytes {message_len}");
}

/// Each hostile archive unpacked in a child process: its peak memory may grow by no more
/// than a constant, whatever the archive declares.
#[test]
fn peak_memory_is_bounded_on_hostile_archives() {
    let dir = tempfile::tempdir().unwrap();
    let long_name = dir.path().join("long-name.tar.gz");
    long_name_tgz(&long_name, 256 << 20);
    let long_pax = dir.path().join("long-pax.tgz");
    long_pax_tgz(&long_pax, 256 << 20);
    let wide = dir.path().join("wide.zip");
    wide_zip(&wide, u16::MAX);
    let deep = dir.path().join("deep.tar.gz");
    let names: Vec<String> = (0..50)
        .map(|i| format!("d{i}/{}f", "a/".repeat(2000)))
        .collect();
    let members: Vec<(&[u8], &[u8])> = names.iter().map(|n| (n.as_bytes(), &b"x"[..])).collect();
    std::fs::write(&deep, tgz(&members)).unwrap();

    let exe = std::env::current_exe().unwrap();
    let mut report = Vec::new();
    for archive in [&long_name, &long_pax, &wide, &deep] {
        let o = Command::new(&exe)
            .args([
                "--exact",
                "child_unpacks_and_reports_peak_memory",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD, archive)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let line = out
            .lines()
            .find_map(|l| l.split_once("peak_kib ").map(|(_, v)| v))
            .unwrap_or_else(|| panic!("{archive:?}: {out} {}", String::from_utf8_lossy(&o.stderr)));
        let v: Vec<u64> = line
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        let name = archive.file_name().unwrap().to_string_lossy().into_owned();
        let size = std::fs::metadata(archive).unwrap().len();
        println!(
            "{name} ({size} bytes): peak {} KiB before, {} KiB after, message {} bytes",
            v[0], v[1], v[2]
        );
        report.push((name, v[1] - v[0], v[2]));
    }
    for (name, grew_kib, message) in report {
        assert!(
            grew_kib < 32 << 10,
            "{name}: peak memory grew {grew_kib} KiB"
        );
        assert!(message <= 600, "{name}: a message of {message} bytes");
    }
}

/// Bytes this process has passed to `write` and its kin so far (`wchar`).
fn written_bytes() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap();
    let line = io.lines().find(|l| l.starts_with("wchar:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

const WRITE_CHILD: &str = "PHYSIOJUDGE_UNPACK_WRITE_CHILD";

/// Not a test of its own: the child of `a_refused_bomb_writes_at_most_four_times_its_size`,
/// unpacking the archive named in the environment and printing the bytes it wrote.
#[test]
fn child_unpacks_and_reports_bytes_written() {
    let Ok(src) = std::env::var(WRITE_CHILD) else {
        return;
    };
    let dest = tempfile::tempdir().unwrap();
    let before = written_bytes();
    let r = unpack(Path::new(&src), dest.path(), Caps::default());
    let after = written_bytes();
    let refused = r
        .as_ref()
        .err()
        .map(ToString::to_string)
        .unwrap_or_default();
    println!("unpack-written {} refused {refused}", after - before);
}

/// The review's archive: 480 MiB of zeros in one member, then a member named
/// `../escape`, gzipped to about 486 KiB. It is refused (the path escapes) having
/// written at most 4× its own size; it used to write all 480 MiB first.
#[test]
fn a_refused_bomb_writes_at_most_four_times_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.tar.gz");
    {
        let f = BufWriter::new(File::create(&bomb).unwrap());
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::best());
        header(&mut gz, b"zeros.bin", 480 << 20, tar::EntryType::Regular);
        filler(&mut gz, 0, 480 << 20);
        header(&mut gz, b"../escape", 1, tar::EntryType::Regular);
        filler(&mut gz, b'x', 1);
        gz.write_all(&[0; 1024]).unwrap();
        gz.finish().unwrap().flush().unwrap();
    }
    let size = std::fs::metadata(&bomb).unwrap().len();
    let o = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_unpacks_and_reports_bytes_written",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(WRITE_CHILD, &bomb)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find_map(|l| l.split_once("unpack-written ").map(|(_, v)| v))
        .unwrap_or_else(|| panic!("{out} {}", String::from_utf8_lossy(&o.stderr)));
    let (written, refused) = line.split_once(" refused ").unwrap();
    let written: u64 = written.parse().unwrap();
    println!("bomb.tar.gz ({size} bytes): {written} bytes written, refused: {refused}");
    assert!(refused.contains("../escape"), "{refused}");
    assert!(
        written <= 4 * size,
        "{written} bytes written for a refused archive of {size}"
    );
}
