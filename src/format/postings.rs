//! Posting lists: where a block is encoded and where it is decoded.
//!
//! A term's postings are its documents in ascending order with their term
//! frequencies. A list of `n` documents is cut into `ceil(n / BLOCK_LEN)`
//! blocks. Every block but a partial last one is *packed* as two patched
//! frame-of-reference runs (`put_pfor`): first the doc-id gaps minus one,
//! then the frequencies minus one, so a reader can decode the doc ids
//! without touching the frequencies. A partial last block (the *tail*) is
//! varint pairs.
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
//! skip:   nblocks  x { last_doc u32, block_delta u16, impact_field u16 }
//! level2: nl2      x { last_doc u32, impact_off u32, block_base u32, impact_base u32 }
//! impacts: per block count x { tf varint, norm u8 }; per level-2 entry u8 count first
//! blocks: packed blocks { pfor(doc gaps), pfor(tfs) }, then the tail
//! presence (version 5 on, a dense list only):
//!         ceil(max_doc / 64) x u64, bit d % 64 of word d / 64 set iff
//!         the list holds doc d
//! pfor:   bits u8, 128 values' low bits packed (16 * bits bytes),
//!         count u8, count x { index u8, high bits varint }
//! tail:   (n % BLOCK_LEN) x { doc delta varint, tf varint }
//! ```
//!
//! A list of at least one document in [`PRESENCE_DIVISOR`] (and at least
//! a block) ends with its *presence bitmap*: whether it holds a document
//! is one bit test, without decoding the block that would hold it, and
//! how many documents several dense lists share (or cover) is a popcount
//! over their words. A reader finds the bitmap by the region's length
//! (the bytes after the blocks are none or exactly the bitmap).
//!
//! A block's bytes start at `block_base + block_delta` of its second-level
//! group (blocks `32g .. 32g + 32`), its impacts at `impact_base +
//! impact_delta`; a group's blocks and impacts always fit in 64 KiB, so the
//! per-block skip entry takes 8 bytes.
//!
//! Doc deltas in the tail are `doc - prev - 1`, with `prev` the last doc of
//! the previous block (the first doc of a list is stored as itself).

use bitpacking::{BitPacker, BitPacker4x};

use crate::kernels::{self, Frontier};

/// Documents per packed block. 128 is `BitPacker4x`'s block; see
/// `docs/FORMAT.md` for the measurement behind the choice.
pub const BLOCK_LEN: usize = BitPacker4x::BLOCK_LEN;
/// Blocks summarised by one second-level skip entry.
pub const L2_BLOCKS: usize = 32;
/// Longest stored impact frontier. A longer one is cut into this many runs
/// of neighbours, each replaced by the corner pair that dominates it (the
/// run's max tf with its min norm).
pub const MAX_IMPACTS: usize = 8;

/// Extra bytes each doc-gap exception is charged when a block's width is
/// chosen. Doc ids are decoded for every block a query touches, and each
/// exception slows that decode; at 1 the index grows about 0.3 % over the
/// smallest encoding while doc decoding runs 1.5x faster (measured on a
/// 200,000-document synthetic corpus: 0.96 -> 0.65 ns per doc; 2 gave no
/// more speed for a larger index).
const DOC_EXCEPTION_PENALTY: usize = 1;

/// A list holding at least one document in this many (and at least
/// [`BLOCK_LEN`]) carries a presence bitmap of `max_doc / 8` bytes: at
/// most 16 bits a posting, about 2.5x what such a list's own postings
/// take (~6 bits a posting at that density). Exact totals of
/// conjunctions whose clauses but the cheapest have one, and of unions
/// with a clause that has one, are then popcounts and bit tests instead
/// of decoded blocks, and candidates are checked against dense clauses
/// before their blocks are decoded (`TermScorer::score_of`; measurements
/// in `docs/perf.md`, "Presence bitmaps").
pub const PRESENCE_DIVISOR: u64 = 16;

/// Whether a list of `df` documents in a segment of `max_doc` carries a
/// presence bitmap ([`PRESENCE_DIVISOR`]).
pub fn has_presence(df: usize, max_doc: u32) -> bool {
    df >= BLOCK_LEN && df as u64 * PRESENCE_DIVISOR >= u64::from(max_doc)
}

/// Bytes of a presence bitmap over `max_doc` documents: whole u64 words.
pub fn presence_len(max_doc: u32) -> usize {
    (max_doc as usize).div_ceil(64) * 8
}

const SKIP_ENTRY: usize = 8;
const L2_ENTRY: usize = 16;
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
/// larger norm than another. Sorted by tf descending (so norm descending).
/// Capped at [`MAX_IMPACTS`] by [`cap_frontier`], which merges runs of
/// neighbours into the pair that dominates each run, so every input pair
/// stays dominated, choosing the runs so that the bound under `factors`
/// (the key factors `1 / (k1 (1 - b + b dl / avgdl))` the segment's own
/// average length gives) stays what the whole frontier gives.
pub fn pareto_frontier(pairs: &mut Vec<Impact>, factors: &[f32; 256]) {
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
    cap_frontier(pairs, factors);
}

/// Merges a frontier longer than [`MAX_IMPACTS`] (sorted by tf descending)
/// into `MAX_IMPACTS` runs of neighbours, each stored as its corner (its
/// first pair's tf, its last pair's norm), which dominates the run.
///
/// A run's corner key `tf * factors[norm]` is at least its pairs' keys, so
/// the stored bound is the largest corner key. The runs are the fewest
/// whose corner keys stay at or under the least threshold that allows
/// `MAX_IMPACTS` runs (greedy from the left: a run grows while its corner
/// stays under the threshold, and keys grow along a run as norms fall);
/// when the frontier's own best key is such a threshold the bound is
/// exact under `factors`. Runs left to spare split the run of the largest
/// corner key in two, so that a query whose average length differs a
/// little from the segment's (several segments, corpus-wide statistics)
/// still finds its best pairs stored as they are.
///
/// Merging neighbours evenly, regardless of keys, left half the blocks of
/// common terms with a bound 0.15 % above their best score on the
/// 200,000-document synthetic corpus; conjunctions of two common terms
/// then decoded 126 lead blocks a query where exact bounds decode 80.
fn cap_frontier(pairs: &mut Vec<Impact>, factors: &[f32; 256]) {
    let n = pairs.len();
    if n <= MAX_IMPACTS {
        return;
    }
    let corner =
        |lo: usize, last: usize| pairs[lo].tf as f32 * factors[usize::from(pairs[last].norm)];
    // Fills `starts` with the starts of the fewest runs whose corners stay
    // at or under `t`; false when more than MAX_IMPACTS are needed.
    let runs = |t: f32, starts: &mut Vec<usize>| -> bool {
        starts.clear();
        let mut lo = 0;
        while lo < n {
            if starts.len() == MAX_IMPACTS || corner(lo, lo) > t {
                return false;
            }
            starts.push(lo);
            let mut last = lo;
            while last + 1 < n && corner(lo, last + 1) <= t {
                last += 1;
            }
            lo = last + 1;
        }
        true
    };
    // The least threshold that fits is a corner key, at least the best
    // pair's and at most the whole frontier's as one run: found by halving
    // the range of f32 values between them, whose bits (non-negative
    // floats) order as the values do, so about 30 greedy passes of `n`
    // steps each, whatever the frontier's length (listing every corner
    // key and searching them took 245 us for a frontier of 128 pairs).
    let best = (0..n).map(|i| corner(i, i)).fold(0.0f32, f32::max);
    let (mut lo, mut hi) = (best.to_bits(), corner(0, n - 1).to_bits());
    let mut starts = Vec::with_capacity(MAX_IMPACTS);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if runs(f32::from_bits(mid), &mut starts) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    if !runs(f32::from_bits(hi), &mut starts) {
        // Factors that do not fall as norms grow (not a BM25 field's):
        // the frontier cut evenly, every pair still dominated.
        starts.clear();
        starts.extend((0..MAX_IMPACTS).map(|r| r * n / MAX_IMPACTS));
    }
    // Run `i`'s first and last pair.
    let run = |i: usize, starts: &[usize]| (starts[i], starts.get(i + 1).map_or(n, |&e| e) - 1);
    while starts.len() < MAX_IMPACTS {
        let widest = (0..starts.len())
            .map(|i| (i, run(i, &starts)))
            .filter(|&(_, (first, last))| last > first)
            .max_by(|(_, a), (_, b)| corner(a.0, a.1).total_cmp(&corner(b.0, b.1)));
        let Some((i, (first, last))) = widest else {
            break;
        };
        starts.insert(i + 1, first + (last + 1 - first) / 2);
    }
    let merged: Vec<Impact> = (0..starts.len())
        .map(|i| {
            let (first, last) = run(i, &starts);
            Impact {
                tf: pairs[first].tf,
                norm: pairs[last].norm,
            }
        })
        .collect();
    *pairs = merged;
}

/// Appends impact pairs; `with_count` prefixes their number (second-level
/// entries; a block's count lives in its skip entry).
fn put_impacts(out: &mut Vec<u8>, impacts: &[Impact], with_count: bool) {
    if with_count {
        out.push(impacts.len() as u8);
    }
    for i in impacts {
        super::put_varint(out, u64::from(i.tf));
        out.push(i.norm);
    }
}

/// A dense list's presence bitmap: a bit per document of the segment,
/// set for the documents the list holds (bit `d % 64` of little-endian
/// word `d / 64`).
#[derive(Clone, Copy, Debug)]
pub struct Presence<'a>(&'a [u8]);

impl<'a> Presence<'a> {
    /// Whether the list holds `doc` (false past the segment's documents).
    #[inline]
    pub fn contains(&self, doc: u32) -> bool {
        self.0
            .get((doc >> 3) as usize)
            .is_some_and(|&b| b >> (doc & 7) & 1 != 0)
    }

    /// [`kernels::prefetch`] of the byte that holds `doc`'s bit.
    #[inline]
    pub fn prefetch(&self, doc: u32) {
        kernels::prefetch(self.0, (doc >> 3) as usize);
    }

    /// The little-endian u64 words as 8-byte chunks, in order (chunk `i`
    /// holds documents `64 i .. 64 i + 64`).
    #[inline]
    pub fn chunks(&self) -> &'a [[u8; 8]] {
        self.0.as_chunks::<8>().0
    }

    /// How many documents of `from..to` the list holds: a popcount over
    /// the words that cover them (none past the segment's documents).
    pub fn count_between(&self, from: u32, to: u32) -> usize {
        if from >= to {
            return 0;
        }
        let words = self.chunks();
        let word = |i: usize| words.get(i).map_or(0, |c| u64::from_le_bytes(*c));
        let (first, last) = (from as usize / 64, (to as usize - 1) / 64);
        let head = !0u64 << (from % 64);
        let tail = !0u64 >> (63 - (to - 1) % 64);
        if first == last {
            return (word(first) & head & tail).count_ones() as usize;
        }
        let inner: u32 = (first + 1..last).map(|i| word(i).count_ones()).sum();
        ((word(first) & head).count_ones() + inner + (word(last) & tail).count_ones()) as usize
    }
}

/// Why a posting list could not be encoded.
#[derive(Debug)]
pub struct TooLarge;

/// Appends the postings region of one term in a segment of `max_doc`
/// documents. `docs` is strictly ascending and below `max_doc`,
/// `tfs[i] >= 1` is the frequency in `docs[i]`, `norm_of(doc)` gives the
/// document's norm byte and `factors` the key factors the capped impacts
/// keep exact ([`pareto_frontier`]); both are used only for impacts.
pub fn encode(
    docs: &[u32],
    tfs: &[u32],
    max_doc: u32,
    norm_of: impl Fn(u32) -> u8,
    factors: &[f32; 256],
    out: &mut Vec<u8>,
) -> Result<(), TooLarge> {
    debug_assert_eq!(docs.len(), tfs.len());
    debug_assert!(docs.windows(2).all(|w| w[0] < w[1]));
    debug_assert!(docs.last().is_none_or(|&d| d < max_doc));
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
    let (mut block_base, mut impact_base) = (0usize, 0usize);
    for b in 0..nblocks {
        let lo = b * BLOCK_LEN;
        let hi = (lo + BLOCK_LEN).min(n);
        let prev = if b == 0 { None } else { Some(docs[lo - 1]) };
        if b % L2_BLOCKS == 0 {
            block_base = blocks.len();
            impact_base = impacts.len();
        }
        // 32 blocks of at most 2 + 4 * BLOCK_LEN bytes plus exceptions fit
        // in a u16.
        let block_delta = u16::try_from(blocks.len() - block_base).expect("group fits in 64 KiB");
        if hi - lo == BLOCK_LEN {
            // Doc gaps minus one (the first relative to the previous block).
            let mut next = prev.map_or(0, |p| p + 1);
            for (o, &d) in buf.iter_mut().zip(&docs[lo..hi]) {
                *o = d - next;
                next = d + 1;
            }
            put_pfor(&packer, &mut buf, DOC_EXCEPTION_PENALTY, &mut blocks);
            for (o, &t) in buf.iter_mut().zip(&tfs[lo..hi]) {
                *o = t - 1;
            }
            put_pfor(&packer, &mut buf, 0, &mut blocks);
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
        pareto_frontier(&mut pairs, factors);
        l2_pairs.extend_from_slice(&pairs);
        // The skip entry's impact field: the count in the top 4 bits, the
        // offset from the group's base in the low 12 (32 entries of at most
        // 6 * MAX_IMPACTS bytes stay below 4096).
        let delta = impacts.len() - impact_base;
        debug_assert!(delta < 1 << 12 && (1..=MAX_IMPACTS).contains(&pairs.len()));
        let impact_delta = ((pairs.len() << 12) | delta) as u16;
        put_impacts(&mut impacts, &pairs, false);
        skip.extend_from_slice(&docs[hi - 1].to_le_bytes());
        skip.extend_from_slice(&block_delta.to_le_bytes());
        skip.extend_from_slice(&impact_delta.to_le_bytes());
        if (b + 1) % L2_BLOCKS == 0 || b + 1 == nblocks {
            pareto_frontier(&mut l2_pairs, factors);
            let impact_off = u32::try_from(impacts.len()).map_err(|_| TooLarge)?;
            put_impacts(&mut impacts, &l2_pairs, true);
            l2_pairs.clear();
            l2.extend_from_slice(&docs[hi - 1].to_le_bytes());
            l2.extend_from_slice(&impact_off.to_le_bytes());
            l2.extend_from_slice(
                &u32::try_from(block_base)
                    .map_err(|_| TooLarge)?
                    .to_le_bytes(),
            );
            l2.extend_from_slice(
                &u32::try_from(impact_base)
                    .map_err(|_| TooLarge)?
                    .to_le_bytes(),
            );
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
    if has_presence(n, max_doc) {
        let start = out.len();
        out.resize(start + presence_len(max_doc), 0);
        let bitmap = &mut out[start..];
        for &d in docs {
            bitmap[(d >> 3) as usize] |= 1 << (d & 7);
        }
    }
    Ok(())
}

/// The bit width for a run of 128 values that minimises its bytes:
/// `16 * bits` packed, plus per value that does not fit an exception of one
/// index byte and a varint of its high bits (patched frame of reference),
/// each exception also charged `penalty` bytes for the time it costs to
/// decode. One rare large value no longer widens all 128.
fn pfor_bits(values: &[u32; BLOCK_LEN], penalty: usize) -> u8 {
    // How many values need exactly `len` bits.
    let mut by_len = [0usize; 33];
    for &v in values {
        by_len[(32 - v.leading_zeros()) as usize] += 1;
    }
    let max = by_len.iter().rposition(|&c| c > 0).unwrap_or(0);
    let mut best = (usize::MAX, max as u8);
    for b in 0..=max {
        let mut cost = 16 * b;
        for (len, &count) in by_len.iter().enumerate().skip(b + 1) {
            // Index byte plus the varint of `len - b` high bits.
            cost += count * (1 + penalty + (len - b).div_ceil(7));
        }
        if cost < best.0 {
            best = (cost, b as u8);
        }
    }
    best.1
}

/// Appends one patched-frame-of-reference run of 128 values: `u8 bits`,
/// the low `bits` bits of every value packed with `BitPacker4x`, then
/// `u8 count` exceptions `{ u8 index, varint high_bits }` for the values
/// that need more. Clobbers `values`.
fn put_pfor(
    packer: &BitPacker4x,
    values: &mut [u32; BLOCK_LEN],
    penalty: usize,
    out: &mut Vec<u8>,
) {
    let bits = pfor_bits(values, penalty);
    let mut exceptions = [(0u8, 0u32); BLOCK_LEN];
    let mut count = 0;
    if bits < 32 {
        for (i, v) in values.iter_mut().enumerate() {
            if *v >> bits != 0 {
                exceptions[count] = (i as u8, *v >> bits);
                count += 1;
                *v &= (1 << bits) - 1;
            }
        }
    }
    out.push(bits);
    let start = out.len();
    out.resize(start + BLOCK_LEN * bits as usize / 8, 0);
    packer.compress(values, &mut out[start..], bits);
    out.push(count as u8);
    for &(i, high) in &exceptions[..count] {
        out.push(i);
        super::put_varint(out, u64::from(high));
    }
}

/// A run written by [`put_pfor`], parsed but not unpacked.
struct PforRun<'a> {
    bits: u8,
    packed: &'a [u8],
    /// From the exception count on: `count` x { u8 index, varint high },
    /// then whatever follows the run in the region.
    tail: &'a [u8],
}

impl<'a> PforRun<'a> {
    /// Parses the head of the run at `pos`. The exception list is read
    /// only when the values are, after the packed bits: a block's bytes are
    /// then touched in order.
    #[inline]
    fn parse(bytes: &'a [u8], pos: usize) -> Result<PforRun<'a>, BadPostings> {
        let bits = *bytes
            .get(pos)
            .ok_or(BadPostings("block offset out of range"))?;
        if bits > 32 {
            return Err(BadPostings("bit width over 32"));
        }
        let start = pos + 1;
        let end = start + BLOCK_LEN * bits as usize / 8;
        let packed = bytes
            .get(start..end)
            .ok_or(BadPostings("block extends past its region"))?;
        let tail = bytes
            .get(end..)
            .filter(|t| !t.is_empty())
            .ok_or(BadPostings("truncated exceptions"))?;
        Ok(PforRun { bits, packed, tail })
    }

    /// The exceptions as (index, high bits), checked: indexes ascend and
    /// stay in the block, high bits fit in u32 above `bits`. Returns the
    /// exception list's length in bytes (its count byte included).
    #[inline]
    fn for_each_exception(&self, mut f: impl FnMut(usize, u32)) -> Result<usize, BadPostings> {
        self.exceptions_while(|i, high| {
            f(i, high);
            true
        })
    }

    /// [`Self::for_each_exception`] while `f` returns true; where it
    /// returns false, the rest is neither read nor checked (and the
    /// length returned is of the entries read).
    #[inline]
    fn exceptions_while(
        &self,
        mut f: impl FnMut(usize, u32) -> bool,
    ) -> Result<usize, BadPostings> {
        let mut pos = 1;
        let mut next_min = 0usize;
        for _ in 0..self.tail[0] {
            let i = usize::from(
                *self
                    .tail
                    .get(pos)
                    .ok_or(BadPostings("truncated exceptions"))?,
            );
            pos += 1;
            let high = super::get_varint(self.tail, &mut pos)
                .ok_or(BadPostings("bad exception varint"))?;
            if i < next_min || i >= BLOCK_LEN || high > u64::from(u32::MAX) >> self.bits {
                return Err(BadPostings("exception out of range"));
            }
            next_min = i + 1;
            if !f(i, high as u32) {
                break;
            }
        }
        Ok(pos)
    }

    /// Where the bytes after the run start: past the packed values and
    /// `exceptions` bytes of exception list.
    fn end(&self, exceptions: usize) -> usize {
        // `tail` starts right after `packed`, which starts one byte (the
        // width) into the run.
        1 + self.packed.len() + exceptions
    }

    /// Unpacks frequencies stored minus one (exceptions patched in). A run
    /// of width 0, the usual one (most frequencies are 1), has nothing
    /// packed: it is ones, with the exceptions set.
    #[inline]
    fn frequencies(
        &self,
        packer: &BitPacker4x,
        out: &mut [u32; BLOCK_LEN],
    ) -> Result<(), BadPostings> {
        if self.bits == 0 {
            out.fill(1);
            return self
                .for_each_exception(|i, high| out[i] = high.wrapping_add(1))
                .map(|_| ());
        }
        packer.decompress(self.packed, out, self.bits);
        let bits = self.bits;
        // `high` fits in the bits above `bits` (checked; none when `bits` is
        // 32), so shifting in u64 and truncating is exact.
        self.for_each_exception(|i, high| out[i] |= (u64::from(high) << bits) as u32)?;
        for t in out.iter_mut() {
            *t = t.wrapping_add(1);
        }
        Ok(())
    }

    /// The frequency at index `i` (below [`BLOCK_LEN`]) alone, as
    /// [`Self::frequencies`] gives it: read out of the packed bits
    /// ([`packed_value`]) and patched by its exception if it has one,
    /// without unpacking the run; the exception list is read up to `i`'s
    /// place in it (its indexes ascend).
    fn frequency(&self, i: usize) -> Result<u32, BadPostings> {
        let bits = self.bits;
        let mut v = packed_value(self.packed, bits, i);
        self.exceptions_while(|j, high| {
            if j == i {
                v |= (u64::from(high) << bits) as u32;
            }
            j < i
        })?;
        Ok(v.wrapping_add(1))
    }

    /// Unpacks gaps minus one into ascending doc ids after `prev`. Without
    /// exceptions, the SIMD strictly-sorted decoder unpacks and sums in
    /// one pass; with them, the gaps' low bits are unpacked, each
    /// exception's high bits or-ed into its gap, and the gaps summed 8 at a
    /// time ([`kernels::strict_prefix_sum`]), rather than shifting every
    /// doc after each exception (rare-common-2 AND, exact: 388k
    /// instructions a query before, 347k after; a block without
    /// exceptions costs about the same either way, 457 against 443).
    /// Errors when the ids would not fit in u32. Returns the run's length
    /// in bytes (where the frequencies' run starts).
    #[inline]
    fn doc_ids(
        &self,
        packer: &BitPacker4x,
        prev: Option<u32>,
        out: &mut [u32; BLOCK_LEN],
    ) -> Result<usize, BadPostings> {
        let start = prev.map_or(0, |p| u64::from(p) + 1);
        // Above the last id: every gap is under `1 << bits` plus its
        // exception's shift.
        let mut bound = start + ((BLOCK_LEN as u64) << self.bits);
        let mut exceptions = 1;
        if self.tail[0] == 0 {
            packer.decompress_strictly_sorted(prev, self.packed, out, self.bits);
        } else {
            packer.decompress(self.packed, out, self.bits);
            let bits = self.bits;
            exceptions = self.for_each_exception(|i, h| {
                // `h` fits in the bits above `bits` (checked; none when
                // `bits` is 32), so this is exact.
                let shift = u64::from(h) << bits;
                out[i] |= shift as u32;
                bound += shift;
            })?;
            kernels::strict_prefix_sum(out, prev.unwrap_or(u32::MAX));
        }
        // Checked after the fact: with wrapping sums nothing above is
        // unsound, and an overflowing block is rejected whatever it
        // decoded to.
        if bound > u64::from(u32::MAX) {
            return Err(BadPostings("doc ids overflow"));
        }
        Ok(self.end(exceptions))
    }
}

/// Value `i` of the 128 that `BitPacker4x` packed `bits` wide into
/// `packed` (`16 * bits` bytes): value `i` is row `i / 4` of lane `i % 4`;
/// a lane's rows are packed low bits first into its 32-bit words, and
/// the four lanes' words are interleaved (word `w` of lane `l` is the
/// `4w + l`-th little-endian u32). A value may straddle two of its lane's
/// words. (About 20 instructions where unpacking the 128 takes a few
/// hundred: a dense list's one frequency, [`Postings::tf_at`].)
fn packed_value(packed: &[u8], bits: u8, i: usize) -> u32 {
    debug_assert!(i < BLOCK_LEN && packed.len() == BLOCK_LEN * usize::from(bits) / 8);
    if bits == 0 {
        return 0;
    }
    let (lane, bit) = (i % 4, i / 4 * usize::from(bits));
    let (w, shift) = (bit / 32, bit % 32);
    let word = |w: usize| {
        let at = (w * 4 + lane) * 4;
        let bytes: [u8; 4] = packed[at..at + 4].try_into().expect("four bytes");
        u64::from(u32::from_le_bytes(bytes))
    };
    let mut v = word(w) >> shift;
    if shift + usize::from(bits) > 32 {
        v |= word(w + 1) << (32 - shift);
    }
    (v & ((1u64 << bits) - 1)) as u32
}

/// Skips a run written by [`put_pfor`] at `*pos`.
fn skip_pfor(bytes: &[u8], pos: &mut usize) -> Result<(), BadPostings> {
    let bits = *bytes
        .get(*pos)
        .ok_or(BadPostings("block offset out of range"))?;
    if bits > 32 {
        return Err(BadPostings("bit width over 32"));
    }
    *pos += 1 + BLOCK_LEN * bits as usize / 8;
    let count = *bytes.get(*pos).ok_or(BadPostings("truncated exceptions"))?;
    *pos += 1;
    for _ in 0..count {
        *pos += 1;
        super::get_varint(bytes, pos).ok_or(BadPostings("bad exception varint"))?;
    }
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
#[derive(Clone, Copy)]
pub struct Postings<'a> {
    /// The unpacker, its CPU features detected once per list.
    packer: BitPacker4x,
    df: u32,
    max_doc: u32,
    skip: &'a [u8],
    l2: &'a [u8],
    impacts: &'a [u8],
    blocks: &'a [u8],
    /// The presence bitmap, when the list has one; else empty.
    presence: &'a [u8],
}

impl std::fmt::Debug for Postings<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postings")
            .field("df", &self.df)
            .field("max_doc", &self.max_doc)
            .field("blocks_len", &self.blocks.len())
            .finish_non_exhaustive()
    }
}

#[inline]
fn le32(b: &[u8], off: usize) -> u32 {
    // One bounds check and one load (indexing each byte checks four times).
    let bytes: [u8; 4] = b[off..off + 4].try_into().expect("four bytes");
    u32::from_le_bytes(bytes)
}

#[inline]
fn le16(b: &[u8], off: usize) -> usize {
    let bytes: [u8; 2] = b[off..off + 2].try_into().expect("two bytes");
    usize::from(u16::from_le_bytes(bytes))
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
                packer: BitPacker4x::new(),
                df,
                max_doc,
                skip: &[],
                l2: &[],
                impacts: &[],
                blocks: region,
                presence: &[],
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
        let presence = &region[blocks_end..];
        if !presence.is_empty() && presence.len() != presence_len(max_doc) {
            return Err(BadPostings("postings region has trailing bytes"));
        }
        Ok(Postings {
            packer: BitPacker4x::new(),
            df,
            max_doc,
            skip: &region[REGION_HEADER..skip_end],
            l2: &region[skip_end..l2_end],
            impacts: &region[l2_end..impacts_end],
            blocks: &region[impacts_end..blocks_end],
            presence,
        })
    }

    /// The list's presence bitmap, if it has one ([`PRESENCE_DIVISOR`]).
    #[inline]
    pub fn presence(&self) -> Option<Presence<'a>> {
        (!self.presence.is_empty()).then_some(Presence(self.presence))
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

    /// The first block of `blocks` whose last doc id is at least `target`
    /// (`blocks.end` when none is), by a binary search over the skip data
    /// whose steps are conditional moves (`partition_point`'s: a branch
    /// per step, which is what a compare-and-select in a loop compiled to,
    /// is mispredicted half the time when targets come in no order).
    /// `blocks` must be within `0..num_blocks()`; skip data only.
    #[inline]
    pub fn first_block_to(&self, blocks: std::ops::Range<usize>, target: u32) -> usize {
        let entries = &self.skip.as_chunks::<SKIP_ENTRY>().0[blocks.clone()];
        blocks.start
            + entries.partition_point(|e| u32::from_le_bytes([e[0], e[1], e[2], e[3]]) < target)
    }

    /// Number of second-level entries.
    pub fn num_l2(&self) -> usize {
        self.l2.len() / L2_ENTRY
    }

    /// Last doc id covered by second-level entry `i`.
    pub fn l2_last_doc(&self, i: usize) -> u32 {
        le32(self.l2, i * L2_ENTRY)
    }

    /// Offset of block `b`'s bytes within the blocks area (skip data only).
    #[inline]
    fn block_off(&self, b: usize) -> usize {
        let g = b / L2_BLOCKS;
        le32(self.l2, g * L2_ENTRY + 8) as usize + le16(self.skip, b * SKIP_ENTRY + 4)
    }

    /// Where block `b`'s impacts start in the impacts area, and how many
    /// pairs they hold (skip data only).
    #[inline]
    fn block_impacts_at(&self, b: usize) -> (usize, usize) {
        let g = b / L2_BLOCKS;
        let field = le16(self.skip, b * SKIP_ENTRY + 6);
        let off = le32(self.l2, g * L2_ENTRY + 12) as usize + (field & 0xfff);
        (off, field >> 12)
    }

    /// Impacts of block `b` (skip data only).
    pub fn block_impacts(&self, b: usize, out: &mut Vec<Impact>) -> Result<(), BadPostings> {
        let (off, count) = self.block_impacts_at(b);
        read_impacts(self.impacts, off, Some(count), out)
    }

    /// The largest key `tf as f32 * factors[norm]` (a term's
    /// [`TermWeight::key`](crate::query::bm25::TermWeight::key)) over
    /// block `b`'s impacts (skip data only), read without storing them,
    /// and their least norm byte (the least of any document of the block).
    #[inline]
    pub fn block_best(&self, b: usize, factors: &[f32; 256]) -> Result<(f32, u8), BadPostings> {
        let (off, count) = self.block_impacts_at(b);
        best_of_impacts(self.impacts, off, Some(count), factors)
    }

    /// Block `b`'s impacts as lanes, each norm's factor from `factors`
    /// (skip data only): two-byte pairs by one kernel call
    /// ([`kernels::frontier`]), any other frontier pair by pair.
    #[inline]
    pub fn block_frontier(&self, b: usize, factors: &[f32; 256]) -> Result<Frontier, BadPostings> {
        let (off, count) = self.block_impacts_at(b);
        let short = (self.impacts.get(off..off + 16))
            .and_then(|p| kernels::frontier(p.try_into().expect("16 bytes"), count, factors));
        if let Some(f) = short {
            return Ok(f);
        }
        let (mut f, mut i) = (Frontier::EMPTY, 0);
        visit_impacts(self.impacts, off, Some(count), |im| {
            f.set(i, im.tf, im.norm, factors[usize::from(im.norm)]);
            i += 1;
        })?;
        Ok(f)
    }

    /// The largest key `tf as f32 * factors[norm]` over the impacts
    /// summarising the blocks of second-level entry `i`.
    #[inline]
    pub fn l2_best(&self, i: usize, factors: &[f32; 256]) -> Result<f32, BadPostings> {
        let off = le32(self.l2, i * L2_ENTRY + 4) as usize;
        Ok(best_of_impacts(self.impacts, off, None, factors)?.0)
    }

    /// Impacts summarising the blocks of second-level entry `i`.
    pub fn l2_impacts(&self, i: usize, out: &mut Vec<Impact>) -> Result<(), BadPostings> {
        let off = le32(self.l2, i * L2_ENTRY + 4) as usize;
        read_impacts(self.impacts, off, None, out)
    }

    /// Offset of block `b`'s bytes within the blocks area: from skip data,
    /// or 0 for a list without (its only block is the tail). For checkers.
    pub fn block_start(&self, b: usize) -> usize {
        if self.skip.is_empty() {
            0
        } else {
            self.block_off(b)
        }
    }

    /// Offset just past block `b`'s bytes, found by walking them (the two
    /// runs of a packed block, the varint pairs of a tail). For checkers.
    pub fn block_end(&self, b: usize) -> Result<usize, BadPostings> {
        let mut pos = self.block_start(b);
        if self.is_packed(b) {
            skip_pfor(self.blocks, &mut pos)?;
            skip_pfor(self.blocks, &mut pos)?;
        } else {
            for _ in 0..2 * self.block_len(b) {
                super::get_varint(self.blocks, &mut pos).ok_or(BadPostings("bad tail varint"))?;
            }
        }
        Ok(pos)
    }

    /// Asks the CPU to bring block `b`'s first bytes (three cache lines,
    /// most of a packed block) into cache ahead of its decoding, for a
    /// loop that knows which block it decodes next while it does other
    /// work: a hint, never a fault. Nothing for a list without skip data
    /// (one short block, whose place the skip data would give) or a block
    /// past the last.
    #[inline]
    pub fn prefetch_block(&self, b: usize) {
        if b >= self.num_blocks() || !self.has_skip_data() {
            return;
        }
        let start = self.block_off(b);
        for line in (0..192).step_by(64) {
            kernels::prefetch(self.blocks, start + line);
        }
    }

    /// Bytes of the blocks area (the whole region for a list without skip data).
    pub fn blocks_len(&self) -> usize {
        self.blocks.len()
    }

    /// Bytes of the region the layout accounts for: header, skip data,
    /// impacts, blocks (for a list without skip data, its tail) and the
    /// presence bitmap.
    pub fn region_len(&self) -> usize {
        self.encoded_len() + self.presence.len()
    }

    /// Bytes of the region but its presence bitmap: what reading the
    /// list block by block touches.
    pub fn encoded_len(&self) -> usize {
        if self.skip.is_empty() {
            self.blocks.len()
        } else {
            REGION_HEADER + self.skip.len() + self.l2.len() + self.impacts.len() + self.blocks.len()
        }
    }

    /// Patched-frame-of-reference exceptions of packed block `b`: (doc-gap
    /// run, frequency run). For checkers and format statistics.
    pub fn block_exceptions(&self, b: usize) -> Result<(usize, usize), BadPostings> {
        if !self.is_packed(b) {
            return Ok((0, 0));
        }
        let mut pos = self.block_off(b);
        let docs = PforRun::parse(self.blocks, pos)?.tail[0];
        skip_pfor(self.blocks, &mut pos)?;
        let tfs = PforRun::parse(self.blocks, pos)?.tail[0];
        Ok((usize::from(docs), usize::from(tfs)))
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
        self.decode_docs_at(b, docs, tfs).map(|(n, _)| n)
    }

    /// [`Self::decode_docs`], also returning where a packed block's
    /// frequencies start, for [`Self::decode_tfs_at`] (which then need not
    /// walk the documents' exceptions again: a loop whose length changes
    /// from block to block, its exit mispredicted each time); 0 for a
    /// tail, whose frequencies are decoded with its documents.
    pub fn decode_docs_at(
        &self,
        b: usize,
        docs: &mut [u32; BLOCK_LEN],
        tfs: &mut [u32; BLOCK_LEN],
    ) -> Result<(usize, usize), BadPostings> {
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
                self.block_off(b)
            };
            return Ok((self.decode_tail(start, prev, len, docs, tfs)?, 0));
        }
        let at = self.block_off(b);
        let run = PforRun::parse(self.blocks, at)?;
        let last = le32(self.skip, b * SKIP_ENTRY);
        // With no u32 overflow possible, every gap adds at least one, so the
        // ids ascend strictly; the recorded last doc then bounds them all,
        // and `last < max_doc` bounds it.
        let run_len = run.doc_ids(&self.packer, prev, docs)?;
        if docs[BLOCK_LEN - 1] != last || last >= self.max_doc {
            return Err(BadPostings("block's doc ids disagree with skip data"));
        }
        Ok((BLOCK_LEN, at + run_len))
    }

    /// Decodes block `b`'s doc ids into `docs` and its frequencies into
    /// `tfs`. Returns the number of documents.
    pub fn decode_block(
        &self,
        b: usize,
        docs: &mut [u32; BLOCK_LEN],
        tfs: &mut [u32; BLOCK_LEN],
    ) -> Result<usize, BadPostings> {
        let (n, tfs_at) = self.decode_docs_at(b, docs, tfs)?;
        if self.is_packed(b) {
            self.decode_tfs_at(tfs_at, tfs)?;
        }
        Ok(n)
    }

    /// Decodes the whole list, appending to `docs` and `tfs`.
    pub fn decode_all(&self, docs: &mut Vec<u32>, tfs: &mut Vec<u32>) -> Result<(), BadPostings> {
        let mut d = [0u32; BLOCK_LEN];
        let mut t = [0u32; BLOCK_LEN];
        for b in 0..self.num_blocks() {
            let n = self.decode_block(b, &mut d, &mut t)?;
            docs.extend_from_slice(&d[..n]);
            tfs.extend_from_slice(&t[..n]);
        }
        Ok(())
    }

    /// The frequency of packed block `b`'s document at index `i` (its
    /// rank in the block) alone, as [`Self::decode_tfs`] would give it
    /// at `tfs[i]`.
    pub fn tf_at(&self, b: usize, i: usize) -> Result<u32, BadPostings> {
        self.tf_in_run(self.tfs_start(b)?, i)
    }

    /// [`Self::tf_at`] of the block whose frequencies' run starts at
    /// `at` ([`Self::tfs_start`]): a loop reading several of a block's
    /// frequencies one at a time finds the run once.
    #[inline]
    pub fn tf_in_run(&self, at: usize, i: usize) -> Result<u32, BadPostings> {
        if i >= BLOCK_LEN {
            return Err(BadPostings("rank past the block"));
        }
        PforRun::parse(self.blocks, at)?.frequency(i)
    }

    /// Decodes the term frequencies of packed block `b` into `tfs`.
    pub fn decode_tfs(&self, b: usize, tfs: &mut [u32; BLOCK_LEN]) -> Result<(), BadPostings> {
        self.decode_tfs_at(self.tfs_start(b)?, tfs)
    }

    /// Where packed block `b`'s frequencies start: past its documents'
    /// run, whose exception list is walked to find its end. Always
    /// inlined: called, it cost `tf_at` 1 % more instructions in
    /// rare-common-2 AND.
    #[inline(always)]
    pub fn tfs_start(&self, b: usize) -> Result<usize, BadPostings> {
        let mut pos = self.block_off(b);
        skip_pfor(self.blocks, &mut pos)?;
        Ok(pos)
    }

    /// Decodes the term frequencies whose run starts at `at` (as
    /// [`Self::decode_docs_at`] returned it) into `tfs`.
    pub fn decode_tfs_at(&self, at: usize, tfs: &mut [u32; BLOCK_LEN]) -> Result<(), BadPostings> {
        PforRun::parse(self.blocks, at)?.frequencies(&self.packer, tfs)
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
            // Saturating: a gap near u64::MAX is out of range, not an overflow.
            let doc = next.saturating_add(delta);
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

/// Reads the impacts at `off`: `count` pairs, or a count byte first.
fn read_impacts(
    bytes: &[u8],
    off: usize,
    count: Option<usize>,
    out: &mut Vec<Impact>,
) -> Result<(), BadPostings> {
    out.clear();
    visit_impacts(bytes, off, count, |i| out.push(i))
}

/// The largest key `tf as f32 * factors[norm]` of the impact pairs stored
/// at `off` (a plain compare: finite factors give no NaN), and their least
/// norm byte.
#[inline]
fn best_of_impacts(
    bytes: &[u8],
    off: usize,
    count: Option<usize>,
    factors: &[f32; 256],
) -> Result<(f32, u8), BadPostings> {
    // Most frequencies are under 128, so most pairs are two bytes, a
    // one-byte varint and the norm: read (up to 8 of) them as such in
    // one kernel call; any other frontier is read out of line.
    let (at, c) = impacts_at(bytes, off, count);
    match best_of_short_pairs(bytes, at, c, factors) {
        Some(best) => Ok(best),
        None => best_of_long_impacts(bytes, off, count, factors),
    }
}

/// [`kernels::best_impact`] of the `count` two-byte pairs at `at`: `None`
/// when they are not all such pairs, or fewer than 16 bytes are left.
#[inline]
fn best_of_short_pairs(
    bytes: &[u8],
    at: usize,
    count: usize,
    factors: &[f32; 256],
) -> Option<(f32, u8)> {
    let pairs = bytes.get(at..at + 16)?;
    kernels::best_impact(pairs.try_into().expect("16 bytes"), count, factors)
}

/// Where the pairs of the impacts at `off` start, and how many the
/// stored count says there are: `count`, or the count byte at `off` (0
/// when it is out of range).
#[inline]
fn impacts_at(bytes: &[u8], off: usize, count: Option<usize>) -> (usize, usize) {
    match count {
        Some(c) => (off, c),
        None => (off + 1, bytes.get(off).map_or(0, |&c| usize::from(c))),
    }
}

/// `(best, least)` with the pair of key `key` and norm `norm` taken in.
#[inline]
fn take_pair((best, least): (f32, u8), key: f32, norm: u8) -> (f32, u8) {
    (if key > best { key } else { best }, least.min(norm))
}

/// [`best_of_impacts`] of a frontier the kernel does not read.
/// Frequencies fall along a frontier, so those of two bytes (128 to
/// 16,383: a common term in long documents) lead it: they are read three
/// bytes a pair, and the kernel reads the rest. The general reader takes
/// over when a frequency is longer (or the region ends within 16 bytes
/// of the kernel's pairs). On the synthetic corpus a fifth of the blocks
/// that a conjunction of two common terms bounds start so; the general
/// reader spent about 290 instructions on such a block, this about 100
/// (a one-term query whose term every document holds: 1,563 block
/// bounds, 839k instructions a query before, 693k after).
#[inline(never)]
fn best_of_long_impacts(
    bytes: &[u8],
    off: usize,
    count: Option<usize>,
    factors: &[f32; 256],
) -> Result<(f32, u8), BadPostings> {
    let (at, c) = impacts_at(bytes, off, count);
    let mut acc = (f32::NEG_INFINITY, u8::MAX);
    let mut long = 0;
    while long < c
        && let Some(&[b0, b1, norm]) = bytes.get(at + 3 * long..at + 3 * long + 3)
        && b0 >= 0x80
        && b1 < 0x80
    {
        let tf = u32::from(b0 & 0x7f) | u32::from(b1) << 7;
        acc = take_pair(acc, tf as f32 * factors[usize::from(norm)], norm);
        long += 1;
    }
    if long == c && c > 0 && c <= MAX_IMPACTS {
        return Ok(acc);
    }
    if let Some((k, least)) = best_of_short_pairs(bytes, at + 3 * long, c - long, factors) {
        return Ok(take_pair(acc, k, least));
    }
    acc = (f32::NEG_INFINITY, u8::MAX);
    visit_impacts(bytes, off, count, |i| {
        acc = take_pair(acc, i.tf as f32 * factors[usize::from(i.norm)], i.norm);
    })?;
    Ok(acc)
}

/// Calls `f` with each impact pair stored at `off` (`count` of them, or a
/// count byte first).
#[inline]
fn visit_impacts(
    bytes: &[u8],
    off: usize,
    count: Option<usize>,
    mut f: impl FnMut(Impact),
) -> Result<(), BadPostings> {
    let mut pos = off;
    let count = match count {
        Some(c) => c,
        None => {
            pos += 1;
            *bytes
                .get(off)
                .ok_or(BadPostings("impact offset out of range"))? as usize
        }
    };
    if count == 0 || count > MAX_IMPACTS {
        return Err(BadPostings("impact count out of range"));
    }
    for _ in 0..count {
        let tf = super::get_varint(bytes, &mut pos).ok_or(BadPostings("bad impact varint"))?;
        let norm = *bytes.get(pos).ok_or(BadPostings("truncated impacts"))?;
        pos += 1;
        f(Impact {
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

    /// Key factors shaped like BM25's (falling with the norm byte), for a
    /// field whose documents average `avg` tokens, a norm byte standing
    /// for its value plus one tokens.
    fn factors(avg: f32) -> [f32; 256] {
        std::array::from_fn(|i| 1.0 / (1.2 * (0.25 + 0.75 * (i as f32 + 1.0) / avg)))
    }

    /// The largest key of `pairs` under `f`.
    fn best_key(pairs: &[Impact], f: &[f32; 256]) -> f32 {
        pairs
            .iter()
            .map(|p| p.tf as f32 * f[usize::from(p.norm)])
            .fold(0.0, f32::max)
    }

    fn round_trip(docs: &[u32], tfs: &[u32], max_doc: u32) {
        let norm_of = |d: u32| (d % 7) as u8;
        let mut region = Vec::new();
        encode(docs, tfs, max_doc, norm_of, &factors(3.0), &mut region).unwrap();
        let p = Postings::parse(&region, docs.len() as u32, max_doc).unwrap();
        // A dense list's bitmap holds exactly its documents.
        assert_eq!(p.presence().is_some(), has_presence(docs.len(), max_doc));
        if let Some(bits) = p.presence() {
            let held: Vec<u32> = (0..max_doc).filter(|&d| bits.contains(d)).collect();
            assert_eq!(held, docs);
            assert!(!bits.contains(max_doc));
            // Counts over ranges across and inside words, past the end.
            let cuts = [
                0,
                1,
                63,
                64,
                65,
                127,
                128,
                200,
                max_doc / 2,
                max_doc,
                max_doc + 70,
            ];
            for &a in &cuts {
                for &z in &cuts {
                    let naive = docs.iter().filter(|&&d| a <= d && d < z).count();
                    assert_eq!(bits.count_between(a, z), naive, "{a}..{z}");
                }
            }
            for (i, &d) in docs.iter().enumerate() {
                assert_eq!(bits.count_between(0, d), i);
            }
        }
        let mut got_docs = Vec::new();
        let mut got_tfs = Vec::new();
        let mut d = [0u32; BLOCK_LEN];
        let mut t = [0u32; BLOCK_LEN];
        let mut impacts = Vec::new();
        for b in 0..p.num_blocks() {
            let n = p.decode_docs(b, &mut d, &mut t).unwrap();
            // The frequencies found where decoding the documents ended are
            // those found by walking the documents' run again.
            let (mut d2, mut t2) = ([0u32; BLOCK_LEN], [0u32; BLOCK_LEN]);
            let (n2, at) = p.decode_docs_at(b, &mut d2, &mut t2).unwrap();
            assert_eq!((n2, &d2[..n2]), (n, &d[..n]));
            if p.is_packed(b) {
                p.decode_tfs(b, &mut t).unwrap();
                p.decode_tfs_at(at, &mut t2).unwrap();
                // Each frequency read alone is the one unpacked.
                for (i, &tf) in t.iter().enumerate() {
                    assert_eq!(p.tf_at(b, i), Ok(tf), "block {b} index {i}");
                }
                assert!(p.tf_at(b, BLOCK_LEN).is_err());
            }
            assert_eq!(&t2[..n], &t[..n]);
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
                // The best key read in place (two-byte pairs or varints)
                // is the best over the impacts read out.
                let factors: [f32; 256] = std::array::from_fn(|n| (1.0 + n as f32).recip());
                let key = |tf: u32, norm: u8| tf as f32 * factors[usize::from(norm)];
                let best = impacts.iter().map(|im| key(im.tf, im.norm));
                let best = best.fold(f32::NEG_INFINITY, f32::max);
                let (got, least) = p.block_best(b, &factors).unwrap();
                assert_eq!(got.to_bits(), best.to_bits());
                assert_eq!(Some(least), impacts.iter().map(|im| im.norm).min());
            }
        }
        assert_eq!(got_docs, docs);
        assert_eq!(got_tfs, tfs);
        for i in 0..p.num_l2() {
            p.l2_impacts(i, &mut impacts).unwrap();
            assert!(!impacts.is_empty());
            // Factors that do not fall with the norm.
            let factors: [f32; 256] = std::array::from_fn(|n| 1.0 + (n % 7) as f32);
            let key = |tf: u32, norm: u8| tf as f32 * factors[usize::from(norm)];
            let best = impacts.iter().map(|im| key(im.tf, im.norm));
            let best = best.fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(p.l2_best(i, &factors).unwrap().to_bits(), best.to_bits());
        }
    }

    #[test]
    fn lengths_around_block_boundaries() {
        for n in [1usize, 2, 127, 128, 129, 255, 256, 257, 128 * 33 + 5] {
            let docs: Vec<u32> = (0..n as u32).map(|i| i * 5 + (i % 5)).collect();
            let tfs: Vec<u32> = (0..n as u32).map(|i| 1 + (i * 7919) % 40).collect();
            round_trip(&docs, &tfs, docs[n - 1] + 1);
            // Frontiers led by frequencies of two- and three-byte varints.
            let tfs: Vec<u32> = (0..n as u32).map(|i| 1 + (i * 7919) % 20_000).collect();
            round_trip(&docs, &tfs, docs[n - 1] + 1);
        }
        // Dense and extreme gaps, large tf.
        let docs: Vec<u32> = (0..300).collect();
        round_trip(&docs, &vec![u32::MAX; 300], 300);
        let docs: Vec<u32> = (0..200u32).map(|i| i * 10_000_000).collect();
        round_trip(&docs, &vec![1; 200], u32::MAX);
    }

    #[test]
    fn frontiers_led_by_longer_frequencies_are_bounded_in_place() {
        // Eight pairs, one per norm byte, the frequency rising with the
        // norm: the first `long` of the frontier (tf descending) take two
        // varint bytes (or three, from 16,384 on), the rest one. The best
        // key read in place equals the best over the pairs read out, with
        // factors that fall with the norm and with factors that do not.
        let fall: [f32; 256] = std::array::from_fn(|n| (1.0 + n as f32).recip());
        let flat: [f32; 256] = std::array::from_fn(|n| 1.0 + (n % 3) as f32);
        for long in 0..=8u32 {
            for big in [128u32, 200, 16_383, 16_384, 70_000] {
                let docs: Vec<u32> = (0..256).collect();
                let norm_of = |d: u32| (d % 8) as u8;
                let tfs: Vec<u32> = docs
                    .iter()
                    .map(|&d| {
                        let n = d % 8;
                        if n >= 8 - long { big + n } else { 10 + n }
                    })
                    .collect();
                let mut region = Vec::new();
                encode(&docs, &tfs, 256, norm_of, &factors(3.0), &mut region).unwrap();
                let p = Postings::parse(&region, docs.len() as u32, 256).unwrap();
                assert!(p.has_skip_data());
                let mut impacts = Vec::new();
                for b in 0..p.num_blocks() {
                    p.block_impacts(b, &mut impacts).unwrap();
                    assert_eq!(impacts.len(), 8, "long {long} big {big}");
                    for f in [&fall, &flat] {
                        let best = impacts
                            .iter()
                            .map(|im| im.tf as f32 * f[usize::from(im.norm)])
                            .fold(f32::NEG_INFINITY, f32::max);
                        let (got, least) = p.block_best(b, f).unwrap();
                        assert_eq!(got.to_bits(), best.to_bits(), "long {long} big {big}");
                        assert_eq!(least, 0);
                    }
                }
            }
        }
    }

    #[test]
    fn rare_large_frequencies_become_exceptions() {
        // Mostly 1, a few huge: the packed width stays small.
        let docs: Vec<u32> = (0..512).collect();
        let tfs: Vec<u32> = (0..512u32)
            .map(|i| match i % 61 {
                0 => 1_000_000 + i,
                7 => u32::MAX,
                _ => 1 + i % 2,
            })
            .collect();
        round_trip(&docs, &tfs, 512);
        // Dense doc ids with a few long jumps: the jumps become exceptions.
        let mut d = 0u32;
        let jumpy: Vec<u32> = (0..700u32)
            .map(|i| {
                d += if i % 97 == 5 {
                    1_000_000 + i
                } else {
                    1 + i % 3
                };
                d
            })
            .collect();
        round_trip(&jumpy, &vec![1; 700], d + 1);
        let mut plain = [0u32; BLOCK_LEN];
        plain[3] = 5000;
        plain[100] = 1;
        assert_eq!(
            pfor_bits(&plain, 0),
            0,
            "two nonzero values are cheaper as exceptions"
        );
        assert_eq!(pfor_bits(&[7u32; BLOCK_LEN], 0), 3);
        assert_eq!(pfor_bits(&[0u32; BLOCK_LEN], 0), 0);
        let mut region = Vec::new();
        encode(&docs, &tfs, 512, |_| 0, &factors(3.0), &mut region).unwrap();
        let mut uniform = Vec::new();
        encode(
            &docs,
            &vec![u32::MAX; 512],
            512,
            |_| 0,
            &factors(3.0),
            &mut uniform,
        )
        .unwrap();
        assert!(
            region.len() * 2 < uniform.len(),
            "{} vs {}",
            region.len(),
            uniform.len()
        );
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
        pareto_frontier(&mut v, &factors(10.0));
        assert_eq!(
            v,
            vec![
                Impact { tf: 3, norm: 7 },
                Impact { tf: 2, norm: 5 },
                Impact { tf: 1, norm: 1 }
            ]
        );
    }

    /// Checks a capped frontier of `before`: at most MAX_IMPACTS pairs,
    /// tf and norm strictly falling, every input pair dominated.
    fn assert_capped(before: &[Impact], capped: &[Impact]) {
        assert!(!capped.is_empty() && capped.len() <= MAX_IMPACTS);
        for w in capped.windows(2) {
            assert!(w[0].tf > w[1].tf && w[0].norm > w[1].norm, "{capped:?}");
        }
        for p in before {
            assert!(
                capped.iter().any(|q| q.tf >= p.tf && q.norm <= p.norm),
                "{p:?} not dominated by {capped:?}"
            );
        }
    }

    /// The even split of a frontier into MAX_IMPACTS runs, as impacts were
    /// capped before their runs were chosen by key.
    fn even_split(frontier: &[Impact]) -> Vec<Impact> {
        let n = frontier.len();
        (0..MAX_IMPACTS)
            .map(|r| Impact {
                tf: frontier[r * n / MAX_IMPACTS].tf,
                norm: frontier[(r + 1) * n / MAX_IMPACTS - 1].norm,
            })
            .collect()
    }

    /// The least bound any split of `frontier` into at most MAX_IMPACTS
    /// runs of neighbours gives under `f`, by trying every split.
    fn least_bound(frontier: &[Impact], f: &[f32; 256]) -> f32 {
        let n = frontier.len();
        let corner =
            |lo: usize, last: usize| frontier[lo].tf as f32 * f[usize::from(frontier[last].norm)];
        // best[r][i]: the least largest corner over splits of the first i
        // pairs into r runs.
        let mut best = vec![vec![f32::INFINITY; n + 1]; MAX_IMPACTS + 1];
        best[0][0] = 0.0;
        for r in 1..=MAX_IMPACTS {
            for i in 1..=n {
                for lo in 0..i {
                    let v = best[r - 1][lo].max(corner(lo, i - 1));
                    if v < best[r][i] {
                        best[r][i] = v;
                    }
                }
            }
        }
        (1..=MAX_IMPACTS)
            .map(|r| best[r][n])
            .fold(f32::INFINITY, f32::min)
    }

    /// The frontier of `pairs`, uncapped.
    fn full_frontier(pairs: &[Impact]) -> Vec<Impact> {
        let mut full = pairs.to_vec();
        full.sort_unstable_by(|a, b| b.tf.cmp(&a.tf).then(a.norm.cmp(&b.norm)));
        let mut min_norm = u16::MAX;
        full.retain(|p| {
            let keep = u16::from(p.norm) < min_norm;
            min_norm = min_norm.min(u16::from(p.norm));
            keep
        });
        full
    }

    #[test]
    fn a_capped_frontier_keeps_the_best_key_of_its_factors() {
        // 16 pairs whose keys under an average length of 20 peak at tf 3:
        // the even split bounds them by a merged corner 44 % higher, a
        // split by key stores the best pair as it is.
        let long: Vec<Impact> = (1..=16u32)
            .rev()
            .map(|tf| Impact {
                tf,
                norm: (tf * tf * 9 / 10 + tf).min(255) as u8,
            })
            .collect();
        let f = factors(20.0);
        let mut capped = long.clone();
        pareto_frontier(&mut capped, &f);
        assert_eq!(capped.len(), MAX_IMPACTS);
        assert_capped(&long, &capped);
        let exact = best_key(&long, &f);
        assert_eq!(
            best_key(&capped, &f).to_bits(),
            exact.to_bits(),
            "{capped:?}"
        );
        assert!(best_key(&even_split(&long), &f) > exact * 1.4);
        // Under other factors it is no longer exact, but still a bound.
        for other in [10.0, 40.0] {
            let g = factors(other);
            assert!(best_key(&capped, &g) >= best_key(&long, &g));
        }
    }

    proptest! {
        #[test]
        fn long_frontiers_get_the_least_bound_any_split_gives(
            mut tfs in prop::collection::vec(1u32..2000, 9..80),
            mut norms in prop::collection::vec(any::<u8>(), 9..80),
            avg in 1.0f32..500.0,
        ) {
            // A frontier as it comes: tf and norm both strictly falling
            // (random pairs seldom make one longer than 8).
            tfs.sort_unstable_by(|a, b| b.cmp(a));
            tfs.dedup();
            norms.sort_unstable_by(|a, b| b.cmp(a));
            norms.dedup();
            let frontier: Vec<Impact> = tfs
                .iter()
                .zip(&norms)
                .map(|(&tf, &norm)| Impact { tf, norm })
                .collect();
            let f = factors(avg);
            let mut capped = frontier.clone();
            pareto_frontier(&mut capped, &f);
            assert_capped(&frontier, &capped);
            if frontier.len() > MAX_IMPACTS {
                prop_assert_eq!(capped.len(), MAX_IMPACTS);
                prop_assert_eq!(best_key(&capped, &f).to_bits(), least_bound(&frontier, &f).to_bits());
                prop_assert!(best_key(&capped, &f) <= best_key(&even_split(&frontier), &f));
            } else {
                prop_assert_eq!(&capped, &frontier);
            }
        }

        #[test]
        fn capped_frontiers_dominate_every_pair(
            raw in prop::collection::vec((1u32..200, 0u8..=255), 1..130),
            avg in 1.0f32..500.0,
        ) {
            let before: Vec<Impact> = raw.iter().map(|&(tf, norm)| Impact { tf, norm }).collect();
            let f = factors(avg);
            let mut capped = before.clone();
            pareto_frontier(&mut capped, &f);
            assert_capped(&before, &capped);
            prop_assert!(best_key(&capped, &f) >= best_key(&before, &f));
            // No split into runs bounds tighter.
            let full = full_frontier(&before);
            if full.len() > MAX_IMPACTS {
                prop_assert_eq!(best_key(&capped, &f).to_bits(), least_bound(&full, &f).to_bits());
                prop_assert!(best_key(&capped, &f) <= best_key(&even_split(&full), &f));
            } else {
                prop_assert_eq!(&capped, &full);
            }
        }
    }

    #[test]
    fn one_packed_value_reads_as_unpacking_gives_it() {
        let packer = BitPacker4x::new();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for bits in 0..=32u8 {
            let mask = if bits == 32 {
                u32::MAX
            } else {
                (1u32 << bits) - 1
            };
            // Random values, the largest and zeros among them.
            let values: [u32; BLOCK_LEN] = std::array::from_fn(|i| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                match i % 5 {
                    0 => mask,
                    1 => 0,
                    _ => seed as u32 & mask,
                }
            });
            let mut packed = vec![0u8; BLOCK_LEN * usize::from(bits) / 8];
            packer.compress(&values, &mut packed, bits);
            for (i, &v) in values.iter().enumerate() {
                assert_eq!(packed_value(&packed, bits, i), v, "{bits} bits, index {i}");
            }
        }
    }

    #[test]
    fn damaged_regions_error_instead_of_panicking() {
        let docs: Vec<u32> = (0..700u32).map(|i| i * 2).collect();
        let tfs = vec![2u32; 700];
        let mut region = Vec::new();
        encode(&docs, &tfs, 1400, |_| 3, &factors(3.0), &mut region).unwrap();
        assert!(
            Postings::parse(&region, 700, 1400)
                .unwrap()
                .presence()
                .is_some()
        );
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
            // Mostly small frequencies, some past a one-byte varint.
            let tf = |d: u32| if (d ^ seed).is_multiple_of(29) { 100 + d % 300 } else { 1 + (d ^ seed) % 17 };
            let tfs: Vec<u32> = docs.iter().map(|&d| tf(d)).collect();
            docs.dedup();
            round_trip(&docs, &tfs, 50_000);
        }
    }
}
