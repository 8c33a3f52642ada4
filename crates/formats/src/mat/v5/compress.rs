//! Compressed elements (miCOMPRESSED): zlib data inflated within the file's budget, then
//! parsed as the miMATRIX element it holds.

use std::io::Read;

use super::{Buf, DataType, Parsed, Tag, V5Parser};
use crate::mat::{MatError, MatErrorKind};

impl V5Parser<'_> {
    pub(super) fn compressed(&mut self, file: Buf, tag: Tag) -> Result<Parsed, MatError> {
        let data = file.bytes.get(tag.start..tag.end).unwrap_or_default();
        let out = inflate_capped(data, self.budget).map_err(|e| {
            let kind = match e {
                Some(e) => MatErrorKind::Zlib(e),
                None => MatErrorKind::DecompressionLimit {
                    limit: self.opts.max_decompressed,
                },
            };
            self.err(file, tag.at, kind)
        })?;
        self.budget = self.budget.saturating_sub(out.len() as u64);
        let inner = Buf {
            bytes: &out,
            compressed_at: Some(tag.at as u64),
        };
        let itag = self.tag(inner, 0, out.len())?;
        match itag.kind() {
            Some(DataType::Matrix) if !itag.small => self.matrix(inner, itag.start, itag.end, 0),
            _ => Err(self.malformed(
                inner,
                0,
                format!(
                    "a compressed element must hold a miMATRIX element, found {}",
                    itag.describe()
                ),
            )),
        }
    }
}

/// Decompresses a zlib stream into at most `limit` bytes; `Err(None)` when it holds more.
/// The buffer grows by doubling but never beyond the limit, so a decompression bomb costs
/// at most `limit` bytes of memory. Bytes after the end of the stream are ignored.
fn inflate_capped(data: &[u8], limit: u64) -> Result<Vec<u8>, Option<std::io::Error>> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut decoder = flate2::read::ZlibDecoder::new(data);
    let mut out = Vec::new();
    let mut chunk = [0u8; 32 * 1024];
    loop {
        let n = match decoder.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Some(e)),
        };
        let len = out
            .len()
            .checked_add(n)
            .filter(|&l| l <= limit)
            .ok_or(None)?;
        if len > out.capacity() {
            let target = out.capacity().saturating_mul(2).clamp(len, limit);
            out.reserve_exact(target - out.len());
        }
        out.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn inflate_never_holds_more_than_the_limit() {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&vec![7u8; 1_000_000]).unwrap();
        let z = z.finish().unwrap();
        let out = inflate_capped(&z, 1_000_000).unwrap();
        assert_eq!(out.len(), 1_000_000);
        assert!(out.capacity() <= 1_000_000);
        assert!(matches!(inflate_capped(&z, 999_999), Err(None)));
        // A cut stream is an error ("incomplete deflate stream"), not short data.
        assert!(matches!(
            inflate_capped(&z[..z.len() / 2], 1 << 20),
            Err(Some(_))
        ));
        assert!(matches!(
            inflate_capped(&z[..z.len() - 2], 1 << 20),
            Err(Some(_))
        ));
        assert!(matches!(inflate_capped(b"not zlib", 1 << 20), Err(Some(_))));
    }
}
