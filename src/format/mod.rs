//! The bytes on disk, shared by `write` and `read`.
//!
//! Every file starts with a 4-byte magic and a little-endian u32 format
//! version and ends with a little-endian CRC-32 (IEEE) of every byte before
//! it. `docs/FORMAT.md` describes each layout byte by byte; the modules here
//! are the one place where each is encoded and decoded:
//!
//! - [`postings`]: posting blocks, skip entries and impacts;
//! - [`positions`]: token positions, stored apart from the postings;
//! - [`norms`]: the SmallFloat length byte;
//! - [`ords`]: packed ord arrays for sortable fields;
//! - [`segment`]: the segment file's sections;
//! - [`terms`]: the term dictionary of both versions;
//! - [`manifest`]: the commit manifest and tombstone files;
//! - [`stats`]: corpus statistics, the blob shards exchange (not a file of
//!   an index, and versioned on its own).

pub mod manifest;
pub mod norms;
pub mod ords;
pub mod positions;
pub mod postings;
pub mod segment;
pub mod stats;
pub mod terms;

use std::ops::RangeInclusive;
use std::path::Path;

use crate::error::{Error, Result};

/// The format version this build writes.
pub const FORMAT_VERSION: u32 = 5;

/// The oldest format version this build reads: a file of any version in
/// `MIN_READ_VERSION..=FORMAT_VERSION` opens (segments dispatch on it:
/// versions 2 to 5 share the segment layout but for version 4's packed
/// positions and version 5's presence bitmaps of dense posting lists;
/// manifests name analyzers from version 3; tombstones are the same in
/// all).
pub const MIN_READ_VERSION: u32 = 1;

/// Bytes of the common header (magic + version).
pub const HEADER_LEN: usize = 8;
/// Bytes of the common footer (CRC-32).
pub const FOOTER_LEN: usize = 4;

/// Appends the common header.
pub fn write_header(out: &mut Vec<u8>, magic: &[u8; 4]) {
    write_framed_header(out, magic, FORMAT_VERSION);
}

/// Appends the common header with another `version` than the index
/// files' (a layout versioned on its own, see [`check_framed`]).
pub fn write_framed_header(out: &mut Vec<u8>, magic: &[u8; 4], version: u32) {
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
}

/// Appends the common footer: the CRC-32 of everything in `out` so far.
pub fn write_footer(out: &mut Vec<u8>) {
    let crc = crc32fast::hash(out);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Checks magic, version and checksum of a whole file and returns its
/// version and body (the bytes between header and footer).
pub fn check_file<'a>(path: &Path, bytes: &'a [u8], magic: &[u8; 4]) -> Result<(u32, &'a [u8])> {
    check_file_hashed(path, bytes, magic, crc32fast::hash)
}

/// [`check_file`] with the CRC-32 of the bytes before the footer computed
/// by `crc` (a mapped file's reader hashes it a window at a time, letting
/// each window's pages go once hashed).
pub fn check_file_hashed<'a>(
    path: &Path,
    bytes: &'a [u8],
    magic: &[u8; 4],
    crc: impl FnOnce(&[u8]) -> u32,
) -> Result<(u32, &'a [u8])> {
    check_framed(path, bytes, magic, MIN_READ_VERSION..=FORMAT_VERSION, crc)
}

/// [`check_file_hashed`] for bytes framed the same way whose version is
/// one of `versions` (a layout versioned apart from the index files).
pub fn check_framed<'a>(
    path: &Path,
    bytes: &'a [u8],
    magic: &[u8; 4],
    versions: RangeInclusive<u32>,
    crc: impl FnOnce(&[u8]) -> u32,
) -> Result<(u32, &'a [u8])> {
    if bytes.len() < HEADER_LEN + FOOTER_LEN {
        return Err(Error::corrupt(
            path,
            format!(
                "file is {} bytes, shorter than header and footer",
                bytes.len()
            ),
        ));
    }
    if &bytes[..4] != magic {
        return Err(Error::corrupt(
            path,
            format!(
                "bad magic {:02x?}, expected {:?}",
                &bytes[..4],
                String::from_utf8_lossy(magic)
            ),
        ));
    }
    let version = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    let (content, footer) = bytes.split_at(bytes.len() - FOOTER_LEN);
    let stored = u32::from_le_bytes(footer.try_into().expect("4 bytes"));
    let actual = crc(content);
    if !versions.contains(&version) {
        // A checksum that matches means the file is intact but newer (or older).
        if stored == actual {
            return Err(Error::UnsupportedVersion {
                path: path.to_owned(),
                found: version,
                supported: *versions.end(),
            });
        }
        return Err(Error::corrupt(path, "bad version and checksum mismatch"));
    }
    if stored != actual {
        return Err(Error::corrupt(
            path,
            format!("checksum mismatch (stored {stored:08x}, computed {actual:08x})"),
        ));
    }
    Ok((version, &content[HEADER_LEN..]))
}

/// Appends `v` as a LEB128 varint.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 10];
    let n = varint_bytes(v, &mut buf);
    out.extend_from_slice(&buf[..n]);
}

/// `v` as a LEB128 varint in `buf`, for writers that place the bytes
/// themselves; returns how many.
#[inline]
pub fn varint_bytes(mut v: u64, buf: &mut [u8; 10]) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        buf[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    buf[n] = v as u8;
    n + 1
}

/// Reads a LEB128 varint at `*pos`, advancing it; `None` when truncated or over-long.
#[inline]
pub fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    // Most varints (gaps, exception high bits, frequencies) fit one byte,
    // and most others two (a rare term's gaps in a short list's tail,
    // 128 to 16,383: synthetic 200,000 documents in eight segments,
    // rare-3 AND 130.1k -> 113.8k instructions a query with this path).
    let first = *bytes.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(u64::from(first));
    }
    if let Some(&second) = bytes.get(*pos + 1)
        && second < 0x80
    {
        *pos += 2;
        return Some(u64::from(first & 0x7f) | u64::from(second) << 7);
    }
    get_varint_long(bytes, pos)
}

/// [`get_varint`] past its one-byte fast path: at most ten bytes, the
/// tenth 0 or 1. The position is stored once, at the end (not through
/// the pointer at every byte).
fn get_varint_long(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for (i, &b) in bytes.get(*pos..)?.iter().take(10).enumerate() {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            if i == 9 && b > 1 {
                return None;
            }
            *pos += i + 1;
            return Some(v);
        }
    }
    None
}

/// A bounds-checked little-endian reader over a byte slice. Every read that
/// would leave the slice returns a `Corrupt` error naming the file.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(path: &'a Path, bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            path,
        }
    }

    /// The current offset.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// A `Corrupt` error for this file.
    pub fn err(&self, detail: impl Into<String>) -> Error {
        Error::corrupt(self.path, detail)
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                self.err(format!(
                    "truncated: need {n} bytes at offset {}, have {}",
                    self.pos,
                    self.remaining()
                ))
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// A u8.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.bytes(1)?[0])
    }

    /// A little-endian u16.
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.bytes(2)?.try_into().expect("2")))
    }

    /// A little-endian u32.
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.bytes(4)?.try_into().expect("4")))
    }

    /// A little-endian u64.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.bytes(8)?.try_into().expect("8")))
    }

    /// A u64 that must fit in usize.
    pub fn usize64(&mut self) -> Result<usize> {
        let v = self.u64()?;
        usize::try_from(v).map_err(|_| self.err(format!("offset {v} too large")))
    }

    /// A varint.
    pub fn varint(&mut self) -> Result<u64> {
        get_varint(self.bytes, &mut self.pos)
            .ok_or_else(|| self.err(format!("bad varint at offset {}", self.pos)))
    }

    /// A u8-length-prefixed UTF-8 string.
    pub fn short_str(&mut self) -> Result<&'a str> {
        let n = self.u8()? as usize;
        let b = self.bytes(n)?;
        std::str::from_utf8(b).map_err(|_| self.err("string is not UTF-8"))
    }
}

/// A sub-slice `bytes[off..off+len]`, or a `Corrupt` error.
pub fn slice<'a>(
    path: &Path,
    bytes: &'a [u8],
    off: usize,
    len: usize,
    what: &str,
) -> Result<&'a [u8]> {
    off.checked_add(len)
        .filter(|&end| end <= bytes.len())
        .map(|end| &bytes[off..end])
        .ok_or_else(|| {
            Error::corrupt(
                path,
                format!("{what}: range {off}+{len} outside {} bytes", bytes.len()),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_reject_garbage() {
        let mut buf = Vec::new();
        let values = [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX];
        for v in values {
            put_varint(&mut buf, v);
        }
        let mut pos = 0;
        for v in values {
            assert_eq!(get_varint(&buf, &mut pos), Some(v));
        }
        assert_eq!(pos, buf.len());
        assert_eq!(get_varint(&[0x80, 0x80], &mut 0), None);
        assert_eq!(get_varint(&[0xff; 11], &mut 0), None);
        // Every length, truncated and followed by more bytes, at every bit
        // of the top byte.
        for bits in 0..64 {
            for v in [1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) | 0x55] {
                let mut one = Vec::new();
                put_varint(&mut one, v);
                for pad in [0, 9] {
                    let mut buf = one.clone();
                    buf.resize(one.len() + pad, 0x80);
                    let mut pos = 0;
                    assert_eq!(get_varint(&buf, &mut pos), Some(v), "{v:#x} pad {pad}");
                    assert_eq!(pos, one.len());
                    for cut in 0..one.len() {
                        assert_eq!(get_varint(&one[..cut], &mut 0), None);
                    }
                }
            }
        }
        // An eleventh byte, or a tenth above 1, is over-long.
        let mut long = vec![0x80; 9];
        long.push(2);
        assert_eq!(get_varint(&long, &mut 0), None);
        long[9] = 1;
        assert_eq!(get_varint(&long, &mut 0), Some(1 << 63));
    }

    #[test]
    fn framing_detects_every_kind_of_damage() {
        let p = Path::new("x");
        let mut f = Vec::new();
        write_header(&mut f, b"TEST");
        f.extend_from_slice(b"body");
        write_footer(&mut f);
        assert_eq!(
            check_file(p, &f, b"TEST").unwrap(),
            (FORMAT_VERSION, &b"body"[..])
        );
        assert!(matches!(
            check_file(p, &f, b"XXXX"),
            Err(Error::Corrupt { .. })
        ));
        for cut in 0..f.len() {
            assert!(check_file(p, &f[..cut], b"TEST").is_err());
        }
        for i in 0..f.len() {
            let mut g = f.clone();
            g[i] ^= 0x10;
            assert!(check_file(p, &g, b"TEST").is_err(), "flip at {i}");
        }
        let mut newer = Vec::new();
        newer.extend_from_slice(b"TEST");
        newer.extend_from_slice(&99u32.to_le_bytes());
        write_footer(&mut newer);
        assert!(matches!(
            check_file(p, &newer, b"TEST"),
            Err(Error::UnsupportedVersion { found: 99, .. })
        ));
    }
}
