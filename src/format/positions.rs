//! Token positions (segment section 7), stored apart from doc ids and
//! frequencies so that a query without phrases never reads them.
//!
//! One region per term of a field with positions, at the offset its
//! dictionary entry gives within the section. With `n = doc_freq` and the
//! posting blocks of [`BLOCK_LEN`] documents (`nblocks = ceil(n / 128)`):
//!
//! ```text
//! (nblocks - 1) x u32 block_offset   where the positions of blocks 1.. start, within `data`
//! data: per posting in posting order, tf varints: its first position,
//!       then each next position's gap - 1 (positions strictly ascend)
//! ```
//!
//! A posting's positions are as many as its frequency, which the posting
//! block stores, so a reader jumps to a block's positions by its offset
//! and to a posting within it by skipping the varints of the postings
//! before it (the block's frequencies say how many).

use super::postings::{BLOCK_LEN, BadPostings};
use super::{get_varint, put_varint};

/// Appends a term's positions region: `positions` holds, posting after
/// posting, `tfs[i]` strictly ascending positions each.
pub fn encode(tfs: &[u32], positions: &[u32], out: &mut Vec<u8>) -> Result<(), BadPostings> {
    let nblocks = tfs.len().div_ceil(BLOCK_LEN);
    let head = out.len();
    out.resize(head + 4 * nblocks.saturating_sub(1), 0);
    let data = out.len();
    let mut at = 0;
    for (i, &tf) in tfs.iter().enumerate() {
        if i > 0 && i % BLOCK_LEN == 0 {
            let off = u32::try_from(out.len() - data)
                .map_err(|_| BadPostings("a term's positions exceed 4 GiB"))?;
            let slot = head + 4 * (i / BLOCK_LEN - 1);
            out[slot..slot + 4].copy_from_slice(&off.to_le_bytes());
        }
        let mine = positions
            .get(at..at + tf as usize)
            .ok_or(BadPostings("fewer positions than frequencies"))?;
        at += tf as usize;
        let mut prev: Option<u32> = None;
        for &p in mine {
            let v = match prev {
                None => p,
                Some(q) => p
                    .checked_sub(q + 1)
                    .ok_or(BadPostings("positions not strictly ascending"))?,
            };
            put_varint(out, u64::from(v));
            prev = Some(p);
        }
    }
    if at != positions.len() {
        return Err(BadPostings("more positions than frequencies"));
    }
    Ok(())
}

/// A term's positions region, parsed: cheap to build, checked as it is read.
#[derive(Clone, Copy, Debug)]
pub struct Positions<'a> {
    offsets: &'a [u8],
    data: &'a [u8],
    nblocks: usize,
}

impl<'a> Positions<'a> {
    /// Splits the region of a term with `df` postings.
    pub fn parse(region: &'a [u8], df: u32) -> Result<Positions<'a>, BadPostings> {
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

    /// Every posting's positions, appended to `out` posting after posting
    /// (`tfs` are the whole list's frequencies), checking that each block
    /// starts at its offset and that they fill the region exactly.
    pub fn decode_all(&self, tfs: &[u32], out: &mut Vec<u32>) -> Result<(), BadPostings> {
        if tfs.len().div_ceil(BLOCK_LEN) != self.nblocks {
            return Err(BadPostings("positions for another number of postings"));
        }
        let mut one = Vec::new();
        let mut end = 0;
        for (b, block) in tfs.chunks(BLOCK_LEN).enumerate() {
            if self.block_start(b) != end {
                return Err(BadPostings(
                    "a positions block does not start where the previous one ends",
                ));
            }
            for i in 0..block.len() {
                end = self.read(b, i, block, &mut one)?;
                out.extend_from_slice(&one);
            }
        }
        if end != self.data.len() {
            return Err(BadPostings("bytes past the last position"));
        }
        Ok(())
    }

    /// The positions of posting `index` of block `b` into `out` (cleared
    /// first). `tfs` are the block's frequencies, at least up to `index`
    /// (as `Postings::decode_tfs` or a tail's `decode_docs` give them).
    /// Returns the offset just past that posting's positions in the data.
    pub fn read(
        &self,
        b: usize,
        index: usize,
        tfs: &[u32],
        out: &mut Vec<u32>,
    ) -> Result<usize, BadPostings> {
        self.read_after(b, None, index, tfs, out)
    }

    /// [`Self::read`], resumed after an earlier posting of the same block:
    /// `after` is `(i, end)` with `i < index` and `end` what reading
    /// posting `i` of block `b` returned, so only the postings between are
    /// skipped (a reader going up a block reads each byte once).
    pub fn read_after(
        &self,
        b: usize,
        after: Option<(usize, usize)>,
        index: usize,
        tfs: &[u32],
        out: &mut Vec<u32>,
    ) -> Result<usize, BadPostings> {
        if b >= self.nblocks || index >= tfs.len() {
            return Err(BadPostings("positions of a posting past the list"));
        }
        let (first, mut pos) = match after {
            Some((i, end)) if i < index => (i + 1, end),
            _ => (0, self.block_start(b)),
        };
        if pos > self.data.len() {
            return Err(BadPostings("positions block offset out of range"));
        }
        let skip: u64 = tfs[first..index].iter().map(|&t| u64::from(t)).sum();
        pos = skip_varints(self.data, pos, skip).ok_or(BadPostings("bad position varint"))?;
        out.clear();
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
        Ok(pos)
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

    #[test]
    fn positions_round_trip_by_block_and_index() {
        for n in [1usize, 5, 127, 128, 129, 300] {
            let tfs: Vec<u32> = (0..n).map(|i| 1 + (i % 4) as u32).collect();
            let mut all = Vec::new();
            let mut lists = Vec::new();
            for (i, &tf) in tfs.iter().enumerate() {
                let l: Vec<u32> = (0..tf)
                    .map(|k| (i as u32 % 3) + k * (1 + i as u32))
                    .collect();
                all.extend_from_slice(&l);
                lists.push(l);
            }
            let mut region = vec![0xee];
            encode(&tfs, &all, &mut region).unwrap();
            let p = Positions::parse(&region[1..], n as u32).unwrap();
            assert_eq!(p.num_blocks(), n.div_ceil(BLOCK_LEN));
            let mut out = Vec::new();
            for (i, l) in lists.iter().enumerate() {
                let (b, j) = (i / BLOCK_LEN, i % BLOCK_LEN);
                let block_tfs = &tfs[b * BLOCK_LEN..(b * BLOCK_LEN + BLOCK_LEN).min(n)];
                p.read(b, j, block_tfs, &mut out).unwrap();
                assert_eq!(&out, l, "posting {i} of {n}");
            }
        }
        let mut out = Vec::new();
        assert!(encode(&[2], &[3, 3], &mut out).is_err());
        assert!(encode(&[2], &[3], &mut out).is_err());
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
