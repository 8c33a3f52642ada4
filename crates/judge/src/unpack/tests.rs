//! The unpacker's unit tests; hostile archives from issue 21's review are in
//! tests/unpack_hostile.rs.

use super::tar_reader::{Pax, parse_pax};
use super::zip_reader::{CENTRAL, CP437_HIGH, DESCRIPTOR, u16_at, u32_at, zip_name};
use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::io::Cursor;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

fn zip_opts() -> zip::write::SimpleFileOptions {
    zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o755)
}

fn zip_with(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut buf = Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut buf);
        for (name, data) in entries {
            z.start_file(*name, zip_opts()).unwrap();
            z.write_all(data).unwrap();
        }
        z.finish().unwrap();
    }
    buf.into_inner()
}

fn unpack_bytes(
    name: &str,
    bytes: &[u8],
    caps: Caps,
) -> (tempfile::TempDir, Result<Unpacked, UnpackError>) {
    let src = tempfile::tempdir().unwrap();
    let path = src.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let dest = tempfile::tempdir().unwrap();
    let r = unpack(&path, dest.path(), caps);
    (dest, r)
}

fn small(files: usize) -> Caps {
    Caps {
        files,
        bytes: 1 << 20,
        ..Caps::default()
    }
}

#[test]
fn zip_unpacks_with_modes_and_unwraps_a_single_folder() {
    let z = zip_with(&[("entry/next.sh", b"#!/bin/sh\n"), ("entry/sub/a.txt", b"a")]);
    let (dest, r) = unpack_bytes("entry.zip", &z, Caps::default());
    let u = r.unwrap();
    // Two files and the two folders they make.
    assert_eq!(u.files, 4);
    assert_eq!(u.unwrapped.as_deref(), Some("entry"));
    assert_eq!(std::fs::read(dest.path().join("sub/a.txt")).unwrap(), b"a");
    let m = std::fs::metadata(dest.path().join("next.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(m & 0o777, 0o755);
}

#[test]
fn zip_slip_is_refused() {
    for evil in ["../evil.txt", "/etc/evil", "a/../../evil"] {
        let z = zip_with(&[(evil, b"x")]);
        let (_d, r) = unpack_bytes("entry.zip", &z, Caps::default());
        // The zip crate may already refuse the name itself; either way, nothing is
        // written outside and the error names the member.
        let e = r.unwrap_err();
        assert!(
            matches!(
                e,
                UnpackError::PathEscapes { .. } | UnpackError::Unreadable { .. }
            ),
            "{evil}: {e}"
        );
    }
}

/// Sets a zip's uncompressed sizes (local header and central directory, one member,
/// no zip64) to `size`.
fn declare_size(z: &mut [u8], size: u32) {
    z[22..26].copy_from_slice(&size.to_le_bytes());
    let cd = (0..z.len() - 4)
        .rev()
        .find(|&i| u32_at(z, i) == CENTRAL)
        .unwrap();
    z[cd + 24..cd + 28].copy_from_slice(&size.to_le_bytes());
}

#[test]
fn zip_bomb_stops_at_the_cap_whatever_the_header_says() {
    // 64 MiB of zeros compress to ~64 KiB.
    let zeros = vec![0u8; 64 << 20];
    let mut z = zip_with(&[("big.bin", &zeros)]);
    assert!(z.len() < 1 << 20);
    let caps = Caps {
        files: 10,
        bytes: 8 << 20,
        ..Caps::default()
    };
    // Declared honestly: refused before a byte is written.
    let (dest, r) = unpack_bytes("entry.zip", &z, caps);
    assert!(matches!(r, Err(UnpackError::TooLarge { .. })), "{r:?}");
    assert!(!dest.path().join("big.bin").exists());
    // Declared as 1 KiB: the check reads one byte past what the headers say and
    // refuses, and nothing is written.
    declare_size(&mut z, 1024);
    let (dest, r) = unpack_bytes("entry.zip", &z, caps);
    let e = r.unwrap_err().to_string();
    assert!(
        e.contains("1025 or more bytes where the central directory says 1024"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
}

#[test]
fn too_many_files() {
    let names: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
    let entries: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"x"[..])).collect();
    let (dest, r) = unpack_bytes("e.zip", &zip_with(&entries), small(5));
    assert_eq!(
        r,
        Err(UnpackError::TooManyFiles {
            cap: 5,
            folder: None
        })
    );
    // Refused on the count the end record declares, before any member.
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
}

#[test]
fn folders_count_once_each_and_exactly_up_to_the_cap() {
    let t = tar_gz(|b| {
        add(b, "a/b/c/f", b"1");
        add(b, "a/b/g", b"2");
        add_dir(b, "a/b/");
        add_dir(b, "a/b/");
    });
    // 2 files, 3 folders made, 2 folder listings (repeats allowed, each counted).
    let (_d, r) = unpack_bytes("e.tgz", &t, small(7));
    assert_eq!(r.unwrap().files, 7);
    let (d, r) = unpack_bytes("e.tgz", &t, small(6));
    assert_eq!(
        r,
        Err(UnpackError::TooManyFiles {
            cap: 6,
            folder: Some("a/b/".into())
        })
    );
    // Refused by the check: nothing written.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    // At the cap, the folder a path needs is not made.
    let (d, r) = unpack_bytes("e.tgz", &t, small(3));
    assert_eq!(
        r,
        Err(UnpackError::TooManyFiles {
            cap: 3,
            folder: Some("a/b/c/".into())
        })
    );
    assert!(!d.path().join("a/b/c").exists());
}

type Build = dyn Fn(&mut tar::Builder<Vec<u8>>);

fn tar_gz(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    build(&mut b);
    let raw = b.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).unwrap();
    gz.finish().unwrap()
}

fn add(b: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8]) {
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    // Long names become GNU long-name records.
    b.append_data(&mut h, name, data).unwrap();
}

fn add_dir(b: &mut tar::Builder<Vec<u8>>, name: &str) {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Directory);
    h.set_size(0);
    h.set_mode(0o755);
    b.append_data(&mut h, name, &[][..]).unwrap();
}

/// A raw tar record of `kind` named `name` holding `data`.
fn add_raw(b: &mut tar::Builder<Vec<u8>>, kind: tar::EntryType, name: &[u8], data: &[u8]) {
    let mut h = tar::Header::new_ustar();
    h.as_ustar_mut().unwrap().name[..name.len()].copy_from_slice(name);
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.set_entry_type(kind);
    h.set_cksum();
    b.append(&h, data).unwrap();
}

fn pax_line(key: &str, value: &[u8]) -> Vec<u8> {
    let body = 1 + key.len() + 1 + value.len() + 1;
    let mut len = body + 1;
    while len != body + len.to_string().len() {
        len = body + len.to_string().len();
    }
    let mut out = format!("{len} {key}=").into_bytes();
    out.extend_from_slice(value);
    out.push(b'\n');
    out
}

#[test]
fn tar_with_a_symlink_or_escape_is_refused() {
    let t = tar_gz(|b| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        b.append_link(&mut h, "labels", "/data/labels").unwrap();
    });
    let (_d, r) = unpack_bytes("entry.tar.gz", &t, Caps::default());
    assert_eq!(
        r,
        Err(UnpackError::Link {
            name: "labels".into()
        })
    );

    // `append_data` refuses '..', so write the name into the header by hand.
    let t = tar_gz(|b| add_raw(b, tar::EntryType::Regular, b"../escape", b"x"));
    let (_d, r) = unpack_bytes("entry.tgz", &t, Caps::default());
    assert_eq!(
        r,
        Err(UnpackError::PathEscapes {
            name: "../escape".into()
        })
    );
}

#[test]
fn tar_gz_unpacks() {
    let t = tar_gz(|b| add(b, "setup.sh", b"abc"));
    let (dest, r) = unpack_bytes("entry.tar.gz", &t, Caps::default());
    assert_eq!(r.unwrap().files, 1);
    assert_eq!(std::fs::read(dest.path().join("setup.sh")).unwrap(), b"abc");
}

#[test]
fn names_are_capped_in_length_part_and_depth() {
    let ok = |name: &str| {
        let t = tar_gz(|b| add(b, name, b"x"));
        let (_d, r) = unpack_bytes("e.tar", &tar_of(&t), Caps::default());
        r.unwrap();
    };
    let refused = |name: &str, why: &str| {
        let t = tar_gz(|b| add(b, name, b"x"));
        let (d, r) = unpack_bytes("e.tgz", &t, Caps::default());
        let e = r.unwrap_err();
        assert!(matches!(e, UnpackError::BadName { .. }), "{e}");
        assert!(e.to_string().contains(why), "{e}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    };
    ok(&"p".repeat(MAX_COMPONENT_BYTES));
    refused(&"p".repeat(MAX_COMPONENT_BYTES + 1), "a part of 256 bytes");
    ok(&format!("{}f", "d/".repeat(MAX_DEPTH - 1)));
    refused(
        &format!("{}f", "d/".repeat(MAX_DEPTH)),
        "nested more than 64",
    );
    let long = format!("{}/{}", "p".repeat(200), "q".repeat(200));
    let long = format!("{long}/{long}/{long}");
    assert!(long.len() > MAX_PATH_BYTES);
    refused(
        &long,
        "a name record of 1206 bytes (names are at most 1024)",
    );
    // The same name in a zip's central directory.
    let (_d, r) = unpack_bytes("e.zip", &zip_with(&[(&long, b"x")]), Caps::default());
    let e = r.unwrap_err().to_string();
    assert!(e.contains("a name of 1205 bytes (at most 1024)"), "{e}");
    assert!(e.len() < 200, "{e}");
}

/// The tar inside a `.tar.gz`.
fn tar_of(tgz: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(tgz)
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn tar_extension_records_are_read_with_caps() {
    let unpack_tgz = |build: &Build| unpack_bytes("e.tgz", &tar_gz(build), Caps::default());
    // A PAX path names the member.
    let (d, r) = unpack_tgz(&|b| {
        add_raw(
            b,
            tar::EntryType::XHeader,
            b"PaxHeaders/x",
            &pax_line("path", b"long/named.py"),
        );
        add_raw(b, tar::EntryType::Regular, b"short", b"ok");
        add_raw(b, tar::EntryType::Regular, b"other", b"");
    });
    r.unwrap();
    assert_eq!(
        std::fs::read(d.path().join("long/named.py")).unwrap(),
        b"ok"
    );
    assert!(!d.path().join("short").exists());
    // A PAX size that differs from the header's.
    let (_d, r) = unpack_tgz(&|b| {
        add_raw(b, tar::EntryType::XHeader, b"P", &pax_line("size", b"1"));
        add_raw(b, tar::EntryType::Regular, b"f", b"ok");
    });
    assert!(r.unwrap_err().to_string().contains("a PAX size of 1 bytes"));
    // ... or over the cap.
    let (_d, r) = unpack_tgz(&|b| {
        add_raw(
            b,
            tar::EntryType::XHeader,
            b"P",
            &pax_line("size", b"99999999999"),
        );
        add_raw(b, tar::EntryType::Regular, b"f", b"ok");
    });
    assert!(matches!(r, Err(UnpackError::TooLarge { .. })), "{r:?}");
    // Two long names, a long name and a PAX path, a record with no member.
    let refused: [&Build; 7] = [
        &|b| {
            add_raw(b, tar::EntryType::GNULongName, b"././@LongLink", b"a\0");
            add_raw(b, tar::EntryType::GNULongName, b"././@LongLink", b"b\0");
            add_raw(b, tar::EntryType::Regular, b"f", b"ok");
        },
        &|b| {
            add_raw(b, tar::EntryType::GNULongName, b"././@LongLink", b"a\0");
            add_raw(b, tar::EntryType::XHeader, b"P", &pax_line("path", b"b"));
            add_raw(b, tar::EntryType::Regular, b"f", b"ok");
        },
        &|b| add_raw(b, tar::EntryType::GNULongName, b"././@LongLink", b"a\0"),
        &|b| {
            add_raw(
                b,
                tar::EntryType::XHeader,
                b"P",
                &pax_line("GNU.sparse.major", b"1"),
            );
            add_raw(b, tar::EntryType::Regular, b"f", b"ok");
        },
        &|b| {
            add_raw(b, tar::EntryType::XHeader, b"P", b"12 path=x\n");
            add_raw(b, tar::EntryType::Regular, b"f", b"ok");
        },
        &|b| {
            add_raw(
                b,
                tar::EntryType::XGlobalHeader,
                b"G",
                &vec![b'x'; MAX_PAX_BYTES as usize + 1],
            );
            add_raw(b, tar::EntryType::Regular, b"f", b"ok");
        },
        &|b| {
            add_raw(b, tar::EntryType::Directory, b"d/", b"data");
        },
    ];
    for build in refused {
        let (d, r) = unpack_tgz(build);
        assert!(matches!(r, Err(UnpackError::Unreadable { .. })), "{r:?}");
        assert!(!d.path().join("f").exists());
    }
    // A long link name belongs to a link.
    let (_d, r) = unpack_tgz(&|b| {
        add_raw(
            b,
            tar::EntryType::GNULongLink,
            b"././@LongLink",
            b"target\0",
        );
        add_raw(b, tar::EntryType::Symlink, b"l", b"");
    });
    assert!(matches!(r, Err(UnpackError::Link { .. })), "{r:?}");
    // A global record is skipped, and counted.
    let (d, r) = unpack_tgz(&|b| {
        add_raw(
            b,
            tar::EntryType::XGlobalHeader,
            b"G",
            &pax_line("comment", b"abc"),
        );
        add_raw(b, tar::EntryType::Regular, b"f", b"ok");
    });
    assert_eq!(r.unwrap().files, 2);
    assert_eq!(std::fs::read(d.path().join("f")).unwrap(), b"ok");
    // A truncated member.
    let mut t = tar_of(&tar_gz(|b| add(b, "f", &[7; 5000])));
    t.truncate(2048);
    let (_d, r) = unpack_bytes("e.tar", &t, Caps::default());
    assert!(matches!(r, Err(UnpackError::Unreadable { .. })), "{r:?}");
}

#[test]
fn pax_records_parse_strictly() {
    let mut rec = pax_line("path", b"a/b");
    rec.extend(pax_line("mtime", b"1.5"));
    rec.extend(pax_line("size", b"12"));
    rec.extend([0, 0, 0]);
    assert_eq!(
        parse_pax(&rec),
        Ok(Pax {
            path: Some(b"a/b".to_vec()),
            size: Some(12)
        })
    );
    for bad in [
        &b"5 path=x\n"[..],
        b"x path=a\n",
        b"9 pathxa\n",
        b"10 path=ab",
        b"99999999999999999999999 path=a\n",
        b"11 size=-1\n",
    ] {
        assert!(parse_pax(bad).is_err(), "{}", String::from_utf8_lossy(bad));
    }
    let mut twice = pax_line("path", b"a");
    twice.extend(pax_line("path", b"b"));
    assert!(parse_pax(&twice).is_err());
}

#[test]
fn zip64_and_data_descriptors_are_read() {
    // Zip64 extra fields, from the zip crate.
    let mut buf = Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut buf);
        z.start_file("big/a.bin", zip_opts().large_file(true))
            .unwrap();
        z.write_all(&[1; 3000]).unwrap();
        z.add_directory("empty/", zip_opts()).unwrap();
        z.finish().unwrap();
    }
    let (d, r) = unpack_bytes("e.zip", &buf.into_inner(), Caps::default());
    r.unwrap();
    assert_eq!(
        std::fs::read(d.path().join("big/a.bin")).unwrap(),
        [1; 3000]
    );
    assert!(d.path().join("empty").is_dir());

    // Streamed: sizes and CRC in a data descriptor after the data.
    let mut out = Vec::new();
    {
        let mut z = zip::ZipWriter::new_stream(&mut out);
        z.start_file("s.txt", zip_opts()).unwrap();
        z.write_all(b"streamed").unwrap();
        z.start_file("t.txt", zip_opts()).unwrap();
        z.write_all(b"too").unwrap();
        z.finish().unwrap();
    }
    assert_ne!(u16_at(&out, 6) & 8, 0, "no data descriptor");
    let (d, r) = unpack_bytes("e.zip", &out, Caps::default());
    r.unwrap();
    assert_eq!(std::fs::read(d.path().join("s.txt")).unwrap(), b"streamed");
    assert_eq!(std::fs::read(d.path().join("t.txt")).unwrap(), b"too");
    // A descriptor that disagrees with the central directory.
    let at = (0..out.len() - 4)
        .find(|&i| u32_at(&out, i) == DESCRIPTOR)
        .unwrap();
    out[at + 4] ^= 1;
    let (_d, r) = unpack_bytes("e.zip", &out, Caps::default());
    assert!(r.unwrap_err().to_string().contains("data descriptor"));
}

#[test]
fn zip_names_not_utf8_are_code_page_437() {
    assert_eq!(CP437_HIGH.chars().count(), 128);
    assert_eq!(zip_name(b"caf\x82.py", 0).unwrap(), "café.py");
    assert!(zip_name(b"caf\x82.py", 0x800).is_err());
    assert_eq!(zip_name("café".as_bytes(), 0).unwrap(), "café");
}

#[test]
fn zips_with_special_files_or_other_methods_are_refused() {
    let mut buf = Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut buf);
        z.add_symlink("l", "/etc/passwd", zip_opts()).unwrap();
        z.finish().unwrap();
    }
    let (_d, r) = unpack_bytes("e.zip", &buf.into_inner(), Caps::default());
    assert_eq!(r, Err(UnpackError::Link { name: "l".into() }));
}

#[test]
fn unpacking_stops_at_the_time_limit() {
    let caps = Caps {
        time: Duration::ZERO,
        ..Caps::default()
    };
    let out_of_time = UnpackError::TimeLimit {
        limit: Duration::ZERO,
    };
    let expect = Err(out_of_time.clone());
    let z = zip_with(&[("a", b"x")]);
    assert_eq!(unpack_bytes("e.zip", &z, caps).1, expect);
    let t = tar_gz(|b| add(b, "a", b"x"));
    assert_eq!(unpack_bytes("e.tgz", &t, caps).1, expect);
    assert_eq!(unpack_bytes("e.tar", &tar_of(&t), caps).1, expect);
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("a"), "x").unwrap();
    let dest = tempfile::tempdir().unwrap();
    assert_eq!(unpack(src.path(), dest.path(), caps), expect);
    assert_eq!(
        out_of_time.to_string(),
        "unpacking took longer than the 0 s allowed"
    );
    // A limit no clock can reach is no limit.
    let caps = Caps {
        time: Duration::MAX,
        ..Caps::default()
    };
    unpack_bytes("e.zip", &z, caps).1.unwrap();
}

#[test]
fn folder_with_a_symlink_is_refused_and_unknown_kinds_named() {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("a.py"), "x").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", src.path().join("p")).unwrap();
    let dest = tempfile::tempdir().unwrap();
    let e = unpack(src.path(), dest.path(), Caps::default()).unwrap_err();
    assert_eq!(e, UnpackError::Link { name: "p".into() });
    let (_d, r) = unpack_bytes("entry.rar", b"x", Caps::default());
    assert!(matches!(r, Err(UnpackError::UnknownKind(_))));
    let (_d, r) = unpack_bytes("entry.zip", b"not a zip", Caps::default());
    assert!(matches!(r, Err(UnpackError::Unreadable { .. })));
}

#[test]
fn folders_are_copied_under_the_same_caps() {
    let src = tempfile::tempdir().unwrap();
    for i in 0..4 {
        let d = src.path().join(format!("d{i}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("f"), "x").unwrap();
    }
    let dest = tempfile::tempdir().unwrap();
    assert_eq!(unpack(src.path(), dest.path(), small(8)).unwrap().files, 8);
    let dest = tempfile::tempdir().unwrap();
    assert_eq!(
        unpack(src.path(), dest.path(), small(7)),
        Err(UnpackError::TooManyFiles {
            cap: 7,
            folder: Some("./d3/".into())
        })
    );
    // Refused while listing d3: its one entry would make the count 8.
    assert!(dest.path().join("d3").exists() && !dest.path().join("d3/f").exists());
    // A listing over the cap is refused before anything is made.
    let dest = tempfile::tempdir().unwrap();
    assert_eq!(
        unpack(src.path(), dest.path(), small(3)),
        Err(UnpackError::TooManyFiles {
            cap: 3,
            folder: Some("./".into())
        })
    );
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
}

#[test]
fn shown_names_are_short_and_escaped() {
    assert_eq!(shown("model.py"), "model.py");
    assert_eq!(
        shown("a\x1b[2Jb\n\u{202e}c"),
        "a\\u{1b}[2Jb\\u{a}\\u{202e}c"
    );
    let long = "x".repeat(500);
    assert_eq!(shown(&long), format!("{}…", "x".repeat(SHOWN_CHARS)));
    assert_eq!(shown(&"x".repeat(SHOWN_CHARS)), "x".repeat(SHOWN_CHARS));
}

/// Safe member names: up to 3 folders deep, from a small alphabet, so that names often
/// share folders (and some collide).
fn names() -> impl Strategy<Value = Vec<String>> {
    // No exact repeats: the zip crate will not write them (they are tested apart).
    proptest::collection::vec("[ab]{1,2}(/[ab]{1,2}){0,3}", 1..12).prop_map(|v| {
        let mut seen = std::collections::BTreeSet::new();
        v.into_iter().filter(|n| seen.insert(n.clone())).collect()
    })
}

/// What an unpacked folder holds: every path, with a file's contents.
fn tree(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                todo.push(p);
                out.insert(rel, None);
            } else {
                out.insert(rel, Some(std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2048)) {
        for name in ["e.zip", "e.tar.gz", "e.tar"] {
            let _ = unpack_bytes(name, &bytes, small(50));
        }
    }

    #[test]
    fn shown_is_bounded_and_free_of_control_characters(s in any::<String>()) {
        let out = shown(&s);
        prop_assert!(out.chars().count() <= SHOWN_CHARS + 1);
        prop_assert!(!out.chars().any(char::is_control));
        if s.chars().count() <= SHOWN_CHARS && !s.chars().any(char::is_control) && !s.contains(['\u{200e}', '\u{200f}']) && !s.chars().any(|c| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')) {
            prop_assert_eq!(out, s);
        }
    }

    /// Zip and tar of the same members unpack to the same tree, counting each member
    /// and each folder made once; a member listed twice (or under a file) is refused.
    #[test]
    fn zip_and_tar_agree_and_count_exactly(names in names()) {
        let entries: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), n.as_bytes())).collect();
        let z = zip_with(&entries);
        let t = tar_gz(|b| for (n, d) in &entries { add(b, n, d) });
        let (zd, zr) = unpack_bytes("e.zip", &z, small(1000));
        let (td, tr) = unpack_bytes("e.tgz", &t, small(1000));
        // Expected: each name a file, unless a name repeats or lies under another.
        let mut files = std::collections::BTreeSet::new();
        let mut folders = std::collections::BTreeSet::new();
        let mut clash = false;
        for n in &names {
            clash |= !files.insert(n.clone()) || folders.contains(n);
            let mut p = String::new();
            for part in n.split('/').collect::<Vec<_>>().split_last().unwrap().1 {
                if !p.is_empty() { p.push('/'); }
                p.push_str(part);
                clash |= files.contains(&p);
                folders.insert(p.clone());
            }
        }
        if clash {
            prop_assert!(zr.is_err() && tr.is_err(), "{:?} {:?}", zr, tr);
        } else {
            let (zu, tu) = (zr.unwrap(), tr.unwrap());
            prop_assert_eq!(zu.files, files.len() + folders.len());
            prop_assert_eq!(tu.files, zu.files);
            prop_assert_eq!(tree(zd.path()), tree(td.path()));
        }
    }

    /// Valid archives with bytes changed and maybe cut short, as each kind: never a panic;
    /// what unpacks is within the caps and as counted; refusals are short and clean (what
    /// the fuzz target checks, on inputs near valid ones).
    #[test]
    fn changed_archives_keep_the_invariants(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..), 1..8),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let members: [(&str, &[u8]); 4] = [("e/d/a.py", b"print(1)\n"), ("e/b.txt", &[b'b'; 700]), ("e/c", b""), ("e/d/", b"")];
        let z = zip_with(&members[..3]);
        let tgz = tar_gz(|b| {
            add_dir(b, members[3].0);
            for (n, d) in &members[..3] { add(b, n, d) }
        });
        let tar = tar_of(&tgz);
        for (kind, good) in [("e.zip", z), ("e.tgz", tgz), ("e.tar", tar)] {
            let mut bad = good.clone();
            for (at, xor) in &edits {
                bad[at.index(good.len())] ^= xor;
            }
            if let Some(cut) = cut {
                bad.truncate(cut.index(good.len()));
            }
            let caps = small(20);
            let (d, r) = unpack_bytes(kind, &bad, caps);
            match r {
                Ok(u) => {
                    prop_assert!(u.files <= caps.files && u.bytes <= caps.bytes);
                    let t = tree(d.path());
                    prop_assert!(t.len() <= u.files);
                    let bytes: usize = t.values().flatten().map(Vec::len).sum();
                    prop_assert_eq!(bytes as u64, u.bytes);
                }
                Err(e) => {
                    let m = e.to_string();
                    prop_assert!(m.chars().count() <= 600 && !m.chars().any(char::is_control), "{}", m);
                }
            }
        }
    }

    /// Any one byte of a zip changed: refused, or the same files with the same
    /// contents (the CRCs, sizes and names are checked twice over).
    #[test]
    fn a_changed_zip_byte_is_caught_or_harmless(at in any::<prop::sample::Index>(), xor in 1u8..) {
        let z = zip_with(&[("d/a.py", b"print(1)\n"), ("d/b.txt", b"bbbbbbbbbbbbbbbb"), ("c", b"")]);
        let (good, r) = unpack_bytes("e.zip", &z, Caps::default());
        r.unwrap();
        let mut bad = z.clone();
        bad[at.index(z.len())] ^= xor;
        let (d, r) = unpack_bytes("e.zip", &bad, Caps::default());
        if r.is_ok() {
            let contents = |t: BTreeMap<String, Option<Vec<u8>>>| t.into_values().collect::<Vec<_>>();
            prop_assert_eq!(contents(tree(d.path())), contents(tree(good.path())));
        }
    }
}

/// Issue 31: a refusal for too many files names the folder that holds most of them
/// (a virtual environment packed by mistake, say), from a zip's central directory
/// alone as from a tar read through.
#[test]
fn too_many_files_names_the_folder_holding_them() {
    let names: Vec<String> = (0..30)
        .map(|i| format!("entry/venv/lib/python3.11/site-packages/m{i}.py"))
        .chain(["entry/run.py".to_owned()])
        .collect();
    let entries: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"x"[..])).collect();
    let (_d, r) = unpack_bytes("e.zip", &zip_with(&entries), small(10));
    let e = r.unwrap_err().to_string();
    assert_eq!(
        e,
        "more than 10 files and folders (most of them in entry/venv/lib/python3.11/)"
    );
    let t = tar_gz(|b| {
        for n in &names {
            add(b, n, b"x");
        }
    });
    let (_d, r) = unpack_bytes("e.tgz", &t, small(10));
    let e = r.unwrap_err().to_string();
    assert!(
        e.contains("(most of them in entry/venv/lib/python3.11/)"),
        "{e}"
    );
}
