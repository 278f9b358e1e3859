//! The entry points of the fuzz targets: each takes arbitrary bytes, feeds
//! them to one reader of quarry through its public API and exercises
//! everything that reader serves. None may panic, loop or allocate without
//! bound, whatever the bytes; errors are the expected outcome for most
//! inputs.
//!
//! The same file is compiled into the test suite (`tests/fuzz_smoke.rs`),
//! which runs every entry point over the seed corpus and over every crash
//! kept under `fuzz/regressions/`, so a crash found once stays fixed.
//!
//! Files carry a CRC-32 footer, which a mutated input would fail almost
//! always; the entry points rewrite it ([`with_valid_crc`]) so that the
//! mutations reach the parsers behind the checksum.

use std::path::Path;
use std::sync::OnceLock;

use quarry::format::manifest::{self, Manifest, SegmentEntry};
use quarry::format::postings::{BLOCK_LEN, Impact, Postings};
use quarry::format::{self, segment};
use quarry::read::{ReadMode, SegmentReader, StoredCache};
use quarry::{
    CorpusStats, ExecMode, FieldId, FieldType, Occur, Operator, Query, Schema, SearchOptions,
    SearchRequest, Searcher, SortKey, SortSpec, TotalMode,
};

mod capi;
pub use capi::capi;

/// The manifest of the committed golden index: its schema is the one every
/// segment input is read against (seeds come from that index and from
/// fresh indexes of the same schema).
pub const GOLDEN_MANIFEST: &[u8] =
    include_bytes!("../../tests/golden/v1/manifest-0000000000000006.qmf");

/// The schema segment inputs are read against.
pub fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        Manifest::decode(Path::new("golden manifest"), GOLDEN_MANIFEST)
            .expect("the golden manifest decodes")
            .schema
    })
}

/// `bytes` with its last four bytes replaced by the CRC-32 of the rest
/// (unchanged when too short to hold a header and a footer).
pub fn with_valid_crc(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if v.len() >= format::HEADER_LEN + format::FOOTER_LEN {
        v.truncate(v.len() - format::FOOTER_LEN);
        format::write_footer(&mut v);
    }
    v
}

/// What an entry point reached, so tests can tell that a seed is read
/// through and not rejected at the door.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reached {
    /// The input was accepted by the reader it was fed to.
    pub opened: bool,
    /// Posting blocks decoded without an error.
    pub blocks: usize,
    /// Of them, packed (full) blocks.
    pub packed_blocks: usize,
    /// Stored documents decoded.
    pub stored_docs: usize,
    /// Sort column ords read.
    pub ords: usize,
    /// Searches that returned hits without an error.
    pub searches: usize,
}

thread_local! {
    /// A directory per thread for the files an input is written to, reused
    /// by every input on that thread.
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("a scratch directory");
}

/// Fuzz target `segment`: `data` is a segment file (read against
/// [`schema`]). Opens it, reads every section (term table and lookups,
/// postings with skip data and impacts, norms, stored blocks, sort
/// columns), then publishes it in a one-segment index with some deletes and
/// runs queries over every execution path, sorted and ranked.
pub fn segment(data: &[u8]) -> Reached {
    let bytes = with_valid_crc(data);
    let mut reached = Reached::default();
    SCRATCH.with(|dir| {
        let dir = dir.path();
        for e in std::fs::read_dir(dir).expect("scratch directory").flatten() {
            std::fs::remove_file(e.path()).expect("scratch file removed");
        }
        let id = 1;
        let path = dir.join(manifest::segment_name(id));
        std::fs::write(&path, &bytes).expect("scratch file written");
        let Ok(reader) = SegmentReader::open(&path, schema(), bytes.len() as u64, ReadMode::Heap)
        else {
            return;
        };
        reached.opened = true;
        exercise_segment(&reader, &mut reached);

        // Delete every third document (by the input's length, so the
        // pattern varies), then search the segment as an index.
        let doc_count = reader.doc_count();
        let mut bits = vec![0u64; (doc_count as usize).div_ceil(64)];
        for d in (bytes.len() as u32 % 3..doc_count).step_by(3) {
            bits[(d / 64) as usize] |= 1 << (d % 64);
        }
        let del_count = bits.iter().map(|w| w.count_ones()).sum();
        let del_gen = u64::from(del_count > 0);
        if del_gen > 0 {
            let t = manifest::encode_tombstones(&bits, doc_count);
            std::fs::write(dir.join(manifest::tombstone_name(id, del_gen)), t)
                .expect("scratch file written");
        }
        let m = Manifest {
            generation: 1,
            next_segment_id: id + 1,
            schema: schema().clone(),
            segments: vec![SegmentEntry {
                id,
                doc_count,
                del_count,
                del_gen,
                file_len: bytes.len() as u64,
            }],
        };
        std::fs::write(dir.join(manifest::manifest_name(1)), m.encode())
            .expect("scratch file written");
        let queries = queries(&reader);
        drop(reader);
        if let Ok(searcher) = Searcher::open(dir) {
            search_all(&searcher, &queries, bytes.len(), &mut reached);
        }
    });
    reached
}

/// Reads every section of an open segment.
fn exercise_segment(reader: &SegmentReader, reached: &mut Reached) {
    let mut impacts: Vec<Impact> = Vec::new();
    for (f, def) in schema().fields().iter().enumerate() {
        let field = FieldId(f as u16);
        let mut terms = reader.terms(field);
        let mut keys = Vec::new();
        while let Ok(Some((key, info))) = terms.advance() {
            keys.push(key.to_vec());
            if let Ok(p) = reader.postings(&info) {
                exercise_postings(&p, &mut impacts, reached);
                let (mut docs, mut tfs, mut all) = (Vec::new(), Vec::new(), Vec::new());
                if let (Ok(Some(pos)), Ok(())) =
                    (reader.positions(&info), p.decode_all(&mut docs, &mut tfs))
                {
                    let _ = pos.decode_all(&tfs, &mut all);
                }
            }
        }
        for (i, key) in keys.iter().enumerate() {
            let _ = reader.term(field, key);
            let _ = reader.term_at(field, i as u32);
        }
        // Keys that are in no dictionary, around the ends of the range.
        for key in [&b""[..], b"\0", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff"] {
            let _ = reader.term(field, key);
        }
        if let Some(norms) = reader.norms(field) {
            assert_eq!(norms.len(), reader.doc_count() as usize);
        }
        if let Some(col) = reader.sort_column(field) {
            for d in 0..reader.doc_count() {
                let o = col.ord(d);
                reached.ords += 1;
                if o < col.cardinality {
                    let _ = col.value(o);
                    match def.ty {
                        FieldType::String => {
                            let _ = col.find(0, col.str_at(o));
                        }
                        _ => {
                            let _ = col.find(col.numeric_key(o).unwrap_or(0), "");
                        }
                    }
                }
            }
            for b in 0..col.num_blocks() {
                let _ = col.block_bounds(b);
            }
            let _ = col.find(u64::MAX, "\u{10ffff}");
            let _ = col.missing();
        }
    }
    // In order through one cache (each block decompressed once), then the
    // values decoded from the bytes as `SegmentReader::stored` does.
    let mut cache = StoredCache::default();
    for d in 0..reader.doc_count() {
        if let Ok(bytes) = reader.stored_bytes(d, &mut cache)
            && segment::get_stored_values(bytes).is_some()
        {
            reached.stored_docs += 1;
        }
    }
    for d in [0, reader.doc_count().saturating_sub(1)] {
        let _ = reader.stored(d);
    }
    let _ = reader.stored_bytes(reader.doc_count(), &mut cache);
    let _ = reader.section_sizes();
}

/// Decodes every block of a posting list with its skip data and impacts.
fn exercise_postings(p: &Postings<'_>, impacts: &mut Vec<Impact>, reached: &mut Reached) {
    let mut docs = [0u32; BLOCK_LEN];
    let mut tfs = [0u32; BLOCK_LEN];
    let factors: [f32; 256] = std::array::from_fn(|n| (1.0 + n as f32).recip());
    for b in 0..p.num_blocks() {
        let _ = p.last_doc(b);
        if p.has_skip_data() {
            impacts.clear();
            let _ = p.block_impacts(b, impacts);
            let _ = p.block_best(b, &factors);
        }
        if p.decode_docs(b, &mut docs, &mut tfs).is_ok() {
            reached.blocks += 1;
            if p.is_packed(b) && p.decode_tfs(b, &mut tfs).is_ok() {
                reached.packed_blocks += 1;
            }
        }
    }
    for i in 0..p.num_l2() {
        let _ = p.l2_last_doc(i);
        impacts.clear();
        let _ = p.l2_impacts(i, impacts);
        let _ = p.l2_best(i, &factors);
    }
    let (mut all_docs, mut all_tfs) = (Vec::new(), Vec::new());
    let _ = p.decode_all(&mut all_docs, &mut all_tfs);
}

/// Queries over the segment's own terms: its first, last and most frequent
/// body terms alone, in conjunction, disjunction and a boolean with a
/// filter and an exclusion.
fn queries(reader: &SegmentReader) -> Vec<Query> {
    let fields = schema().fields();
    let field = |name: &str| {
        FieldId(
            fields
                .iter()
                .position(|d| d.name == name)
                .expect("the golden schema has the field") as u16,
        )
    };
    let (body, cat) = (field("body"), field("category"));
    let n = reader.num_terms(body);
    let mut picks: Vec<u32> = [0, n / 2, n.saturating_sub(1)]
        .into_iter()
        .filter(|&i| i < n)
        .collect();
    if let Some(best) = (0..n)
        .filter_map(|i| reader.term_at(body, i).ok().map(|(_, t)| (t.df, i)))
        .max()
    {
        picks.push(best.1);
    }
    let words: Vec<String> = picks
        .iter()
        .filter_map(|&i| reader.term_at(body, i).ok())
        .map(|(k, _)| String::from_utf8_lossy(&k).into_owned())
        .collect();
    let cat_term = (reader.num_terms(cat) > 0)
        .then(|| reader.term_at(cat, 0).ok())
        .flatten()
        .map(|(k, _)| String::from_utf8_lossy(&k).into_owned())
        .unwrap_or_default();
    let all = words.join(" ");
    let mut out: Vec<Query> = words.iter().map(|w| Query::term(body, w)).collect();
    out.push(Query::matching(body, &all, Operator::And));
    out.push(Query::matching(body, &all, Operator::Or));
    out.push(
        Query::boolean()
            .add(Occur::Should, Query::matching(body, &all, Operator::Or))
            .add(Occur::Filter, Query::term(cat, &cat_term))
            .add(
                Occur::MustNot,
                Query::term(body, words.first().map_or("", |w| w.as_str())),
            ),
    );
    out
}

/// Runs every query on every path, ranked (with an exact count and with a
/// lower bound) and sorted by one sortable field (which one, and in which
/// direction, varies with `pick`).
fn search_all(searcher: &Searcher, queries: &[Query], pick: usize, reached: &mut Reached) {
    let sortable: Vec<FieldId> = (searcher.schema().fields().iter().enumerate())
        .filter(|(_, d)| d.flags.sortable)
        .map(|(f, _)| FieldId(f as u16))
        .collect();
    let mut spec = SortSpec::new();
    if let Some(&f) = sortable.get(pick % (sortable.len() + 1)) {
        spec.push(SortKey::Field(f), pick.is_multiple_of(2));
    }
    spec.push(SortKey::Score, pick.is_multiple_of(3));
    let requests = [
        (None, TotalMode::Exact),
        (None, TotalMode::LowerBound),
        (Some(spec), TotalMode::AtLeast(3)),
    ];
    for exec in [ExecMode::Exhaustive, ExecMode::Daat, ExecMode::Auto] {
        let s = searcher.clone().with_options(SearchOptions {
            exec,
            ..SearchOptions::default()
        });
        for q in queries {
            for (sort, total) in &requests {
                let req = SearchRequest {
                    offset: 1,
                    limit: 5,
                    sort: sort.clone(),
                    total: *total,
                };
                if let Ok(hits) = s.search(q, &req) {
                    reached.searches += 1;
                    if exec == ExecMode::Auto {
                        for h in &hits.hits {
                            let _ = s.stored(h.doc);
                        }
                    }
                }
            }
        }
    }
}

/// Fuzz target `postings`: a posting list region on its own. The first
/// eight bytes are its document frequency and the segment's document
/// count, the rest the region.
pub fn postings(data: &[u8]) -> Reached {
    let mut reached = Reached::default();
    let Some((head, region)) = data.split_first_chunk::<8>() else {
        return reached;
    };
    let df = u32::from_le_bytes(head[..4].try_into().expect("4"));
    let max_doc = u32::from_le_bytes(head[4..].try_into().expect("4"));
    // A df beyond what the region could hold at one bit per document is
    // refused by the segment reader's callers long before; cap it so one
    // input cannot ask for billions of blocks (each would still be checked).
    if df as usize > region.len().saturating_mul(8) + BLOCK_LEN {
        return reached;
    }
    if let Ok(p) = Postings::parse(region, df, max_doc) {
        reached.opened = true;
        exercise_postings(&p, &mut Vec::new(), &mut reached);
    }
    reached
}

/// A file's bytes between its header and its checksum: what re-encoding a
/// decoded file must reproduce (the header is stamped with the version
/// this build writes; tombstones have one layout in every version it
/// reads, manifests one from version 3 on).
fn body(file: &[u8]) -> &[u8] {
    &file[8..file.len() - 4]
}

/// Fuzz target `manifest`: a manifest file.
pub fn manifest(data: &[u8]) -> Reached {
    let bytes = with_valid_crc(data);
    let mut reached = Reached::default();
    let path = Path::new("fuzz manifest");
    if let Ok(m) = Manifest::decode(path, &bytes) {
        reached.opened = true;
        let encoded = m.encode();
        if bytes[4..8] == format::FORMAT_VERSION.to_le_bytes() {
            // What decodes must encode back to the same bytes.
            assert_eq!(body(&encoded), body(&bytes), "manifest round trip");
        } else {
            // An older layout (no analyzer names) encodes in the current
            // one, which decodes to the same manifest.
            let again = Manifest::decode(path, &encoded).expect("a re-encoded manifest decodes");
            assert_eq!(again, m, "manifest round trip");
        }
    }
    reached
}

/// Fuzz target `tombstones`: a tombstone file; the first four bytes are the
/// segment's document count.
pub fn tombstones(data: &[u8]) -> Reached {
    let mut reached = Reached::default();
    let Some((head, file)) = data.split_first_chunk::<4>() else {
        return reached;
    };
    let doc_count = u32::from_le_bytes(*head);
    let bytes = with_valid_crc(file);
    if let Ok((bits, del)) = manifest::decode_tombstones(Path::new("fuzz"), &bytes, doc_count) {
        reached.opened = true;
        assert_eq!(bits.len(), (doc_count as usize).div_ceil(64));
        assert_eq!(
            body(&manifest::encode_tombstones(&bits, doc_count)),
            body(&bytes)
        );
        let counted: u32 = bits.iter().map(|w| w.count_ones()).sum();
        assert_eq!(counted, del);
    }
    reached
}

/// Fuzz target `stats`: a corpus statistics blob.
pub fn stats(data: &[u8]) -> Reached {
    let mut reached = Reached::default();
    let bytes = with_valid_crc(data);
    if let Ok(s) = CorpusStats::decode(&bytes) {
        reached.opened = true;
        // The layout has one encoding of each value: what decodes encodes
        // back to the same bytes.
        assert_eq!(s.encode(), bytes);
        // Merging a blob with itself doubles its shards (or overflows).
        if let Ok(m) = CorpusStats::merge(&[s.clone(), s.clone()]) {
            assert_eq!(m.shard_docs().len(), 2 * s.shard_docs().len());
            assert_eq!(m.term_count(), s.term_count());
        }
    }
    reached
}
