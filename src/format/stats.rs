//! Corpus statistics: the integers BM25 takes from the corpus, as a shard
//! exports them for a set of queries, summed over the shards of a corpus,
//! and imported by one shard so that it scores in the whole corpus's space
//! (`docs/FORMAT.md`, "Corpus statistics"; `docs/SCALE-OUT.md`).
//!
//! A blob is not a file of an index and is versioned on its own
//! ([`VERSION`]); it is framed like the index files (magic, version,
//! CRC-32), so damage is `Corrupt` and an intact blob of another version is
//! `UnsupportedVersion`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::error::{Error, Result};
use crate::format::{self, Reader, manifest};
use crate::schema::{FieldId, Schema};

/// Magic of a statistics blob.
pub const MAGIC: &[u8; 4] = b"QSTS";
/// The blob version this build writes and reads.
pub const VERSION: u32 = 1;

/// What a blob's errors name when it came from memory, not a file.
const IN_MEMORY: &str = "<corpus statistics>";

/// The corpus statistics a set of queries needs, over one shard or summed
/// over several (see the module docs). Everything is an exact integer: a
/// shard scoring with the sum of every shard's statistics computes the same
/// f32 scores, bit for bit, as a searcher of all the shards at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusStats {
    /// CRC-32 of the schema as a manifest encodes it ([`schema_fingerprint`]).
    schema: u32,
    /// The expansion limit the prefixes and dictionary ranges were
    /// expanded under (`SearchOptions::max_expansions`).
    max_expansions: u64,
    /// Per shard, in shard order: its documents, deleted ones included
    /// until a merge removes them (BM25's N is their sum).
    shard_docs: Vec<u64>,
    /// Per field a query looked a term up in: the field's tokens.
    fields: BTreeMap<FieldId, u64>,
    /// Per term a query looked up: the documents holding it.
    terms: BTreeMap<(FieldId, Vec<u8>), u64>,
    /// The terms prefixes and dictionary ranges expanded to (for the
    /// expansion limit only: they score a constant).
    expanded: BTreeSet<(FieldId, Vec<u8>)>,
}

/// The CRC-32 of `schema` as a manifest of this build encodes it: blobs of
/// different schemas neither merge nor import.
pub fn schema_fingerprint(schema: &Schema) -> u32 {
    let mut bytes = Vec::new();
    manifest::encode_schema(schema, &mut bytes);
    crc32fast::hash(&bytes)
}

impl CorpusStats {
    /// Empty statistics of shards of `shard_docs` documents with `schema`,
    /// to be filled by looking terms up.
    pub(crate) fn new(schema: &Schema, max_expansions: usize, shard_docs: Vec<u64>) -> CorpusStats {
        CorpusStats {
            schema: schema_fingerprint(schema),
            max_expansions: max_expansions as u64,
            shard_docs,
            fields: BTreeMap::new(),
            terms: BTreeMap::new(),
            expanded: BTreeSet::new(),
        }
    }

    /// Records a field's token total.
    pub(crate) fn set_total_tokens(&mut self, field: FieldId, tokens: u64) {
        self.fields.insert(field, tokens);
    }

    /// Records a term's document frequency.
    pub(crate) fn set_doc_freq(&mut self, field: FieldId, key: &[u8], df: u64) {
        self.terms.insert((field, key.to_vec()), df);
    }

    /// Records terms an expansion found.
    pub(crate) fn add_expanded<'k>(
        &mut self,
        field: FieldId,
        keys: impl IntoIterator<Item = &'k Vec<u8>>,
    ) {
        self.expanded
            .extend(keys.into_iter().map(|k| (field, k.clone())));
    }

    /// The documents of the corpus (BM25's N): the shards' sum.
    pub fn doc_count(&self) -> u64 {
        self.shard_docs.iter().sum()
    }

    /// Per shard, in shard order, its documents (deleted ones included).
    pub fn shard_docs(&self) -> &[u64] {
        &self.shard_docs
    }

    /// The number of the first document of shard `shard` in the corpus's
    /// numbering (the documents of the shards before it); `None` past the
    /// last shard.
    pub fn shard_base(&self, shard: usize) -> Option<u64> {
        (shard < self.shard_docs.len()).then(|| self.shard_docs[..shard].iter().sum())
    }

    /// Whether these statistics were gathered over `schema`.
    pub fn fits(&self, schema: &Schema) -> bool {
        self.schema == schema_fingerprint(schema)
    }

    /// The expansion limit the statistics were gathered under.
    pub fn max_expansions(&self) -> u64 {
        self.max_expansions
    }

    /// The token total of `field`, when a query looked a term of it up.
    pub fn total_tokens(&self, field: FieldId) -> Option<u64> {
        self.fields.get(&field).copied()
    }

    /// The document frequency of a term, when a query looked it up.
    pub fn doc_freq(&self, field: FieldId, key: &[u8]) -> Option<u64> {
        self.terms.get(&(field, key.to_vec())).copied()
    }

    /// How many terms looked up (with a document frequency) the statistics hold.
    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// How many fields' token totals the statistics hold.
    pub fn field_count(&self) -> usize {
        self.fields.len()
    }

    /// The expanded terms of `field` from `from` on, in key order.
    pub(crate) fn expanded_from<'s>(
        &'s self,
        field: FieldId,
        from: &[u8],
    ) -> impl Iterator<Item = &'s [u8]> + 's {
        self.expanded
            .range((field, from.to_vec())..)
            .take_while(move |(f, _)| *f == field)
            .map(|(_, k)| k.as_slice())
    }

    /// Whether `key` is among the expanded terms of `field`.
    pub(crate) fn is_expanded(&self, field: FieldId, key: &[u8]) -> bool {
        self.expanded.contains(&(field, key.to_vec()))
    }

    /// The statistics of the corpus made of `parts`' shards in the given
    /// order (their shard numbers follow one another: the first part's
    /// shards come first): documents, token totals and document
    /// frequencies summed, expanded terms united.
    ///
    /// Errors: [`Error::InvalidArgument`] for no parts, parts of different
    /// schemas or expansion limits, parts that did not look up the same
    /// terms and fields (exported for different queries), or sums past
    /// `u64`.
    pub fn merge(parts: &[CorpusStats]) -> Result<CorpusStats> {
        let Some((first, rest)) = parts.split_first() else {
            return Err(Error::InvalidArgument(
                "merging corpus statistics needs at least one part".into(),
            ));
        };
        let mut out = first.clone();
        for (i, p) in rest.iter().enumerate() {
            let i = i + 1;
            let differ = |what: &str| {
                Error::InvalidArgument(format!(
                    "corpus statistics part {i} differs from part 0 in {what}"
                ))
            };
            if p.schema != out.schema {
                return Err(differ("its schema"));
            }
            if p.max_expansions != out.max_expansions {
                return Err(differ("its expansion limit"));
            }
            if !p.fields.keys().eq(out.fields.keys()) || !p.terms.keys().eq(out.terms.keys()) {
                return Err(differ(
                    "the fields or terms it holds (export every shard's statistics for the same queries)",
                ));
            }
            let overflow = || Error::InvalidArgument("corpus statistics overflow u64".into());
            for (sum, add) in out.fields.values_mut().zip(p.fields.values()) {
                *sum = sum.checked_add(*add).ok_or_else(overflow)?;
            }
            for (sum, add) in out.terms.values_mut().zip(p.terms.values()) {
                *sum = sum.checked_add(*add).ok_or_else(overflow)?;
            }
            out.shard_docs.extend_from_slice(&p.shard_docs);
            out.shard_docs
                .iter()
                .try_fold(0u64, |a, &b| a.checked_add(b))
                .ok_or_else(overflow)?;
            out.expanded.extend(p.expanded.iter().cloned());
        }
        Ok(out)
    }

    /// The blob (`docs/FORMAT.md`, "Corpus statistics").
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        format::write_framed_header(&mut out, MAGIC, VERSION);
        out.extend_from_slice(&self.schema.to_le_bytes());
        out.extend_from_slice(&self.max_expansions.to_le_bytes());
        out.extend_from_slice(&(self.shard_docs.len() as u32).to_le_bytes());
        for d in &self.shard_docs {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&(self.fields.len() as u32).to_le_bytes());
        for (f, tokens) in &self.fields {
            out.extend_from_slice(&f.0.to_le_bytes());
            out.extend_from_slice(&tokens.to_le_bytes());
        }
        let key = |out: &mut Vec<u8>, f: FieldId, k: &[u8]| {
            out.extend_from_slice(&f.0.to_le_bytes());
            out.extend_from_slice(&(k.len() as u32).to_le_bytes());
            out.extend_from_slice(k);
        };
        out.extend_from_slice(&(self.terms.len() as u32).to_le_bytes());
        for ((f, k), df) in &self.terms {
            key(&mut out, *f, k);
            out.extend_from_slice(&df.to_le_bytes());
        }
        out.extend_from_slice(&(self.expanded.len() as u32).to_le_bytes());
        for (f, k) in &self.expanded {
            key(&mut out, *f, k);
        }
        format::write_footer(&mut out);
        out
    }

    /// Decodes a blob held in memory.
    ///
    /// Errors: [`Error::Corrupt`] for a blob that is truncated, damaged
    /// (checksum), or breaks the layout (entries out of order or repeated,
    /// no shard, bytes after the last entry, sums past `u64`);
    /// [`Error::UnsupportedVersion`] for an intact blob of another version.
    pub fn decode(bytes: &[u8]) -> Result<CorpusStats> {
        Self::decode_at(Path::new(IN_MEMORY), bytes)
    }

    /// Reads and decodes the blob in the file `path` (errors name it).
    ///
    /// Errors: [`Error::Io`], and those of [`Self::decode`].
    pub fn read(path: impl AsRef<Path>) -> Result<CorpusStats> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::decode_at(path, &bytes)
    }

    fn decode_at(path: &Path, bytes: &[u8]) -> Result<CorpusStats> {
        let (_, body) =
            format::check_framed(path, bytes, MAGIC, VERSION..=VERSION, crc32fast::hash)?;
        let mut r = Reader::new(path, body);
        let schema = r.u32()?;
        let max_expansions = r.u64()?;
        // A count is checked against the bytes left before anything is
        // allocated for it: each entry takes at least `min` bytes.
        let count = |r: &mut Reader, min: usize, what: &str| -> Result<usize> {
            let n = r.u32()? as usize;
            if n.saturating_mul(min) > r.remaining() {
                return Err(r.err(format!(
                    "{n} {what} do not fit in the {} bytes left",
                    r.remaining()
                )));
            }
            Ok(n)
        };
        let shards = count(&mut r, 8, "shards")?;
        if shards == 0 {
            return Err(r.err("corpus statistics of no shard"));
        }
        let shard_docs = (0..shards).map(|_| r.u64()).collect::<Result<Vec<_>>>()?;
        if shard_docs
            .iter()
            .try_fold(0u64, |a, &b| a.checked_add(b))
            .is_none()
        {
            return Err(r.err("the shards' documents overflow u64"));
        }
        let mut fields = BTreeMap::new();
        for _ in 0..count(&mut r, 10, "fields")? {
            let f = FieldId(r.u16()?);
            let tokens = r.u64()?;
            if fields.last_key_value().is_some_and(|(last, _)| *last >= f) {
                return Err(r.err(format!("field {} out of order", f.0)));
            }
            fields.insert(f, tokens);
        }
        let key = |r: &mut Reader| -> Result<(FieldId, Vec<u8>)> {
            let f = FieldId(r.u16()?);
            let len = r.u32()? as usize;
            Ok((f, r.bytes(len)?.to_vec()))
        };
        let mut terms = BTreeMap::new();
        for _ in 0..count(&mut r, 14, "terms")? {
            let k = key(&mut r)?;
            let df = r.u64()?;
            if terms.last_key_value().is_some_and(|(last, _)| *last >= k) {
                return Err(r.err("terms out of order"));
            }
            terms.insert(k, df);
        }
        let mut expanded = BTreeSet::new();
        for _ in 0..count(&mut r, 6, "expanded terms")? {
            let k = key(&mut r)?;
            if expanded.last().is_some_and(|last| *last >= k) {
                return Err(r.err("expanded terms out of order"));
            }
            expanded.insert(k);
        }
        if r.remaining() != 0 {
            return Err(r.err(format!("{} bytes after the last entry", r.remaining())));
        }
        Ok(CorpusStats {
            schema,
            max_expansions,
            shard_docs,
            fields,
            terms,
            expanded,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{FieldFlags, FieldType};

    fn sample() -> CorpusStats {
        let mut schema = Schema::new();
        schema
            .add_field("body", FieldType::Text, FieldFlags::default())
            .unwrap();
        let mut s = CorpusStats::new(&schema, 1024, vec![7]);
        s.set_total_tokens(FieldId(0), 40);
        s.set_doc_freq(FieldId(0), b"fox", 3);
        s.set_doc_freq(FieldId(0), b"", 0);
        s.add_expanded(FieldId(0), &[b"fo".to_vec(), b"fox".to_vec()]);
        s
    }

    #[test]
    fn round_trips_and_every_damage_is_an_error() {
        let s = sample();
        let blob = s.encode();
        assert_eq!(CorpusStats::decode(&blob).unwrap(), s);
        for cut in 0..blob.len() {
            assert!(CorpusStats::decode(&blob[..cut]).is_err(), "cut at {cut}");
        }
        for i in 0..blob.len() {
            for bit in 0..8 {
                let mut b = blob.clone();
                b[i] ^= 1 << bit;
                assert!(CorpusStats::decode(&b).is_err(), "flip {i}.{bit}");
            }
        }
    }

    #[test]
    fn layout_errors_behind_a_good_checksum_are_corrupt() {
        let blob = sample().encode();
        let refooted = |mut b: Vec<u8>| {
            let n = b.len() - 4;
            let crc = crc32fast::hash(&b[..n]);
            b[n..].copy_from_slice(&crc.to_le_bytes());
            b
        };
        // A version this build does not know, intact.
        let mut newer = blob.clone();
        newer[4] = 2;
        assert!(matches!(
            CorpusStats::decode(&refooted(newer)),
            Err(Error::UnsupportedVersion {
                found: 2,
                supported: 1,
                ..
            })
        ));
        // No shard; an absurd count; a trailing byte.
        let shards_at = 8 + 4 + 8;
        let mut none = blob[..shards_at].to_vec();
        none.extend_from_slice(&0u32.to_le_bytes());
        none.extend_from_slice(&blob[shards_at + 4 + 8..]);
        for bad in [
            none,
            {
                let mut b = blob.clone();
                b[shards_at..shards_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
                b
            },
            {
                let mut b = blob.clone();
                b.insert(b.len() - 4, 0);
                b
            },
        ] {
            let e = CorpusStats::decode(&refooted(bad)).unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{e}");
        }
    }

    #[test]
    fn merge_sums_and_refuses_what_does_not_match() {
        let a = sample();
        let mut b = sample();
        b.shard_docs = vec![5];
        b.set_total_tokens(FieldId(0), 2);
        b.set_doc_freq(FieldId(0), b"fox", 1);
        b.expanded.clear();
        b.add_expanded(FieldId(0), &[b"foe".to_vec()]);
        let m = CorpusStats::merge(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(m.shard_docs(), [7, 5]);
        assert_eq!(m.doc_count(), 12);
        assert_eq!(m.shard_base(1), Some(7));
        assert_eq!(m.shard_base(2), None);
        assert_eq!(m.total_tokens(FieldId(0)), Some(42));
        assert_eq!(m.doc_freq(FieldId(0), b"fox"), Some(4));
        assert_eq!(
            m.expanded_from(FieldId(0), b"").collect::<Vec<_>>(),
            [&b"fo"[..], b"foe", b"fox"]
        );
        assert!(CorpusStats::merge(&[]).is_err());
        let mut other = b.clone();
        other.set_doc_freq(FieldId(0), b"cat", 1);
        assert!(CorpusStats::merge(&[a.clone(), other]).is_err());
        let mut other = b.clone();
        other.max_expansions = 3;
        assert!(CorpusStats::merge(&[a.clone(), other]).is_err());
        let mut other = b;
        other.schema ^= 1;
        assert!(CorpusStats::merge(&[a, other]).is_err());
    }
}
