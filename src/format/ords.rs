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
        16 => u32::from(u16::from_le_bytes([bytes[2 * doc], bytes[2 * doc + 1]])),
        _ => u32::from_le_bytes([
            bytes[4 * doc],
            bytes[4 * doc + 1],
            bytes[4 * doc + 2],
            bytes[4 * doc + 3],
        ]),
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
    fn block_bounds_ignore_missing() {
        let mut ords = vec![3u32; ORD_BLOCK + 2];
        ords[5] = 1;
        ords[ORD_BLOCK] = 15;
        ords[ORD_BLOCK + 1] = 15;
        assert_eq!(block_bounds(&ords, 4), vec![(1, 3), (15, 15)]);
    }
}
