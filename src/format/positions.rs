//! Token positions (segment section 7), stored apart from doc ids and
//! frequencies so that a query without phrases never reads them.
//!
//! One region per term of a field with positions, at the offset its
//! dictionary entry gives within the section. With `n = doc_freq` and the
//! posting blocks of [`BLOCK_LEN`] documents (`nblocks = ceil(n / 128)`),
//! from version 4 on:
//!
//! ```text
//! (nblocks - 1) x u32 block_offset   where the positions of blocks 1.. start, within `data`
//! data, per posting block (its m postings with frequencies tf_i, P = sum tf_i):
//!   firsts: one packed run of m values: each posting's first position
//!   gaps:   ceil((P - m) / 128) packed runs of 128 values (the last holds
//!           the rest): posting after posting, each next position's gap - 1
//! packed run of k values (k follows from the frequencies):
//!   head u8 = width + 33 * exceptions        width 0..=32, exceptions 0..=6
//!   exceptions x { index u8, high u8 }       ascending indexes: value[index] |= high << width
//!   ceil(k * width / 8) bytes                value j's low bits at bits j*width.., LSB first
//! ```
//!
//! A posting's first position is read without the block's frequencies;
//! its gaps start at gap `sum(tf_j - 1)` over the postings before it, and
//! the runs' heads say how long each is, so a reader finds a posting's
//! positions by walking at most `P / 128` heads and unpacks only its own
//! values, each with one unaligned load, a shift and a mask. The widths
//! are chosen per run to give the fewest bytes (ties to fewer
//! exceptions); a value may exceed its run's width by 8 bits at most.
//! First positions stand apart from the gaps because they are spread over
//! the document (rare terms' positions are almost all first positions)
//! where gaps of common terms are small. Measured on the 200,000-document
//! synthetic corpus (70.0M positions) and the 120,000-document
//! large-vocabulary one (12.6M), MiB of position data:
//!
//! | encoding | synthetic | large vocabulary |
//! |---|---:|---:|
//! | varints (versions 2 and 3) | 83.0 | 12.0 |
//! | one width per posting block | 70.3 | 11.5 |
//! | runs of 128 over firsts and gaps together (tantivy's layout) | 67.3 | 10.9 |
//! | firsts apart, gaps in runs of 128, no exceptions | 67.0 | 11.1 |
//! | the same, at most 3 exceptions a run | 63.4 | 10.7 |
//! | the same, at most 6 exceptions a run (this layout) | 62.5 | 10.5 |
//!
//! Versions 2 and 3 store `data` as, per posting in posting order, `tf`
//! varints: its first position, then each next position's gap - 1; a
//! reader skips the varints of the postings before the one it wants.

use bitpacking::{BitPacker, BitPacker4x};

use super::get_varint;
use super::postings::{BLOCK_LEN, BadPostings};
use crate::kernels;

/// The first format version whose positions are packed runs.
pub const PACKED_VERSION: u32 = 4;

/// Values in one run of gaps.
const RUN_LEN: usize = 128;
/// Most exceptions in a run: `head = width + 33 * exceptions` fits a byte.
const MAX_EXCEPTIONS: usize = 6;
/// Most bits an exception's high part holds.
const HIGH_BITS: u32 = 8;

fn bit_len(v: u32) -> u32 {
    32 - v.leading_zeros()
}

/// Appends a term's positions region: `positions` holds, posting after
/// posting, `tfs[i]` strictly ascending positions each.
pub fn encode(tfs: &[u32], positions: &[u32], out: &mut Vec<u8>) -> Result<(), BadPostings> {
    let packer = BitPacker4x::new();
    let nblocks = tfs.len().div_ceil(BLOCK_LEN);
    let head = out.len();
    out.resize(head + 4 * nblocks.saturating_sub(1), 0);
    let data = out.len();
    let mut at = 0;
    let (mut firsts, mut gaps) = (Vec::with_capacity(BLOCK_LEN), Vec::new());
    for (b, block) in tfs.chunks(BLOCK_LEN).enumerate() {
        if b > 0 {
            let off = u32::try_from(out.len() - data)
                .map_err(|_| BadPostings("a term's positions exceed 4 GiB"))?;
            let slot = head + 4 * (b - 1);
            out[slot..slot + 4].copy_from_slice(&off.to_le_bytes());
        }
        firsts.clear();
        gaps.clear();
        for &tf in block {
            let mine = positions
                .get(at..at + tf as usize)
                .filter(|m| !m.is_empty())
                .ok_or(BadPostings("fewer positions than frequencies"))?;
            at += tf as usize;
            firsts.push(mine[0]);
            for w in mine.windows(2) {
                let gap = w[1]
                    .checked_sub(w[0] + 1)
                    .ok_or(BadPostings("positions not strictly ascending"))?;
                gaps.push(gap);
            }
        }
        put_run(&packer, &firsts, out);
        for run in gaps.chunks(RUN_LEN) {
            put_run(&packer, run, out);
        }
    }
    if at != positions.len() {
        return Err(BadPostings("more positions than frequencies"));
    }
    Ok(())
}

/// Appends one packed run of `values` (at most [`RUN_LEN`]): the width
/// and exceptions that give the fewest bytes, ties to the wider width. A
/// full run is packed with `BitPacker4x` (its lanes interleaved), a
/// shorter one value after value.
fn put_run(packer: &BitPacker4x, values: &[u32], out: &mut Vec<u8>) {
    debug_assert!(values.len() <= RUN_LEN);
    // How many values need exactly `len` bits.
    let mut by_len = [0usize; 33];
    for &v in values {
        by_len[bit_len(v) as usize] += 1;
    }
    let max = by_len.iter().rposition(|&c| c > 0).unwrap_or(0) as u32;
    let (mut best, mut width, mut over) = (usize::MAX, max, 0);
    for w in max.saturating_sub(HIGH_BITS)..=max {
        let above: usize = by_len[w as usize + 1..].iter().sum();
        let cost = 2 * above + (values.len() * w as usize).div_ceil(8);
        if above <= MAX_EXCEPTIONS && cost <= best {
            (best, width, over) = (cost, w, above);
        }
    }
    out.push((width + 33 * over as u32) as u8);
    if over > 0 {
        for (i, &v) in values.iter().enumerate() {
            if bit_len(v) > width {
                out.push(i as u8);
                out.push((v >> width) as u8);
            }
        }
    }
    let mask = ((1u64 << width) - 1) as u32;
    if values.len() == RUN_LEN {
        let mut low = [0u32; RUN_LEN];
        for (l, &v) in low.iter_mut().zip(values) {
            *l = v & mask;
        }
        let start = out.len();
        out.resize(start + RUN_LEN * width as usize / 8, 0);
        packer.compress(&low, &mut out[start..], width as u8);
        return;
    }
    let (mut acc, mut filled) = (0u64, 0u32);
    for &v in values {
        acc |= u64::from(v & mask) << filled;
        filled += width;
        while filled >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            filled -= 8;
        }
    }
    if filled > 0 {
        out.push(acc as u8);
    }
}

/// A packed run's head, parsed: its width, exceptions and extent, the
/// extent checked to lie in the data. The exceptions are checked only by
/// [`Run::check`] (what [`Positions::decode_all`], and so the index check
/// and merges, run): a read applies them truncated to u32 and sums
/// positions wrapping, so a damaged run gives wrong positions, never a
/// panic (the segment's checksum was checked when it was opened).
#[derive(Clone, Copy, Debug)]
struct Run {
    width: u32,
    /// Where its exceptions start in the data.
    exceptions: usize,
    /// Where its packed bits start (its exceptions end).
    bits: usize,
    /// One past its last byte.
    end: usize,
}

impl Run {
    #[inline]
    fn parse(data: &[u8], at: usize, k: usize) -> Result<Run, BadPostings> {
        let head = *data
            .get(at)
            .ok_or(BadPostings("positions run past the region"))?;
        let (width, count) = (u32::from(head % 33), usize::from(head / 33));
        if count > MAX_EXCEPTIONS {
            return Err(BadPostings("positions run head out of range"));
        }
        let bits = at + 1 + 2 * count;
        let end = bits + (k * width as usize).div_ceil(8);
        if end > data.len() {
            return Err(BadPostings("positions run past the region"));
        }
        Ok(Run {
            width,
            exceptions: at + 1,
            bits,
            end,
        })
    }

    /// Checks the run's exceptions: ascending indexes inside its `k`
    /// values, each value fitting in u32.
    fn check(&self, data: &[u8], k: usize) -> Result<(), BadPostings> {
        let mut next = 0;
        for e in data[self.exceptions..self.bits].chunks_exact(2) {
            let (i, high) = (usize::from(e[0]), u64::from(e[1]));
            if i < next || i >= k || (high << self.width) > u64::from(u32::MAX) {
                return Err(BadPostings("positions exception out of range"));
            }
            next = i + 1;
        }
        Ok(())
    }

    /// The run's `k` values into `out[..k]`.
    #[inline]
    fn decode(&self, packer: &BitPacker4x, data: &[u8], k: usize, out: &mut [u32; RUN_LEN]) {
        let w = self.width as usize;
        if k == RUN_LEN {
            packer.decompress(&data[self.bits..self.end], out, w as u8);
        } else if w == 0 {
            out[..k].fill(0);
        } else {
            let mask = (1u64 << w) - 1;
            let fast = self.end + 7 <= data.len();
            for (j, o) in out[..k].iter_mut().enumerate() {
                let bit = j * w;
                let at = self.bits + bit / 8;
                let word = match fast {
                    // Every 8-byte load lies in the data.
                    true => u64::from_le_bytes(data[at..at + 8].try_into().expect("8 bytes")),
                    false => load_le(data, at),
                };
                *o = ((word >> (bit % 8)) & mask) as u32;
            }
        }
        for e in data[self.exceptions..self.bits].chunks_exact(2) {
            if let Some(o) = out[..k].get_mut(usize::from(e[0])) {
                *o |= (u64::from(e[1]) << w) as u32;
            }
        }
    }
}

/// Eight bytes from `at` as a little-endian u64, zeros past the end.
fn load_le(data: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    let rest = data.get(at..).unwrap_or(&[]);
    let n = rest.len().min(8);
    b[..n].copy_from_slice(&rest[..n]);
    u64::from_le_bytes(b)
}

/// Turns a posting's first position and gaps - 1 (`v`, not empty) into
/// its positions, in place, eight sums at a time. In wrapping arithmetic:
/// positions past u32::MAX (a damaged run) wrap, which breaks their
/// ascent; [`Positions::decode_all`] checks it.
#[inline]
fn to_positions(v: &mut [u32]) {
    if let Some((&mut first, gaps)) = v.split_first_mut() {
        kernels::strict_prefix_sum(gaps, first);
    }
}

/// No block or posting read yet.
const NONE: usize = usize::MAX;

/// Reads one term's positions posting by posting ([`Positions::read`]).
/// It keeps what the last read found: the block's first positions, where
/// the next posting's gaps start, and the last run of gaps it decoded,
/// so a reader going up a block decodes each of its runs once. Use one
/// per term.
#[derive(Clone)]
pub struct PositionsReader {
    packer: BitPacker4x,
    /// The block read last, its postings' first positions, the index of
    /// each posting's first gap among the block's, its gaps in all and
    /// where its first run of gaps starts.
    block: usize,
    firsts: [u32; RUN_LEN],
    gap_starts: [usize; RUN_LEN],
    gaps: usize,
    gaps_at: usize,
    /// Versions 2 and 3: the posting read last in the block, and the data
    /// offset past its positions.
    index: usize,
    next: usize,
    /// A run of gaps at or before the next posting's first: its number
    /// in the block and where it starts.
    run: usize,
    run_at: usize,
    /// The run whose values `values` holds.
    decoded: usize,
    values: [u32; RUN_LEN],
}

impl Default for PositionsReader {
    fn default() -> Self {
        PositionsReader {
            packer: BitPacker4x::new(),
            block: NONE,
            firsts: [0; RUN_LEN],
            gap_starts: [0; RUN_LEN],
            gaps: 0,
            gaps_at: 0,
            index: NONE,
            next: 0,
            run: 0,
            run_at: 0,
            decoded: NONE,
            values: [0; RUN_LEN],
        }
    }
}

/// A term's positions region, parsed: cheap to build, checked as it is read.
#[derive(Clone, Copy, Debug)]
pub struct Positions<'a> {
    offsets: &'a [u8],
    data: &'a [u8],
    nblocks: usize,
    df: usize,
    packed: bool,
}

impl<'a> Positions<'a> {
    /// Splits the region of a term with `df` postings, of a segment of
    /// format `version`.
    pub fn parse(region: &'a [u8], df: u32, version: u32) -> Result<Positions<'a>, BadPostings> {
        let nblocks = (df as usize).div_ceil(BLOCK_LEN);
        let n = 4 * nblocks.saturating_sub(1);
        if region.len() < n {
            return Err(BadPostings("positions block offsets truncated"));
        }
        let (offsets, data) = region.split_at(n);
        Ok(Positions {
            offsets,
            data,
            nblocks,
            df: df as usize,
            packed: version >= PACKED_VERSION,
        })
    }

    /// Posting blocks the region covers.
    pub fn num_blocks(&self) -> usize {
        self.nblocks
    }

    /// Where block `b`'s positions start within the data.
    pub fn block_start(&self, b: usize) -> usize {
        match b {
            0 => 0,
            _ => u32::from_le_bytes(
                self.offsets[4 * (b - 1)..4 * b]
                    .try_into()
                    .expect("4 bytes"),
            ) as usize,
        }
    }

    /// Bytes of the data after the block offsets.
    pub fn data_len(&self) -> usize {
        self.data.len()
    }

    /// Postings in block `b`.
    fn block_len(&self, b: usize) -> usize {
        (self.df - b * BLOCK_LEN).min(BLOCK_LEN)
    }

    /// Every posting's positions, appended to `out` posting after posting
    /// (`tfs` are the whole list's frequencies), checking that each block
    /// starts at its offset, every run is well formed and they fill the
    /// region exactly.
    pub fn decode_all(&self, tfs: &[u32], out: &mut Vec<u32>) -> Result<(), BadPostings> {
        if tfs.len() != self.df {
            return Err(BadPostings("positions for another number of postings"));
        }
        let mut r = PositionsReader::default();
        let (mut one, mut gaps) = (Vec::new(), Vec::new());
        let mut end = 0;
        for (b, block) in tfs.chunks(BLOCK_LEN).enumerate() {
            if self.block_start(b) != end {
                return Err(BadPostings(
                    "a positions block does not start where the previous one ends",
                ));
            }
            if !self.packed {
                for i in 0..block.len() {
                    self.read(&mut r, b, i, block, &mut one)?;
                    out.extend_from_slice(&one);
                }
                end = r.next;
                continue;
            }
            if block.contains(&0) {
                return Err(BadPostings("a posting without positions"));
            }
            let run = |at: usize, k: usize, into: &mut [u32; RUN_LEN]| {
                let run = Run::parse(self.data, at, k)?;
                run.check(self.data, k)?;
                run.decode(&r.packer, self.data, k, into);
                Ok::<_, BadPostings>(run.end)
            };
            let mut firsts = [0; RUN_LEN];
            end = run(end, block.len(), &mut firsts)?;
            let total: usize = block.iter().map(|&t| t as usize - 1).sum();
            gaps.clear();
            let mut values = [0; RUN_LEN];
            for from in (0..total).step_by(RUN_LEN) {
                let k = (total - from).min(RUN_LEN);
                end = run(end, k, &mut values)?;
                gaps.extend_from_slice(&values[..k]);
            }
            let mut g = gaps.iter();
            for (&first, &tf) in firsts.iter().zip(block) {
                let at = out.len();
                out.push(first);
                out.extend(g.by_ref().take(tf as usize - 1));
                to_positions(&mut out[at..]);
                if out[at..].windows(2).any(|w| w[0] >= w[1]) {
                    return Err(BadPostings("position out of range"));
                }
            }
        }
        if end != self.data.len() {
            return Err(BadPostings("bytes past the last position"));
        }
        Ok(())
    }

    /// The positions of posting `index` of block `b` into `out` (cleared
    /// first). `tfs` are the block's frequencies, all of them (as
    /// `Postings::decode_tfs` or a tail's `decode_docs` give them); `r`
    /// is this term's reader, which resumes from its last read when that
    /// was of an earlier posting of the same block.
    pub fn read(
        &self,
        r: &mut PositionsReader,
        b: usize,
        index: usize,
        tfs: &[u32],
        out: &mut Vec<u32>,
    ) -> Result<(), BadPostings> {
        if b >= self.nblocks || index >= tfs.len() || tfs.len() != self.block_len(b) {
            return Err(BadPostings("positions of a posting past the list"));
        }
        out.clear();
        if self.packed {
            self.read_packed(r, b, index, tfs, out)
        } else {
            self.read_varints(r, b, index, tfs, out)
        }
    }

    #[inline]
    fn read_packed(
        &self,
        r: &mut PositionsReader,
        b: usize,
        index: usize,
        tfs: &[u32],
        out: &mut Vec<u32>,
    ) -> Result<(), BadPostings> {
        if r.block != b {
            let firsts = Run::parse(self.data, self.block_start(b), tfs.len())?;
            firsts.decode(&r.packer, self.data, tfs.len(), &mut r.firsts);
            // Where each posting's gaps start (a corrupt frequency of 0
            // counts none; the posting read is checked below).
            let mut gaps = 0;
            for (start, &t) in r.gap_starts.iter_mut().zip(tfs) {
                *start = gaps;
                gaps += t.saturating_sub(1) as usize;
            }
            (r.block, r.gaps, r.gaps_at) = (b, gaps, firsts.end);
            (r.run, r.run_at, r.decoded) = (0, firsts.end, NONE);
        }
        let tf = tfs[index] as usize;
        if tf == 0 {
            return Err(BadPostings("positions for other frequencies"));
        }
        out.push(r.firsts[index]);
        let g = r.gap_starts[index];
        if g + tf - 1 > r.gaps {
            return Err(BadPostings("positions for other frequencies"));
        }
        // The gaps `g..g + tf - 1`, run by run.
        let (mut next, last) = (g, g + tf - 1);
        while next < last {
            let run = next / RUN_LEN;
            if r.decoded != run {
                let k = |run: usize| (r.gaps - run * RUN_LEN).min(RUN_LEN);
                if r.run > run {
                    (r.run, r.run_at) = (0, r.gaps_at);
                }
                while r.run < run {
                    r.run_at = Run::parse(self.data, r.run_at, k(r.run))?.end;
                    r.run += 1;
                }
                let k = k(run);
                Run::parse(self.data, r.run_at, k)?.decode(&r.packer, self.data, k, &mut r.values);
                r.decoded = run;
            }
            let from = next - run * RUN_LEN;
            let take = (RUN_LEN - from).min(last - next);
            out.extend_from_slice(&r.values[from..from + take]);
            next += take;
        }
        to_positions(out);
        Ok(())
    }

    fn read_varints(
        &self,
        r: &mut PositionsReader,
        b: usize,
        index: usize,
        tfs: &[u32],
        out: &mut Vec<u32>,
    ) -> Result<(), BadPostings> {
        let (first, mut pos) = match r.block == b && r.index < index {
            true => (r.index + 1, r.next),
            false => (0, self.block_start(b)),
        };
        if pos > self.data.len() {
            return Err(BadPostings("positions block offset out of range"));
        }
        let skip: u64 = tfs[first..index].iter().map(|&t| u64::from(t)).sum();
        pos = skip_varints(self.data, pos, skip).ok_or(BadPostings("bad position varint"))?;
        let mut prev: Option<u32> = None;
        for _ in 0..tfs[index] {
            let v = get_varint(self.data, &mut pos).ok_or(BadPostings("bad position varint"))?;
            let p = match prev {
                None => u32::try_from(v).ok(),
                Some(q) => u32::try_from(v)
                    .ok()
                    .and_then(|v| q.checked_add(1)?.checked_add(v)),
            }
            .ok_or(BadPostings("position out of range"))?;
            out.push(p);
            prev = Some(p);
        }
        (r.block, r.index, r.next) = (b, index, pos);
        Ok(())
    }
}

/// The offset past the `n` varints from `pos` (past the `n`-th byte below
/// 0x80, each varint's last), `None` when the data ends first: eight bytes
/// at a time, by counting their terminators. The skipped varints' values
/// are not checked (only read ones are, and `decode_all` checks all).
fn skip_varints(data: &[u8], mut pos: usize, mut n: u64) -> Option<usize> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while n > 0 {
        match data.get(pos..pos + 8) {
            Some(chunk) => {
                let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
                let mut ends = !w & HIGH;
                let k = u64::from(ends.count_ones());
                if k < n {
                    n -= k;
                    pos += 8;
                } else {
                    for _ in 1..n {
                        ends &= ends - 1;
                    }
                    return Some(pos + ends.trailing_zeros() as usize / 8 + 1);
                }
            }
            None => {
                let b = *data.get(pos)?;
                pos += 1;
                n -= u64::from(b < 0x80);
            }
        }
    }
    Some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The versions 2 and 3 encoding, which this build only reads.
    fn encode_varints(tfs: &[u32], positions: &[u32], out: &mut Vec<u8>) {
        let nblocks = tfs.len().div_ceil(BLOCK_LEN);
        let head = out.len();
        out.resize(head + 4 * nblocks.saturating_sub(1), 0);
        let data = out.len();
        let mut at = 0;
        for (i, &tf) in tfs.iter().enumerate() {
            if i > 0 && i % BLOCK_LEN == 0 {
                let off = (out.len() - data) as u32;
                let slot = head + 4 * (i / BLOCK_LEN - 1);
                out[slot..slot + 4].copy_from_slice(&off.to_le_bytes());
            }
            let mut prev: Option<u32> = None;
            for &p in &positions[at..at + tf as usize] {
                let v = prev.map_or(p, |q| p - q - 1);
                crate::format::put_varint(out, u64::from(v));
                prev = Some(p);
            }
            at += tf as usize;
        }
    }

    /// Lists of strictly ascending positions, one per posting: spread
    /// from dense runs to gaps near u32::MAX, so runs of every width and
    /// with exceptions are made.
    fn lists() -> impl Strategy<Value = Vec<Vec<u32>>> {
        let list = (1usize..40, 0u32..6, any::<u64>()).prop_map(|(tf, scale, seed)| {
            let mut x = seed | 1;
            let mut p = 0u64;
            (0..tf)
                .map(|k| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Mostly small gaps, one in 16 large.
                    let gap = match x % 16 {
                        0 => x >> (40 + 4 * scale as u64),
                        _ => (x >> 32) % (1 << (2 * scale + 1)),
                    };
                    p += u64::from(k > 0) + gap;
                    p.min(u64::from(u32::MAX) - (tf - k) as u64) as u32
                })
                .collect::<Vec<u32>>()
        });
        prop::collection::vec(list, 1..300).prop_map(|mut ls| {
            for l in &mut ls {
                l.dedup();
            }
            ls
        })
    }

    fn check_round_trip(lists: &[Vec<u32>], version: u32) {
        let tfs: Vec<u32> = lists.iter().map(|l| l.len() as u32).collect();
        let all: Vec<u32> = lists.concat();
        let mut region = vec![0xee];
        if version >= PACKED_VERSION {
            encode(&tfs, &all, &mut region).unwrap();
        } else {
            encode_varints(&tfs, &all, &mut region);
        }
        let p = Positions::parse(&region[1..], tfs.len() as u32, version).unwrap();
        assert_eq!(p.num_blocks(), tfs.len().div_ceil(BLOCK_LEN));
        let mut got = Vec::new();
        p.decode_all(&tfs, &mut got).unwrap();
        assert_eq!(got, all);
        // Each posting with a fresh reader, and with one reader going up
        // the list (skipping some postings), then back to its start.
        let mut out = Vec::new();
        let mut up = PositionsReader::default();
        for (b, block) in tfs.chunks(BLOCK_LEN).enumerate() {
            let postings = &lists[b * BLOCK_LEN..b * BLOCK_LEN + block.len()];
            for (j, l) in postings.iter().enumerate() {
                p.read(&mut PositionsReader::default(), b, j, block, &mut out)
                    .unwrap();
                assert_eq!(&out, l, "block {b} posting {j} alone");
                if j % 3 != 1 {
                    p.read(&mut up, b, j, block, &mut out).unwrap();
                    assert_eq!(&out, l, "block {b} posting {j} resumed");
                }
            }
            for j in [block.len() - 1, 0] {
                p.read(&mut up, b, j, block, &mut out).unwrap();
                assert_eq!(out, postings[j], "block {b} posting {j} again");
            }
        }
    }

    proptest! {
        #[test]
        fn positions_round_trip_alone_resumed_and_whole(ls in lists()) {
            check_round_trip(&ls, PACKED_VERSION);
            check_round_trip(&ls, 3);
        }

        /// Damaged regions give errors, never a panic or an endless walk.
        #[test]
        fn damaged_regions_give_errors(ls in lists(), at in any::<prop::sample::Index>(),
                                       bit in 0u8..8, cut in any::<prop::sample::Index>()) {
            let tfs: Vec<u32> = ls.iter().map(|l| l.len() as u32).collect();
            let mut region = Vec::new();
            encode(&tfs, &ls.concat(), &mut region).unwrap();
            let i = at.index(region.len());
            let mut flipped = region.clone();
            flipped[i] ^= 1 << bit;
            let cut = &region[..cut.index(region.len())];
            for bytes in [&flipped[..], cut] {
                for version in [3, PACKED_VERSION] {
                    let Ok(p) = Positions::parse(bytes, tfs.len() as u32, version) else {
                        continue;
                    };
                    let _ = p.decode_all(&tfs, &mut Vec::new());
                    let (mut out, mut r) = (Vec::new(), PositionsReader::default());
                    for (b, block) in tfs.chunks(BLOCK_LEN).enumerate() {
                        for j in 0..block.len() {
                            let _ = p.read(&mut r, b, j, block, &mut out);
                        }
                    }
                }
            }
            // The truncated region never decodes whole.
            if cut.len() < region.len()
                && let Ok(p) = Positions::parse(cut, tfs.len() as u32, PACKED_VERSION)
            {
                prop_assert!(p.decode_all(&tfs, &mut Vec::new()).is_err());
            }
        }
    }

    #[test]
    fn runs_take_the_fewest_bytes_with_at_most_six_exceptions() {
        let packer = BitPacker4x::new();
        let mut out = Vec::new();
        // 128 values of 3 bits and two of 10: width 3 and two exceptions
        // (1 + 4 + 48 bytes) beat width 10 (161 bytes).
        let mut v = vec![5u32; 128];
        v[7] = 1000;
        v[100] = 513;
        put_run(&packer, &v, &mut out);
        assert_eq!(out[0], 3 + 33 * 2);
        assert_eq!(out.len(), 1 + 4 + 48);
        let decoded = |run: &[u8], k: usize| {
            let r = Run::parse(run, 0, k).unwrap();
            r.check(run, k).unwrap();
            assert_eq!(r.end, run.len());
            let mut got = [0; RUN_LEN];
            r.decode(&packer, run, k, &mut got);
            got[..k].to_vec()
        };
        assert_eq!(decoded(&out, 128), v);
        // A shorter run, packed value after value.
        out.clear();
        put_run(&packer, &v[..100], &mut out);
        assert_eq!((out[0], out.len()), (3 + 33, 1 + 2 + 38));
        assert_eq!(decoded(&out, 100), v[..100]);
        // Seven large values: no width below theirs takes them all.
        out.clear();
        for i in 0..7 {
            v[10 * i] = 1023;
        }
        put_run(&packer, &v, &mut out);
        assert_eq!(out[0], 10);
        // A value 9 bits over the rest widens the run to it.
        out.clear();
        let w = [1u32, 1 << 9, 0];
        put_run(&packer, &w, &mut out);
        assert_eq!(out[0] % 33, 2);
        // All zeros take the head alone; u32::MAX values width 32.
        out.clear();
        put_run(&packer, &[0; 128], &mut out);
        assert_eq!(out, [0]);
        out.clear();
        put_run(&packer, &[u32::MAX; 3], &mut out);
        assert_eq!((out[0], out.len()), (32, 13));
        assert_eq!(decoded(&out, 3), [u32::MAX; 3]);
        out.clear();
        put_run(&packer, &[u32::MAX; 128], &mut out);
        assert_eq!(decoded(&out, 128), [u32::MAX; 128]);
    }

    #[test]
    fn bad_input_is_refused() {
        let mut out = Vec::new();
        assert!(encode(&[2], &[3, 3], &mut out).is_err());
        assert!(encode(&[2], &[3], &mut out).is_err());
        assert!(encode(&[1], &[3, 4], &mut out).is_err());
        // Heads past 6 exceptions, runs past the data; exceptions out of
        // order, past the run or overflowing.
        assert!(Run::parse(&[231], 0, 0).is_err());
        assert!(Run::parse(&[2 + 33, 0, 1], 0, 4).is_err());
        let checked = |run: &[u8], k| Run::parse(run, 0, k).unwrap().check(run, k);
        assert!(checked(&[2 + 66, 1, 1, 0, 1, 0], 4).is_err());
        assert!(checked(&[2 + 33, 4, 1, 0], 4).is_err());
        assert!(checked(&[30 + 33, 0, 4, 0, 0, 0, 0], 1).is_err());
        assert!(checked(&[30 + 33, 0, 3, 0, 0, 0, 0], 1).is_ok());
    }

    #[test]
    fn skipping_varints_counts_their_last_bytes() {
        let mut data = Vec::new();
        let values: Vec<u64> = (0..300u64).map(|i| (i * 7919) % (1 << (i % 30))).collect();
        let mut ends = vec![0];
        for &v in &values {
            crate::format::put_varint(&mut data, v);
            ends.push(data.len());
        }
        for start in [0usize, 1, 5, 17, 150] {
            for n in 0..values.len() - start {
                let got = skip_varints(&data, ends[start], n as u64);
                assert_eq!(got, Some(ends[start + n]), "from {start} skip {n}");
            }
        }
        assert_eq!(skip_varints(&data, 0, values.len() as u64 + 1), None);
    }
}
