//! The wire protocol between the host and an algorithm in another process, and the host's
//! loop ([`serve`]). Specified in `docs/stream.md`, so that a client can be written in any
//! language; [`Client`] is the reference client (tests and benchmarks use it).
//!
//! Every frame is a little-endian `u32` length (of what follows), a one-byte kind and its
//! payload. The host speaks first (`H`), then answers every `G` with one `D`; `R` frames
//! need no answer. The algorithm ends the session by closing its side.
//!
//! | kind | direction | payload |
//! |---|---|---|
//! | `H` hello | host → algorithm | `u16` version, `u16` rows, `u16` sample rate, `u16` packet samples |
//! | `G` get data | algorithm → host | none |
//! | `D` data | host → algorithm | `u64` start position, `u32` person id, `u8` finished, `u16` samples *n*, then rows × *n* `f32`, row by row |
//! | `R` report | algorithm → host | `i64` result (the character's code, 101–136) |

use std::io::{BufReader, BufWriter, Read, Write};

use crate::session::{Packet, Session};

/// The protocol version in `H`.
pub const VERSION: u16 = 1;
pub const HELLO: u8 = b'H';
pub const GET: u8 = b'G';
pub const DATA: u8 = b'D';
pub const REPORT: u8 = b'R';
/// Reports one session accepts: far more than any algorithm needs (one per trial). What
/// the session keeps of them is capped anyway (docs/stream.md, *The session log*); this
/// bounds the host's time spent on a flood.
pub const MAX_REPORTS: usize = 1_000_000;

/// The algorithm broke the protocol, or the connection failed.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("reading from the algorithm: {0}")]
    Read(std::io::Error),
    #[error("writing to the algorithm: {0}")]
    Write(std::io::Error),
    #[error("the algorithm's connection ended inside a frame (at byte {offset})")]
    Truncated { offset: u64 },
    #[error(
        "the algorithm sent a frame of {len} bytes at byte {offset}: get-data frames are 1 byte \
         long and report frames 9"
    )]
    Length { len: u32, offset: u64 },
    #[error("the algorithm sent an unknown frame kind 0x{kind:02x} at byte {offset}")]
    Kind { kind: u8, offset: u64 },
    #[error(
        "the algorithm sent more than {MAX_REPORTS} reports (the one too many at byte {offset})"
    )]
    TooManyReports { offset: u64 },
}

impl ProtocolError {
    /// The algorithm sent what the protocol forbids. Not a connection that ended (the
    /// algorithm exited, crashed or was stopped: its run's verdict says which), nor one
    /// that ended inside a frame (a crash while writing, or a violation if it exited
    /// cleanly: the caller knows which).
    pub fn is_violation(&self) -> bool {
        matches!(
            self,
            ProtocolError::Length { .. }
                | ProtocolError::Kind { .. }
                | ProtocolError::TooManyReports { .. }
        )
    }
}

/// What the host's loop saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Served {
    pub packets: u64,
    pub reports: u64,
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` if the stream ended before the first.
fn read_frame_part(r: &mut impl Read, buf: &mut [u8], offset: u64) -> Result<bool, ProtocolError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(ProtocolError::Truncated { offset }),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ProtocolError::Read(e)),
        }
    }
    Ok(true)
}

fn hello(rows: usize) -> Vec<u8> {
    let mut f = Vec::with_capacity(13);
    f.extend_from_slice(&9u32.to_le_bytes());
    f.push(HELLO);
    for v in [
        VERSION,
        rows as u16,
        p300::SAMPLE_RATE as u16,
        crate::PACKET_SAMPLES as u16,
    ] {
        f.extend_from_slice(&v.to_le_bytes());
    }
    f
}

/// Encodes a data frame into `frame` (cleared first).
fn data_frame(frame: &mut Vec<u8>, p: &Packet, samples: &[f32]) {
    frame.clear();
    let len = 1 + 8 + 4 + 1 + 2 + 4 * samples.len();
    frame.extend_from_slice(&(len as u32).to_le_bytes());
    frame.push(DATA);
    frame.extend_from_slice(&(p.start_position as u64).to_le_bytes());
    frame.extend_from_slice(&p.person_id.to_le_bytes());
    frame.push(u8::from(p.finished));
    frame.extend_from_slice(&(p.samples as u16).to_le_bytes());
    for v in samples {
        frame.extend_from_slice(&v.to_le_bytes());
    }
}

/// Plays `session` to the algorithm at the other end of `input`/`output` until it closes
/// its side. Reports and packets are recorded in the session whatever happens; an error
/// says how the algorithm broke off.
pub fn serve(
    session: &mut Session,
    input: impl Read,
    output: impl Write,
) -> Result<Served, ProtocolError> {
    let mut input = BufReader::new(input);
    let mut output = BufWriter::new(output);
    output
        .write_all(&hello(session.rows()))
        .and_then(|()| output.flush())
        .map_err(ProtocolError::Write)?;
    let mut served = Served::default();
    let mut offset = 0u64;
    let mut samples = Vec::new();
    let mut frame = Vec::new();
    loop {
        let mut head = [0u8; 5];
        if !read_frame_part(&mut input, &mut head[..4], offset)? {
            return Ok(served);
        }
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        // A frame has at least its kind: the byte after a zero length is the next frame's.
        if len == 0 {
            return Err(ProtocolError::Length { len, offset });
        }
        if !read_frame_part(&mut input, &mut head[4..], offset)? {
            return Err(ProtocolError::Truncated { offset });
        }
        match (head[4], len) {
            (GET, 1) => {
                let p = session.next_packet(&mut samples);
                data_frame(&mut frame, &p, &samples);
                output
                    .write_all(&frame)
                    .and_then(|()| output.flush())
                    .map_err(ProtocolError::Write)?;
                served.packets += 1;
            }
            (REPORT, 9) => {
                let mut code = [0u8; 8];
                if !read_frame_part(&mut input, &mut code, offset)? {
                    return Err(ProtocolError::Truncated { offset });
                }
                if served.reports as usize >= MAX_REPORTS {
                    return Err(ProtocolError::TooManyReports { offset });
                }
                session.report(i64::from_le_bytes(code));
                served.reports += 1;
            }
            (GET | REPORT, len) => return Err(ProtocolError::Length { len, offset }),
            (kind, _) => return Err(ProtocolError::Kind { kind, offset }),
        }
        offset += 4 + u64::from(len);
    }
}

/// A packet as the algorithm receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub start_position: u64,
    pub person_id: u32,
    pub finished: bool,
    pub samples: usize,
    /// rows × samples, row by row.
    pub data: Vec<f32>,
}

/// The algorithm's end of the protocol.
pub struct Client<R: Read, W: Write> {
    input: R,
    output: W,
    /// Rows per packet, from the host's hello.
    pub rows: usize,
}

/// A client-side failure (the host's frames were not as specified, or I/O failed).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("unexpected frame from the host: {0}")]
    Frame(String),
}

impl<R: Read, W: Write> Client<R, W> {
    /// Reads the host's hello.
    pub fn connect(mut input: R, output: W) -> Result<Self, ClientError> {
        let mut f = [0u8; 13];
        input.read_exact(&mut f)?;
        if f[..5] != [9, 0, 0, 0, HELLO] {
            return Err(ClientError::Frame(format!(
                "{:?} instead of a hello",
                &f[..5]
            )));
        }
        let version = u16::from_le_bytes([f[5], f[6]]);
        if version != VERSION {
            return Err(ClientError::Frame(format!("protocol version {version}")));
        }
        let rows = u16::from_le_bytes([f[7], f[8]]) as usize;
        Ok(Client {
            input,
            output,
            rows,
        })
    }

    /// `get_data`: asks for the next packet and waits for it.
    pub fn get(&mut self) -> Result<Received, ClientError> {
        self.output.write_all(&[1, 0, 0, 0, GET])?;
        self.output.flush()?;
        let mut head = [0u8; 20];
        self.input.read_exact(&mut head)?;
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        if head[4] != DATA || len < 16 {
            return Err(ClientError::Frame(format!("kind {} length {len}", head[4])));
        }
        let samples = u16::from_le_bytes([head[18], head[19]]) as usize;
        if len != 16 + 4 * self.rows * samples {
            return Err(ClientError::Frame(format!("data frame of {len} bytes")));
        }
        let mut bytes = vec![0u8; 4 * self.rows * samples];
        self.input.read_exact(&mut bytes)?;
        Ok(Received {
            start_position: u64::from_le_bytes(head[5..13].try_into().unwrap_or([0; 8])),
            person_id: u32::from_le_bytes(head[13..17].try_into().unwrap_or([0; 4])),
            finished: head[17] != 0,
            samples,
            data: bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        })
    }

    /// `report`: sends a result (no answer comes).
    pub fn report(&mut self, code: i64) -> Result<(), ClientError> {
        let mut f = vec![9, 0, 0, 0, REPORT];
        f.extend_from_slice(&code.to_le_bytes());
        self.output.write_all(&f)?;
        self.output.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testblocks::{flash, subject};
    use proptest::prelude::*;
    use std::os::unix::net::UnixStream;

    fn session() -> Session {
        Session::new(vec![subject(1, &[104, 121]), subject(2, &[136])], 5).unwrap()
    }

    /// Runs `client` against a served session over a socket pair.
    fn play(
        client: impl FnOnce(&mut Client<UnixStream, UnixStream>) + Send + 'static,
    ) -> (Result<Served, ProtocolError>, crate::SessionResult) {
        let (host, alg) = UnixStream::pair().unwrap();
        let t = std::thread::spawn(move || {
            let mut c = Client::connect(alg.try_clone().unwrap(), alg).unwrap();
            client(&mut c);
        });
        let mut s = session();
        let served = serve(&mut s, host.try_clone().unwrap(), host);
        t.join().unwrap();
        (served, s.finish())
    }

    #[test]
    fn a_whole_session_over_the_wire() {
        let (served, r) = play(|c| {
            assert_eq!(c.rows, 2);
            let mut last_block_start = 0;
            loop {
                let p = c.get().unwrap();
                assert_eq!(p.data.len(), 2 * p.samples);
                if p.start_position == 0 {
                    last_block_start = 0;
                }
                // Report 104 once per block, right after the 3rd flash of sequence 1.
                let end = p.start_position as usize + p.samples;
                if end == crate::seg_end(flash(0, 0, 2)) && last_block_start == 0 {
                    c.report(104).unwrap();
                    last_block_start = 1;
                }
                // The trigger row never shows a true target code.
                assert!(
                    p.data[p.samples..]
                        .iter()
                        .all(|&v| !(102.0..=136.0).contains(&v))
                );
                if p.finished {
                    break;
                }
            }
        });
        let served = served.unwrap();
        assert_eq!(served.reports, 2);
        let blocks =
            [2, 1].map(|trials| crate::testblocks::start(trials) + crate::testblocks::LEAD);
        let packets: usize = blocks.iter().map(|b| b.div_ceil(10)).sum();
        assert_eq!(served.packets as usize, packets);
        let accepted: Vec<bool> = r
            .log
            .iter()
            .map(|l| matches!(l.status, crate::ReportStatus::Accepted { .. }))
            .collect();
        assert_eq!(accepted, vec![true, true]);
        // Right for subject 1's first character, wrong for subject 2's.
        let correct: usize = r.summary.subjects.iter().map(|s| s.correct).sum();
        assert_eq!(correct, 1);
    }

    fn serve_bytes(bytes: &[u8]) -> (Result<Served, ProtocolError>, Vec<u8>) {
        let mut out = Vec::new();
        let mut s = session();
        (serve(&mut s, bytes, &mut out), out)
    }

    #[test]
    fn broken_frames_are_errors_that_say_where() {
        let get = [1u8, 0, 0, 0, GET];
        let mut two_gets_then_junk = [get, get].concat();
        two_gets_then_junk.extend_from_slice(&[1, 0, 0, 0, b'X']);
        let e = serve_bytes(&two_gets_then_junk).0.unwrap_err().to_string();
        assert!(e.contains("unknown frame kind 0x58 at byte 10"), "{e}");
        let e = serve_bytes(&[2, 0, 0, 0, GET, 0])
            .0
            .unwrap_err()
            .to_string();
        assert!(e.contains("frame of 2 bytes at byte 0"), "{e}");
        let e = serve_bytes(&[9, 0, 0, 0, REPORT, 1, 2])
            .0
            .unwrap_err()
            .to_string();
        assert!(e.contains("ended inside a frame"), "{e}");
        let e = serve_bytes(&[1, 0]).0.unwrap_err().to_string();
        assert!(e.contains("ended inside a frame"), "{e}");
        // Closing at a frame boundary is the normal end; the hello went out first.
        let (served, out) = serve_bytes(&get);
        assert_eq!(served.unwrap().packets, 1);
        assert_eq!(&out[..5], &[9, 0, 0, 0, HELLO]);
        assert_eq!(out[13 + 4], DATA);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_from_the_algorithm_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = serve_bytes(&bytes);
        }

        #[test]
        fn valid_frames_in_any_mix_are_served(ops in proptest::collection::vec(any::<Option<i64>>(), 0..200)) {
            let mut bytes = Vec::new();
            for op in &ops {
                match op {
                    None => bytes.extend_from_slice(&[1, 0, 0, 0, GET]),
                    Some(code) => {
                        bytes.extend_from_slice(&[9, 0, 0, 0, REPORT]);
                        bytes.extend_from_slice(&code.to_le_bytes());
                    }
                }
            }
            let served = serve_bytes(&bytes).0.unwrap();
            prop_assert_eq!(served.packets as usize, ops.iter().filter(|o| o.is_none()).count());
            prop_assert_eq!(served.reports as usize, ops.iter().filter(|o| o.is_some()).count());
        }
    }

    #[test]
    fn a_zero_length_frame_is_an_error_at_its_own_offset() {
        let get = [1u8, 0, 0, 0, GET];
        // Not the next frame's first byte read as its kind.
        let bytes = [&get[..], &[0, 0, 0, 0], &get[..]].concat();
        let e = serve_bytes(&bytes).0.unwrap_err();
        assert!(e.is_violation(), "{e}");
        assert!(e.to_string().contains("frame of 0 bytes at byte 5"), "{e}");
        // Nor a frame cut short when nothing follows.
        let e = serve_bytes(&[0, 0, 0, 0]).0.unwrap_err();
        assert!(e.to_string().contains("frame of 0 bytes at byte 0"), "{e}");
    }

    #[test]
    fn a_flood_of_reports_stops_at_the_byte_of_the_one_too_many() {
        let mut report = vec![9u8, 0, 0, 0, REPORT];
        report.extend_from_slice(&104i64.to_le_bytes());
        let bytes = report.repeat(MAX_REPORTS + 1);
        let mut s = session();
        let e = serve(&mut s, &bytes[..], std::io::sink()).unwrap_err();
        assert!(e.is_violation(), "{e}");
        let at = format!("at byte {}", 13 * MAX_REPORTS);
        assert!(e.to_string().contains(&at), "{e}");
        // The reports until then count.
        assert_eq!(s.finish().reports, MAX_REPORTS);
    }
}
