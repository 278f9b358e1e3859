//! Ord arrays: how a sortable field is kept for sorting.
//!
//! Per segment and sortable field: the sorted distinct values, and per
//! document its *ord* (the value's rank among them) packed at 1, 2, 4, 8,
//! 16 or 32 bits, the smallest width whose range holds every ord plus one
//! reserved ord. The reserved ord, all ones at the chosen width, marks a
//! document without a value; comparators sort it after every value in both
//! directions. Ords are packed little-endian: document `d`'s ord occupies
//! bits `d*w .. d*w+w` of the byte stream, least significant bit first.
//! Every [`ORD_BLOCK`] documents the minimum and maximum present ord are
//! recorded so sorted search can skip blocks (both are the reserved ord in
//! a block where no document has a value).

/// Documents per min/max summary entry.
pub const ORD_BLOCK: usize = 4096;

/// Sorted numeric values per frame of reference.
pub const VALUE_FRAME: usize = 128;
const FRAME_HEADER: usize = 13;
const KEY_PADDING: usize = 16;

/// The order-preserving `u64` key of an `i64` (sign bit flipped).
pub fn i64_to_key(v: i64) -> u64 {
    (v as u64) ^ (1 << 63)
}

/// Inverse of [`i64_to_key`].
pub fn key_to_i64(k: u64) -> i64 {
    (k ^ (1 << 63)) as i64
}

/// The order-preserving `u64` key of an `f64` under `f64::total_cmp`.
pub fn f64_to_key(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

/// Inverse of [`f64_to_key`].
pub fn key_to_f64(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// Appends sorted numeric keys in frames of [`VALUE_FRAME`]: a table of
/// `{ u64 base, u32 offset, u8 bits }` per frame, then each frame's
/// `key - base` packed at `bits` bits, least significant bit first, then 16
/// zero bytes so any key can be read with one 16-byte load.
pub fn encode_keys(keys: &[u64], out: &mut Vec<u8>) {
    let mut data = Vec::new();
    for frame in keys.chunks(VALUE_FRAME) {
        let base = frame[0];
        let bits = frame
            .iter()
            .map(|k| 64 - (k - base).leading_zeros())
            .max()
            .unwrap_or(0);
        out.extend_from_slice(&base.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.push(bits as u8);
        let start = data.len();
        data.resize(start + (frame.len() * bits as usize).div_ceil(8), 0);
        for (j, k) in frame.iter().enumerate() {
            let v = u128::from(k - base);
            let bit = j * bits as usize;
            for (n, byte) in (v << (bit % 8)).to_le_bytes().iter().enumerate() {
                if let Some(d) = data.get_mut(start + bit / 8 + n) {
                    *d |= byte;
                }
            }
        }
    }
    out.extend_from_slice(&data);
    out.extend_from_slice(&[0; KEY_PADDING]);
}

/// Whether `bytes` is a well-formed [`encode_keys`] array of `count` keys.
pub fn check_keys(bytes: &[u8], count: usize) -> bool {
    let frames = count.div_ceil(VALUE_FRAME);
    let Some(data_len) = bytes.len().checked_sub(frames * FRAME_HEADER + KEY_PADDING) else {
        return false;
    };
    (0..frames).all(|f| {
        let h = &bytes[f * FRAME_HEADER..(f + 1) * FRAME_HEADER];
        let off = u32::from_le_bytes(h[8..12].try_into().expect("4")) as usize;
        let bits = h[12] as usize;
        let n = (count - f * VALUE_FRAME).min(VALUE_FRAME);
        bits <= 64 && off + (n * bits).div_ceil(8) <= data_len
    })
}

/// Key `i` of an array that [`check_keys`] accepted.
#[inline]
pub fn key_at(bytes: &[u8], count: usize, i: usize) -> u64 {
    let frames = count.div_ceil(VALUE_FRAME);
    let h = &bytes[(i / VALUE_FRAME) * FRAME_HEADER..][..FRAME_HEADER];
    let base = u64::from_le_bytes(h[..8].try_into().expect("8"));
    let off = u32::from_le_bytes(h[8..12].try_into().expect("4")) as usize;
    let bits = u32::from(h[12]);
    let bit = (i % VALUE_FRAME) * bits as usize;
    let at = frames * FRAME_HEADER + off + bit / 8;
    let window = u128::from_le_bytes(bytes[at..at + 16].try_into().expect("16"));
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    base.wrapping_add((window >> (bit % 8)) as u64 & mask)
}

/// Where `key` falls among the ascending keys of an array that
/// [`check_keys`] accepted: `Ok(i)` when key `i` equals it, `Err(i)` when
/// it sorts between keys `i - 1` and `i`. The frame is found by its base
/// (its smallest key); its header is read once, and each probe inside it
/// is one unaligned load and a shift.
pub fn find_key(bytes: &[u8], count: usize, key: u64) -> Result<usize, usize> {
    let frames = count.div_ceil(VALUE_FRAME);
    let header = |f: usize| &bytes[f * FRAME_HEADER..(f + 1) * FRAME_HEADER];
    let base_of = |f: usize| u64::from_le_bytes(header(f)[..8].try_into().expect("8"));
    // Frames whose base is at most `key`; the last of them may hold it.
    let (mut lo, mut hi) = (0, frames);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if base_of(mid) <= key {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let Some(f) = lo.checked_sub(1) else {
        return Err(0);
    };
    let h = header(f);
    let base = base_of(f);
    let data = frames * FRAME_HEADER + u32::from_le_bytes(h[8..12].try_into().expect("4")) as usize;
    let bits = usize::from(h[12]);
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let at = |j: usize| {
        let bit = j * bits;
        let w = u128::from_le_bytes(bytes[data + bit / 8..][..16].try_into().expect("16"));
        base.wrapping_add((w >> (bit % 8)) as u64 & mask)
    };
    let first = f * VALUE_FRAME;
    let (mut lo, mut hi) = (0, (count - first).min(VALUE_FRAME));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match at(mid).cmp(&key) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(first + mid),
        }
    }
    Err(first + lo)
}

/// The smallest supported width that holds ords `0..cardinality` plus the
/// reserved missing ord.
pub fn ord_width(cardinality: u64) -> u8 {
    for w in [1u8, 2, 4, 8, 16, 32] {
        if cardinality < (1u64 << w) {
            return w;
        }
    }
    // Cardinality is bounded by the segment's document count (< 2^31).
    32
}

/// The reserved ord meaning "no value" at width `w`.
pub fn missing_ord(width: u8) -> u32 {
    if width == 32 {
        u32::MAX
    } else {
        (1u32 << width) - 1
    }
}

/// Bytes taken by `n` ords at width `w`, padded to a multiple of 4 bytes.
pub fn packed_len(n: usize, width: u8) -> usize {
    (n * width as usize).div_ceil(8).next_multiple_of(4)
}

/// Appends `ords` packed at `width` (see the module doc).
pub fn pack(ords: &[u32], width: u8, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + packed_len(ords.len(), width), 0);
    let dst = &mut out[start..];
    match width {
        8 => {
            for (o, &v) in dst.iter_mut().zip(ords) {
                *o = v as u8;
            }
        }
        16 => {
            for (o, &v) in dst.chunks_exact_mut(2).zip(ords) {
                o.copy_from_slice(&(v as u16).to_le_bytes());
            }
        }
        32 => {
            for (o, &v) in dst.chunks_exact_mut(4).zip(ords) {
                o.copy_from_slice(&v.to_le_bytes());
            }
        }
        1 | 2 | 4 => {
            let per = 8 / width as usize;
            for (i, &v) in ords.iter().enumerate() {
                dst[i / per] |= (v as u8) << ((i % per) * width as usize);
            }
        }
        _ => unreachable!("ord width {width}"),
    }
}

/// Reads ord `doc` of an array packed at width `W`, specialised per width.
/// `bytes` must hold at least [`packed_len`] bytes for the segment (checked
/// when the section is opened).
#[inline(always)]
pub fn get_w<const W: u8>(bytes: &[u8], doc: usize) -> u32 {
    match W {
        1 => u32::from((bytes[doc >> 3] >> (doc & 7)) & 1),
        2 => u32::from((bytes[doc >> 2] >> ((doc & 3) * 2)) & 3),
        4 => u32::from((bytes[doc >> 1] >> ((doc & 1) * 4)) & 15),
        8 => u32::from(bytes[doc]),
        // Slices, so each read is one bounds check and one load.
        16 => u32::from(u16::from_le_bytes(
            bytes[2 * doc..2 * doc + 2].try_into().expect("two bytes"),
        )),
        _ => u32::from_le_bytes(bytes[4 * doc..4 * doc + 4].try_into().expect("four bytes")),
    }
}

/// Reads ord `doc` of an array packed at `width` (dispatching to [`get_w`]).
#[inline]
pub fn get(bytes: &[u8], width: u8, doc: usize) -> u32 {
    match width {
        1 => get_w::<1>(bytes, doc),
        2 => get_w::<2>(bytes, doc),
        4 => get_w::<4>(bytes, doc),
        8 => get_w::<8>(bytes, doc),
        16 => get_w::<16>(bytes, doc),
        _ => get_w::<32>(bytes, doc),
    }
}

/// Per-[`ORD_BLOCK`] (min, max) of the present ords; the missing ord for both
/// where a block has no value.
pub fn block_bounds(ords: &[u32], width: u8) -> Vec<(u32, u32)> {
    let missing = missing_ord(width);
    ords.chunks(ORD_BLOCK)
        .map(|c| {
            let mut lo = missing;
            let mut hi = 0;
            let mut any = false;
            for &o in c {
                if o != missing {
                    lo = lo.min(o);
                    hi = hi.max(o);
                    any = true;
                }
            }
            if any { (lo, hi) } else { (missing, missing) }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_cardinality() {
        assert_eq!(ord_width(0), 1);
        assert_eq!(ord_width(1), 1);
        assert_eq!(ord_width(2), 2);
        assert_eq!(ord_width(3), 2);
        assert_eq!(ord_width(4), 4);
        assert_eq!(ord_width(15), 4);
        assert_eq!(ord_width(16), 8);
        assert_eq!(ord_width(255), 8);
        assert_eq!(ord_width(256), 16);
        assert_eq!(ord_width(65_535), 16);
        assert_eq!(ord_width(65_536), 32);
    }

    #[test]
    fn pack_and_get_round_trip_at_every_width() {
        for w in [1u8, 2, 4, 8, 16, 32] {
            let m = missing_ord(w);
            let ords: Vec<u32> = (0..1000u64)
                .map(|i| ((i * 2_654_435_761) % (u64::from(m) + 1)) as u32)
                .collect();
            let mut out = vec![0xEE];
            pack(&ords, w, &mut out);
            assert_eq!(out.len(), 1 + packed_len(ords.len(), w));
            for (d, &o) in ords.iter().enumerate() {
                assert_eq!(get(&out[1..], w, d), o, "width {w} doc {d}");
            }
        }
    }

    #[test]
    fn numeric_keys_round_trip_in_frames() {
        let mut vals: Vec<i64> = (0..1000).map(|i| i * i * 7 - 3000).collect();
        vals.extend([i64::MIN, -1, 0, 1, i64::MAX]);
        vals.sort_unstable();
        vals.dedup();
        let keys: Vec<u64> = vals.iter().map(|&v| i64_to_key(v)).collect();
        let mut out = vec![0xAB];
        encode_keys(&keys, &mut out);
        let bytes = &out[1..];
        assert!(check_keys(bytes, keys.len()));
        assert!(!check_keys(&bytes[..bytes.len() - 1], keys.len()));
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(key_at(bytes, keys.len(), i), k);
            assert_eq!(key_to_i64(k), vals[i]);
            assert_eq!(find_key(bytes, keys.len(), k), Ok(i));
            // Between keys (or past the ends), where a binary search of
            // the keys themselves puts it.
            for probe in [k.wrapping_sub(1), k.wrapping_add(1)] {
                assert_eq!(
                    find_key(bytes, keys.len(), probe),
                    keys.binary_search(&probe),
                    "probe {probe}"
                );
            }
        }
        // Dense values take a few bits each.
        let dense: Vec<u64> = (0..100_000u64).map(|i| i64_to_key(i as i64)).collect();
        let mut out = Vec::new();
        encode_keys(&dense, &mut out);
        assert!(out.len() < 100_000 * 2, "{} bytes", out.len());
        for f in [-0.0f64, 0.0, -1.5, 2.25, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(key_to_f64(f64_to_key(f)).to_bits(), f.to_bits());
        }
        assert!(f64_to_key(-1.5) < f64_to_key(-0.0) && f64_to_key(-0.0) < f64_to_key(0.0));
    }

    #[test]
    fn block_bounds_ignore_missing() {
        let mut ords = vec![3u32; ORD_BLOCK + 2];
        ords[5] = 1;
        ords[ORD_BLOCK] = 15;
        ords[ORD_BLOCK + 1] = 15;
        assert_eq!(block_bounds(&ords, 4), vec![(1, 3), (15, 15)]);
    }
}
