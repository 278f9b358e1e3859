//! Posting lists: where a block is encoded and where it is decoded.
//!
//! A term's postings are its documents in ascending order with their term
//! frequencies. A list of `n` documents is cut into `ceil(n / BLOCK_LEN)`
//! blocks. Every block but a partial last one is *packed*: the doc-id deltas
//! with `bitpacking`'s strictly-sorted `BitPacker4x` codec, then the
//! frequencies minus one with the plain codec, so a reader can decode the
//! doc ids without touching the frequencies. A partial last block (the
//! *tail*) is varint pairs.
//!
//! A list shorter than one block is only its tail. A longer one starts with
//! skip data: per block its last doc id, the offset of its bytes and of its
//! *impacts* (the Pareto frontier of (term frequency, norm byte) pairs in the
//! block); and every [`L2_BLOCKS`] blocks a second-level entry whose impacts
//! summarise those blocks. Impacts are query-independent; scorers turn them
//! into score bounds with the query's corpus-wide statistics.
//!
//! Region layout for `n >= BLOCK_LEN` (all integers little-endian):
//!
//! ```text
//! impacts_len u32 | blocks_len u32
//! skip:   nblocks  x { last_doc u32, block_off u32, impact_off u32 }
//! level2: nl2      x { last_doc u32, impact_off u32 }
//! impacts: impacts_len bytes, each entry: count u8, count x { tf varint, norm u8 }
//! blocks: packed blocks { doc_bits u8, tf_bits u8, docs, tfs }, then the tail
//! tail:   (n % BLOCK_LEN) x { doc delta varint, tf varint }
//! ```
//!
//! Doc deltas in the tail are `doc - prev - 1`, with `prev` the last doc of
//! the previous block (the first doc of a list is stored as itself).

use bitpacking::{BitPacker, BitPacker4x};

/// Documents per packed block. 128 is `BitPacker4x`'s block; see
/// `docs/FORMAT.md` for the measurement behind the choice.
pub const BLOCK_LEN: usize = BitPacker4x::BLOCK_LEN;
/// Blocks summarised by one second-level skip entry.
pub const L2_BLOCKS: usize = 32;
/// Longest stored impact frontier; a longer one is replaced by the single
/// dominating pair (max tf, min norm).
pub const MAX_IMPACTS: usize = 12;

const SKIP_ENTRY: usize = 12;
const L2_ENTRY: usize = 8;
const REGION_HEADER: usize = 8;

/// A (term frequency, norm byte) pair: a document with this tf and this
/// length code, or one dominated by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Impact {
    /// Term frequency.
    pub tf: u32,
    /// Norm byte (smaller means shorter, which scores higher).
    pub norm: u8,
}

/// The Pareto frontier of `pairs`: no kept pair has both a smaller tf and a
/// larger norm than another. Sorted by tf descending. Capped at
/// [`MAX_IMPACTS`] by falling back to the dominating pair.
pub fn pareto_frontier(pairs: &mut Vec<Impact>) {
    pairs.sort_unstable_by(|a, b| b.tf.cmp(&a.tf).then(a.norm.cmp(&b.norm)));
    let mut min_norm = u16::MAX;
    pairs.retain(|p| {
        if u16::from(p.norm) < min_norm {
            min_norm = u16::from(p.norm);
            true
        } else {
            false
        }
    });
    if pairs.len() > MAX_IMPACTS {
        let tf = pairs[0].tf;
        let norm = pairs[pairs.len() - 1].norm;
        pairs.clear();
        pairs.push(Impact { tf, norm });
    }
}

fn put_impacts(out: &mut Vec<u8>, impacts: &[Impact]) {
    out.push(impacts.len() as u8);
    for i in impacts {
        super::put_varint(out, u64::from(i.tf));
        out.push(i.norm);
    }
}

/// Why a posting list could not be encoded.
#[derive(Debug)]
pub struct TooLarge;

/// Appends the postings region of one term. `docs` is strictly ascending,
/// `tfs[i] >= 1` is the frequency in `docs[i]`, and `norm_of(doc)` gives the
/// document's norm byte (used only for impacts).
pub fn encode(
    docs: &[u32],
    tfs: &[u32],
    norm_of: impl Fn(u32) -> u8,
    out: &mut Vec<u8>,
) -> Result<(), TooLarge> {
    debug_assert_eq!(docs.len(), tfs.len());
    debug_assert!(docs.windows(2).all(|w| w[0] < w[1]));
    let n = docs.len();
    if n < BLOCK_LEN {
        encode_tail(docs, tfs, None, out);
        return Ok(());
    }
    let nblocks = n.div_ceil(BLOCK_LEN);
    let nl2 = nblocks.div_ceil(L2_BLOCKS);
    let packer = BitPacker4x::new();

    let mut impacts = Vec::new();
    let mut blocks = Vec::new();
    let mut skip = Vec::with_capacity(nblocks * SKIP_ENTRY);
    let mut l2 = Vec::with_capacity(nl2 * L2_ENTRY);
    let mut pairs = Vec::new();
    let mut l2_pairs = Vec::new();
    let mut buf = [0u32; BLOCK_LEN];
    let mut packed = [0u8; 4 * BLOCK_LEN];
    for b in 0..nblocks {
        let lo = b * BLOCK_LEN;
        let hi = (lo + BLOCK_LEN).min(n);
        let prev = if b == 0 { None } else { Some(docs[lo - 1]) };
        let block_off = u32::try_from(blocks.len()).map_err(|_| TooLarge)?;
        if hi - lo == BLOCK_LEN {
            let d = &docs[lo..hi];
            let doc_bits = packer.num_bits_strictly_sorted(prev, d);
            for (o, &t) in buf.iter_mut().zip(&tfs[lo..hi]) {
                *o = t - 1;
            }
            let tf_bits = packer.num_bits(&buf);
            blocks.push(doc_bits);
            blocks.push(tf_bits);
            let len = packer.compress_strictly_sorted(prev, d, &mut packed, doc_bits);
            blocks.extend_from_slice(&packed[..len]);
            let len = packer.compress(&buf, &mut packed, tf_bits);
            blocks.extend_from_slice(&packed[..len]);
        } else {
            encode_tail(&docs[lo..hi], &tfs[lo..hi], prev, &mut blocks);
        }
        pairs.clear();
        pairs.extend(
            docs[lo..hi]
                .iter()
                .zip(&tfs[lo..hi])
                .map(|(&d, &tf)| Impact {
                    tf,
                    norm: norm_of(d),
                }),
        );
        pareto_frontier(&mut pairs);
        l2_pairs.extend_from_slice(&pairs);
        let impact_off = u32::try_from(impacts.len()).map_err(|_| TooLarge)?;
        put_impacts(&mut impacts, &pairs);
        skip.extend_from_slice(&docs[hi - 1].to_le_bytes());
        skip.extend_from_slice(&block_off.to_le_bytes());
        skip.extend_from_slice(&impact_off.to_le_bytes());
        if (b + 1) % L2_BLOCKS == 0 || b + 1 == nblocks {
            pareto_frontier(&mut l2_pairs);
            let impact_off = u32::try_from(impacts.len()).map_err(|_| TooLarge)?;
            put_impacts(&mut impacts, &l2_pairs);
            l2_pairs.clear();
            l2.extend_from_slice(&docs[hi - 1].to_le_bytes());
            l2.extend_from_slice(&impact_off.to_le_bytes());
        }
    }
    let impacts_len = u32::try_from(impacts.len()).map_err(|_| TooLarge)?;
    let blocks_len = u32::try_from(blocks.len()).map_err(|_| TooLarge)?;
    out.extend_from_slice(&impacts_len.to_le_bytes());
    out.extend_from_slice(&blocks_len.to_le_bytes());
    out.extend_from_slice(&skip);
    out.extend_from_slice(&l2);
    out.extend_from_slice(&impacts);
    out.extend_from_slice(&blocks);
    Ok(())
}

fn encode_tail(docs: &[u32], tfs: &[u32], prev: Option<u32>, out: &mut Vec<u8>) {
    let mut prev = prev;
    for (&d, &tf) in docs.iter().zip(tfs) {
        let delta = match prev {
            None => d,
            Some(p) => d - p - 1,
        };
        super::put_varint(out, u64::from(delta));
        super::put_varint(out, u64::from(tf));
        prev = Some(d);
    }
}

/// Why a region could not be decoded. The reader turns it into a
/// `Corrupt` error naming the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPostings(pub &'static str);

/// The parsed layout of one term's postings region. Cheap to build: it
/// checks the section lengths and borrows the slices; blocks are checked as
/// they are decoded.
#[derive(Clone, Copy, Debug)]
pub struct Postings<'a> {
    df: u32,
    max_doc: u32,
    skip: &'a [u8],
    l2: &'a [u8],
    impacts: &'a [u8],
    blocks: &'a [u8],
}

#[inline]
fn le32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

impl<'a> Postings<'a> {
    /// Parses the region of a term with document frequency `df` in a segment
    /// of `max_doc` documents.
    pub fn parse(region: &'a [u8], df: u32, max_doc: u32) -> Result<Postings<'a>, BadPostings> {
        if df == 0 || df > max_doc {
            return Err(BadPostings("document frequency out of range"));
        }
        let n = df as usize;
        if n < BLOCK_LEN {
            return Ok(Postings {
                df,
                max_doc,
                skip: &[],
                l2: &[],
                impacts: &[],
                blocks: region,
            });
        }
        let nblocks = n.div_ceil(BLOCK_LEN);
        let nl2 = nblocks.div_ceil(L2_BLOCKS);
        if region.len() < REGION_HEADER {
            return Err(BadPostings("truncated postings header"));
        }
        let impacts_len = le32(region, 0) as usize;
        let blocks_len = le32(region, 4) as usize;
        let skip_end = REGION_HEADER + nblocks * SKIP_ENTRY;
        let l2_end = skip_end + nl2 * L2_ENTRY;
        let impacts_end = l2_end
            .checked_add(impacts_len)
            .ok_or(BadPostings("impacts length overflows"))?;
        let blocks_end = impacts_end
            .checked_add(blocks_len)
            .ok_or(BadPostings("blocks length overflows"))?;
        if blocks_end > region.len() {
            return Err(BadPostings("postings region truncated"));
        }
        Ok(Postings {
            df,
            max_doc,
            skip: &region[REGION_HEADER..skip_end],
            l2: &region[skip_end..l2_end],
            impacts: &region[l2_end..impacts_end],
            blocks: &region[impacts_end..blocks_end],
        })
    }

    /// Document frequency.
    pub fn df(&self) -> u32 {
        self.df
    }

    /// Number of blocks (the last may be a partial, varint-coded tail).
    pub fn num_blocks(&self) -> usize {
        (self.df as usize).div_ceil(BLOCK_LEN)
    }

    /// Documents in block `b`.
    pub fn block_len(&self, b: usize) -> usize {
        let n = self.df as usize;
        (n - b * BLOCK_LEN).min(BLOCK_LEN)
    }

    /// Whether block `b` is bitpacked (every block but a partial tail).
    pub fn is_packed(&self, b: usize) -> bool {
        self.block_len(b) == BLOCK_LEN
    }

    /// Whether the list has skip data (at least one full block).
    pub fn has_skip_data(&self) -> bool {
        !self.skip.is_empty()
    }

    /// Last doc id of block `b`, from skip data. `None` for a list without
    /// skip data (decode it instead).
    #[inline]
    pub fn last_doc(&self, b: usize) -> Option<u32> {
        if self.skip.is_empty() {
            None
        } else {
            Some(le32(self.skip, b * SKIP_ENTRY))
        }
    }

    /// Number of second-level entries.
    pub fn num_l2(&self) -> usize {
        self.l2.len() / L2_ENTRY
    }

    /// Last doc id covered by second-level entry `i`.
    pub fn l2_last_doc(&self, i: usize) -> u32 {
        le32(self.l2, i * L2_ENTRY)
    }

    /// Impacts of block `b` (skip data only).
    pub fn block_impacts(&self, b: usize, out: &mut Vec<Impact>) -> Result<(), BadPostings> {
        let off = le32(self.skip, b * SKIP_ENTRY + 8) as usize;
        read_impacts(self.impacts, off, out)
    }

    /// Impacts summarising the blocks of second-level entry `i`.
    pub fn l2_impacts(&self, i: usize, out: &mut Vec<Impact>) -> Result<(), BadPostings> {
        let off = le32(self.l2, i * L2_ENTRY + 4) as usize;
        read_impacts(self.impacts, off, out)
    }

    /// Decodes the doc ids of block `b` into `docs` (and, for a tail, the
    /// frequencies into `tfs` too, since they are interleaved). Returns the
    /// number of documents.
    pub fn decode_docs(
        &self,
        b: usize,
        docs: &mut [u32; BLOCK_LEN],
        tfs: &mut [u32; BLOCK_LEN],
    ) -> Result<usize, BadPostings> {
        let len = self.block_len(b);
        let prev = if b == 0 {
            None
        } else {
            Some(le32(self.skip, (b - 1) * SKIP_ENTRY))
        };
        if len < BLOCK_LEN {
            let start = if self.skip.is_empty() {
                0
            } else {
                le32(self.skip, b * SKIP_ENTRY + 4) as usize
            };
            return self.decode_tail(start, prev, len, docs, tfs);
        }
        let off = le32(self.skip, b * SKIP_ENTRY + 4) as usize;
        let (doc_bits, _, data) = self.packed_block(off)?;
        let last = le32(self.skip, b * SKIP_ENTRY);
        // Strict-delta decoding adds at least one per document, so without
        // wrap-around the list is strictly ascending. A block adds less than
        // BLOCK_LEN << doc_bits in total, so when that is at most 2^31 and the
        // start is below 2^31 it cannot wrap. Then the recorded last doc
        // bounds every doc, and `last < max_doc` bounds them all.
        let no_wrap = (BLOCK_LEN as u64) << doc_bits <= 1 << 31;
        if !no_wrap || prev.unwrap_or(0) >= 1 << 31 || last >= self.max_doc {
            return self.decode_checked(prev, doc_bits, data, last, docs);
        }
        BitPacker4x::new().decompress_strictly_sorted(prev, data, docs, doc_bits);
        if docs[BLOCK_LEN - 1] != last {
            return Err(BadPostings("block's last doc disagrees with skip data"));
        }
        Ok(BLOCK_LEN)
    }

    /// Decodes the whole list, appending to `docs` and `tfs`.
    pub fn decode_all(&self, docs: &mut Vec<u32>, tfs: &mut Vec<u32>) -> Result<(), BadPostings> {
        let mut d = [0u32; BLOCK_LEN];
        let mut t = [0u32; BLOCK_LEN];
        for b in 0..self.num_blocks() {
            let n = self.decode_docs(b, &mut d, &mut t)?;
            if self.is_packed(b) {
                self.decode_tfs(b, &mut t)?;
            }
            docs.extend_from_slice(&d[..n]);
            tfs.extend_from_slice(&t[..n]);
        }
        Ok(())
    }

    /// Decodes the term frequencies of packed block `b` into `tfs`.
    pub fn decode_tfs(&self, b: usize, tfs: &mut [u32; BLOCK_LEN]) -> Result<(), BadPostings> {
        let off = le32(self.skip, b * SKIP_ENTRY + 4) as usize;
        let (doc_bits, tf_bits, data) = self.packed_block(off)?;
        let doc_bytes = BLOCK_LEN * doc_bits as usize / 8;
        BitPacker4x::new().decompress(&data[doc_bytes..], tfs, tf_bits);
        for t in tfs.iter_mut() {
            *t = t.wrapping_add(1);
        }
        Ok(())
    }

    /// The bit widths and bytes of the packed block at `off`, checked.
    #[inline]
    fn packed_block(&self, off: usize) -> Result<(u8, u8, &'a [u8]), BadPostings> {
        let head = self
            .blocks
            .get(off..off + 2)
            .ok_or(BadPostings("block offset out of range"))?;
        let (doc_bits, tf_bits) = (head[0], head[1]);
        if doc_bits > 32 || tf_bits > 32 {
            return Err(BadPostings("bit width over 32"));
        }
        let size = BLOCK_LEN * (doc_bits as usize + tf_bits as usize) / 8;
        let data = self
            .blocks
            .get(off + 2..off + 2 + size)
            .ok_or(BadPostings("block extends past its region"))?;
        Ok((doc_bits, tf_bits, data))
    }

    /// The slow, fully checked decode of a packed doc block.
    #[cold]
    fn decode_checked(
        &self,
        prev: Option<u32>,
        doc_bits: u8,
        data: &[u8],
        last: u32,
        docs: &mut [u32; BLOCK_LEN],
    ) -> Result<usize, BadPostings> {
        let mut deltas = [0u32; BLOCK_LEN];
        BitPacker4x::new().decompress(data, &mut deltas, doc_bits);
        let mut cur: u64 = match prev {
            None => u64::from(deltas[0]),
            Some(p) => u64::from(p) + u64::from(deltas[0]) + 1,
        };
        docs[0] = cur as u32;
        for i in 1..BLOCK_LEN {
            cur += u64::from(deltas[i]) + 1;
            if cur > u64::from(last) {
                return Err(BadPostings("doc ids past the block's last doc"));
            }
            docs[i] = cur as u32;
        }
        if cur != u64::from(last) || last >= self.max_doc {
            return Err(BadPostings("block's last doc out of range"));
        }
        Ok(BLOCK_LEN)
    }

    fn decode_tail(
        &self,
        start: usize,
        prev: Option<u32>,
        len: usize,
        docs: &mut [u32; BLOCK_LEN],
        tfs: &mut [u32; BLOCK_LEN],
    ) -> Result<usize, BadPostings> {
        let bytes = self.blocks;
        let mut pos = start;
        let mut next: u64 = prev.map_or(0, |p| u64::from(p) + 1);
        for i in 0..len {
            let delta = super::get_varint(bytes, &mut pos).ok_or(BadPostings("bad tail varint"))?;
            let tf = super::get_varint(bytes, &mut pos).ok_or(BadPostings("bad tail varint"))?;
            let doc = next + delta;
            if doc >= u64::from(self.max_doc) || tf == 0 || tf > u64::from(u32::MAX) {
                return Err(BadPostings("tail doc or frequency out of range"));
            }
            docs[i] = doc as u32;
            tfs[i] = tf as u32;
            next = doc + 1;
        }
        Ok(len)
    }
}

fn read_impacts(bytes: &[u8], off: usize, out: &mut Vec<Impact>) -> Result<(), BadPostings> {
    out.clear();
    let mut pos = off;
    let count = *bytes
        .get(pos)
        .ok_or(BadPostings("impact offset out of range"))? as usize;
    pos += 1;
    if count == 0 || count > MAX_IMPACTS {
        return Err(BadPostings("impact count out of range"));
    }
    for _ in 0..count {
        let tf = super::get_varint(bytes, &mut pos).ok_or(BadPostings("bad impact varint"))?;
        let norm = *bytes.get(pos).ok_or(BadPostings("truncated impacts"))?;
        pos += 1;
        out.push(Impact {
            tf: u32::try_from(tf).map_err(|_| BadPostings("impact tf too large"))?,
            norm,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(docs: &[u32], tfs: &[u32], max_doc: u32) {
        let norm_of = |d: u32| (d % 7) as u8;
        let mut region = Vec::new();
        encode(docs, tfs, norm_of, &mut region).unwrap();
        let p = Postings::parse(&region, docs.len() as u32, max_doc).unwrap();
        let mut got_docs = Vec::new();
        let mut got_tfs = Vec::new();
        let mut d = [0u32; BLOCK_LEN];
        let mut t = [0u32; BLOCK_LEN];
        let mut impacts = Vec::new();
        for b in 0..p.num_blocks() {
            let n = p.decode_docs(b, &mut d, &mut t).unwrap();
            if p.is_packed(b) {
                p.decode_tfs(b, &mut t).unwrap();
            }
            got_docs.extend_from_slice(&d[..n]);
            got_tfs.extend_from_slice(&t[..n]);
            if p.has_skip_data() {
                assert_eq!(p.last_doc(b), Some(d[n - 1]));
                p.block_impacts(b, &mut impacts).unwrap();
                // Every document is dominated by some impact of its block.
                for i in 0..n {
                    assert!(
                        impacts
                            .iter()
                            .any(|im| im.tf >= t[i] && im.norm <= norm_of(d[i]))
                    );
                }
            }
        }
        assert_eq!(got_docs, docs);
        assert_eq!(got_tfs, tfs);
        for i in 0..p.num_l2() {
            p.l2_impacts(i, &mut impacts).unwrap();
            assert!(!impacts.is_empty());
        }
    }

    #[test]
    fn lengths_around_block_boundaries() {
        for n in [1usize, 2, 127, 128, 129, 255, 256, 257, 128 * 33 + 5] {
            let docs: Vec<u32> = (0..n as u32).map(|i| i * 5 + (i % 5)).collect();
            let tfs: Vec<u32> = (0..n as u32).map(|i| 1 + (i * 7919) % 40).collect();
            round_trip(&docs, &tfs, docs[n - 1] + 1);
        }
        // Dense and extreme gaps, large tf.
        let docs: Vec<u32> = (0..300).collect();
        round_trip(&docs, &vec![u32::MAX; 300], 300);
        let docs: Vec<u32> = (0..200u32).map(|i| i * 10_000_000).collect();
        round_trip(&docs, &vec![1; 200], u32::MAX);
    }

    #[test]
    fn frontier_keeps_only_undominated_pairs() {
        let mut v = vec![
            Impact { tf: 1, norm: 5 },
            Impact { tf: 3, norm: 9 },
            Impact { tf: 2, norm: 5 },
            Impact { tf: 3, norm: 7 },
            Impact { tf: 1, norm: 1 },
        ];
        pareto_frontier(&mut v);
        assert_eq!(
            v,
            vec![
                Impact { tf: 3, norm: 7 },
                Impact { tf: 2, norm: 5 },
                Impact { tf: 1, norm: 1 }
            ]
        );
        let mut long: Vec<Impact> = (0..40)
            .map(|i| Impact {
                tf: i + 1,
                norm: i as u8,
            })
            .collect();
        pareto_frontier(&mut long);
        assert_eq!(long, vec![Impact { tf: 40, norm: 0 }]);
    }

    #[test]
    fn damaged_regions_error_instead_of_panicking() {
        let docs: Vec<u32> = (0..700u32).map(|i| i * 2).collect();
        let tfs = vec![2u32; 700];
        let mut region = Vec::new();
        encode(&docs, &tfs, |_| 3, &mut region).unwrap();
        let mut d = [0u32; BLOCK_LEN];
        let mut t = [0u32; BLOCK_LEN];
        let mut im = Vec::new();
        for cut in 0..region.len() {
            if let Ok(p) = Postings::parse(&region[..cut], 700, 1400) {
                for b in 0..p.num_blocks() {
                    let _ = p.decode_docs(b, &mut d, &mut t);
                    let _ = p.block_impacts(b, &mut im);
                }
            }
        }
        for i in 0..region.len() {
            let mut r = region.clone();
            r[i] ^= 0xa5;
            if let Ok(p) = Postings::parse(&r, 700, 1400) {
                for b in 0..p.num_blocks() {
                    if let Ok(n) = p.decode_docs(b, &mut d, &mut t) {
                        assert!(d[..n].iter().all(|&x| x < 1400));
                    }
                    if p.is_packed(b) {
                        let _ = p.decode_tfs(b, &mut t);
                    }
                    let _ = p.block_impacts(b, &mut im);
                }
            }
        }
    }

    proptest! {
        #[test]
        fn random_lists_round_trip(mut docs in proptest::collection::btree_set(0u32..50_000, 1..1200)
            .prop_map(|s| s.into_iter().collect::<Vec<_>>()),
            seed in any::<u32>()) {
            let tfs: Vec<u32> = docs.iter().map(|&d| 1 + (d ^ seed) % 17).collect();
            docs.dedup();
            round_trip(&docs, &tfs, 50_000);
        }
    }
}
