//! The commit manifest and tombstone files, and the names of index files.
//!
//! A commit publishes `manifest-<gen>.qmf` (gen as 16 hex digits): the
//! schema, the next free segment id, and the live segments in doc-number
//! order. The newest manifest that passes its checksum is the index.

use std::path::Path;

use crate::analysis::Analyzer;
use crate::error::{Error, Result};
use crate::schema::{FieldFlags, FieldType, Schema};

/// Magic of a manifest file.
pub const MAGIC: &[u8; 4] = b"QMAN";
/// Magic of a tombstone file.
pub const DEL_MAGIC: &[u8; 4] = b"QDEL";
/// Field flag bit of a manifest: the text field's positions are indexed
/// (never set in version 1, whose text fields have none).
const POSITIONS_FLAG: u8 = 8;
/// The first format version whose manifest names each text field's
/// analyzer.
const ANALYZER_VERSION: u32 = 3;
/// Name of the writer's lock file.
pub const LOCK_FILE: &str = "LOCK";

/// One segment as the manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentEntry {
    /// Segment id (names its files).
    pub id: u64,
    /// Documents in the segment, deleted ones included.
    pub doc_count: u32,
    /// Deleted documents.
    pub del_count: u32,
    /// Generation of its tombstone file, 0 when it has none.
    pub del_gen: u64,
    /// Length of the segment file in bytes.
    pub file_len: u64,
}

/// A decoded manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Commit generation, starting at 1.
    pub generation: u64,
    /// The smallest segment id not used yet.
    pub next_segment_id: u64,
    /// The index's schema.
    pub schema: Schema,
    /// Live segments in doc-number order.
    pub segments: Vec<SegmentEntry>,
}

/// File name of manifest generation `g`.
pub fn manifest_name(g: u64) -> String {
    format!("manifest-{g:016x}.qmf")
}

/// The generation named by a manifest file name.
pub fn parse_manifest_name(name: &str) -> Option<u64> {
    let hex = name.strip_prefix("manifest-")?.strip_suffix(".qmf")?;
    if hex.len() != 16 {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// File name of segment `id`.
pub fn segment_name(id: u64) -> String {
    format!("seg-{id:016x}.qsg")
}

/// File name of generation `del_gen` of segment `id`'s tombstones.
pub fn tombstone_name(id: u64, del_gen: u64) -> String {
    format!("seg-{id:016x}-{del_gen:016x}.qdl")
}

/// The segment id a segment or tombstone file name starts with
/// (`seg-<id as 16 hex digits>`, then anything).
pub fn parse_segment_file_id(name: &str) -> Option<u64> {
    let hex = name.strip_prefix("seg-")?.get(..16)?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// Appends the schema as a manifest of this build's version holds it
/// (`docs/FORMAT.md`, "Manifest"): the field count, then per field its
/// type, flags, name and (text fields) analyzer.
pub fn encode_schema(schema: &Schema, out: &mut Vec<u8>) {
    let fields = schema.fields();
    out.extend_from_slice(&(fields.len() as u16).to_le_bytes());
    for f in fields {
        out.push(f.ty.code());
        out.push(f.flags.bits() as u8 | if f.positions { POSITIONS_FLAG } else { 0 });
        out.push(f.name.len() as u8);
        out.extend_from_slice(f.name.as_bytes());
        if f.ty == FieldType::Text {
            let a = f.analyzer.name();
            out.push(a.len() as u8);
            out.extend_from_slice(a.as_bytes());
        }
    }
}

impl Manifest {
    /// Encodes the manifest file.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        super::write_header(&mut out, MAGIC);
        out.extend_from_slice(&self.generation.to_le_bytes());
        out.extend_from_slice(&self.next_segment_id.to_le_bytes());
        encode_schema(&self.schema, &mut out);
        out.extend_from_slice(&(self.segments.len() as u32).to_le_bytes());
        for s in &self.segments {
            out.extend_from_slice(&s.id.to_le_bytes());
            out.extend_from_slice(&s.doc_count.to_le_bytes());
            out.extend_from_slice(&s.del_count.to_le_bytes());
            out.extend_from_slice(&s.del_gen.to_le_bytes());
            out.extend_from_slice(&s.file_len.to_le_bytes());
        }
        super::write_footer(&mut out);
        out
    }

    /// Decodes a manifest file (of any version this build reads: before
    /// version 3 text fields name no analyzer and are `default`).
    ///
    /// An analyzer name this build does not know is [`Error::Corrupt`]:
    /// the set of names belongs to the format version, so a name outside
    /// it is damage, never a reason to analyse queries differently from
    /// the documents.
    pub fn decode(path: &Path, bytes: &[u8]) -> Result<Manifest> {
        let (version, body) = super::check_file(path, bytes, MAGIC)?;
        let mut r = super::Reader::new(path, body);
        let generation = r.u64()?;
        let next_segment_id = r.u64()?;
        let nfields = r.u16()?;
        let mut schema = Schema::new();
        for _ in 0..nfields {
            let ty = r.u8()?;
            let flags = r.u8()?;
            let name = r.short_str()?;
            let ty = FieldType::from_code(ty)
                .ok_or_else(|| r.err(format!("unknown field type {ty}")))?;
            let positions = flags & POSITIONS_FLAG != 0;
            let flags = FieldFlags::from_bits(u32::from(flags & !POSITIONS_FLAG))
                .ok_or_else(|| r.err(format!("unknown field flags {flags:#x}")))?;
            let analyzer = if ty == FieldType::Text && version >= ANALYZER_VERSION {
                let a = r.short_str()?;
                Analyzer::from_name(a).ok_or_else(|| {
                    r.err(format!(
                        "field {name:?} names analyzer {a:?}, which this build does not know \
                         (known: {})",
                        Analyzer::ALL.map(Analyzer::name).join(", ")
                    ))
                })?
            } else {
                Analyzer::Default
            };
            let id = schema
                .add_field(name, ty, flags)
                .map_err(|e| r.err(format!("bad schema: {e}")))?;
            if analyzer != Analyzer::Default {
                schema
                    .set_analyzer(id, analyzer)
                    .map_err(|e| r.err(format!("bad schema: {e}")))?;
            }
            if ty == FieldType::Text || positions {
                schema
                    .set_positions(id, positions)
                    .map_err(|e| r.err(format!("bad schema: {e}")))?;
            }
        }
        let nseg = r.u32()? as usize;
        if nseg > r.remaining() / 32 {
            return Err(r.err("segment count exceeds file size"));
        }
        let mut segments = Vec::with_capacity(nseg);
        for _ in 0..nseg {
            let s = SegmentEntry {
                id: r.u64()?,
                doc_count: r.u32()?,
                del_count: r.u32()?,
                del_gen: r.u64()?,
                file_len: r.u64()?,
            };
            if s.del_count > s.doc_count || s.id >= next_segment_id {
                return Err(r.err(format!("segment entry {} out of range", s.id)));
            }
            segments.push(s);
        }
        if r.remaining() != 0 {
            return Err(r.err("trailing bytes after segment list"));
        }
        Ok(Manifest {
            generation,
            next_segment_id,
            schema,
            segments,
        })
    }
}

/// Encodes a tombstone file: one bit per document, set when deleted.
pub fn encode_tombstones(bits: &[u64], doc_count: u32) -> Vec<u8> {
    let mut out = Vec::new();
    super::write_header(&mut out, DEL_MAGIC);
    out.extend_from_slice(&doc_count.to_le_bytes());
    let del: u32 = bits.iter().map(|w| w.count_ones()).sum();
    out.extend_from_slice(&del.to_le_bytes());
    for w in bits {
        out.extend_from_slice(&w.to_le_bytes());
    }
    super::write_footer(&mut out);
    out
}

/// Decodes a tombstone file into its bit words and deleted count.
pub fn decode_tombstones(path: &Path, bytes: &[u8], doc_count: u32) -> Result<(Vec<u64>, u32)> {
    let (_, body) = super::check_file(path, bytes, DEL_MAGIC)?;
    let mut r = super::Reader::new(path, body);
    let n = r.u32()?;
    let del = r.u32()?;
    if n != doc_count {
        return Err(Error::corrupt(
            path,
            format!("tombstones for {n} documents, segment has {doc_count}"),
        ));
    }
    let words = (n as usize).div_ceil(64);
    let raw = r.bytes(words * 8)?;
    let bits: Vec<u64> = raw
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
        .collect();
    let counted: u32 = bits.iter().map(|w| w.count_ones()).sum();
    if counted != del || r.remaining() != 0 {
        return Err(Error::corrupt(path, "tombstone count disagrees with bits"));
    }
    Ok((bits, del))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trips() {
        let mut schema = Schema::new();
        schema
            .add_field("body", FieldType::Text, FieldFlags::default())
            .unwrap();
        schema
            .add_field(
                "year",
                FieldType::I64,
                FieldFlags {
                    sortable: true,
                    stored: true,
                    indexed: false,
                },
            )
            .unwrap();
        let m = Manifest {
            generation: 7,
            next_segment_id: 4,
            schema,
            segments: vec![SegmentEntry {
                id: 3,
                doc_count: 10,
                del_count: 2,
                del_gen: 5,
                file_len: 999,
            }],
        };
        let bytes = m.encode();
        assert_eq!(Manifest::decode(Path::new("m"), &bytes).unwrap(), m);
        assert_eq!(parse_manifest_name(&manifest_name(7)), Some(7));
        assert_eq!(parse_manifest_name("manifest-7.qmf"), None);
        assert_eq!(parse_segment_file_id(&segment_name(0x31)), Some(0x31));
        assert_eq!(parse_segment_file_id(&tombstone_name(5, 9)), Some(5));
        assert_eq!(parse_segment_file_id("seg-12.qsg"), None);
        assert_eq!(parse_segment_file_id("seg-+000000000000001.qsg"), None);
    }

    #[test]
    fn analyzers_round_trip_and_unknown_ones_are_refused() {
        let mut schema = Schema::new();
        for a in Analyzer::ALL {
            let id = schema
                .add_field(a.name(), FieldType::Text, FieldFlags::default())
                .unwrap();
            schema.set_analyzer(id, a).unwrap();
        }
        schema
            .add_field("s", FieldType::String, FieldFlags::default())
            .unwrap();
        let m = Manifest {
            generation: 1,
            next_segment_id: 1,
            schema,
            segments: vec![],
        };
        let mut bytes = m.encode();
        assert_eq!(Manifest::decode(Path::new("m"), &bytes).unwrap(), m);
        // Rename "keyword" (the last text field's analyzer) to an unknown
        // name of the same length, with a valid checksum.
        let at = bytes
            .windows(8)
            .rposition(|w| w == b"\x07keyword")
            .expect("the analyzer name");
        bytes[at + 1..at + 8].copy_from_slice(b"klingon");
        let n = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[..n]);
        bytes[n..].copy_from_slice(&crc.to_le_bytes());
        let e = Manifest::decode(Path::new("m"), &bytes).unwrap_err();
        assert!(
            matches!(&e, Error::Corrupt { detail, .. } if detail.contains("\"klingon\"")),
            "{e}"
        );
    }

    #[test]
    fn tombstones_round_trip() {
        let bits = vec![0b1011u64, 1 << 63];
        let bytes = encode_tombstones(&bits, 128);
        assert_eq!(
            decode_tombstones(Path::new("t"), &bytes, 128).unwrap(),
            (bits, 4)
        );
        assert!(decode_tombstones(Path::new("t"), &bytes, 127).is_err());
    }
}
