//! The length norm: one byte per document per text field, encoded exactly
//! like Lucene's `SmallFloat.intToByte4` and decoded like `byte4ToInt`.
//!
//! Lengths 0 to 23 are exact; beyond that the byte keeps four significant
//! bits (a three-bit mantissa below an implicit leading one). Both
//! directions are monotone, which is what makes impact bounds safe: a
//! smaller byte never decodes to a longer length.

/// Codes below this value stand for themselves.
const NUM_FREE_VALUES: u32 = 24;

fn long_to_int4(i: u64) -> u32 {
    let num_bits = 64 - i.leading_zeros();
    if num_bits < 4 {
        i as u32
    } else {
        let shift = num_bits - 4;
        let mut encoded = (i >> shift) as u32;
        encoded &= 0x07;
        encoded |= (shift + 1) << 3;
        encoded
    }
}

fn int4_to_long(i: u32) -> u64 {
    let bits = u64::from(i & 0x07);
    let shift = (i >> 3) as i32 - 1;
    if shift == -1 {
        bits
    } else {
        (bits | 0x08) << shift
    }
}

/// Encodes a field length (token count) into its norm byte.
pub fn length_to_norm(len: u32) -> u8 {
    let i = len.min(i32::MAX as u32);
    if i < NUM_FREE_VALUES {
        i as u8
    } else {
        (NUM_FREE_VALUES + long_to_int4(u64::from(i - NUM_FREE_VALUES))) as u8
    }
}

/// Decodes a norm byte into the length BM25 uses.
pub fn norm_to_length(norm: u8) -> u32 {
    let i = u32::from(norm);
    if i < NUM_FREE_VALUES {
        i
    } else {
        let decoded = u64::from(NUM_FREE_VALUES) + int4_to_long(i - NUM_FREE_VALUES);
        decoded.min(i32::MAX as u64) as u32
    }
}

/// All 256 decoded lengths, indexed by norm byte (computed once).
pub fn length_table() -> &'static [u32; 256] {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| std::array::from_fn(|b| norm_to_length(b as u8)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_lengths_are_exact() {
        for len in 0..24 {
            assert_eq!(norm_to_length(length_to_norm(len)), len);
        }
    }

    #[test]
    fn matches_lucene_reference_points() {
        // Values computed by hand from SmallFloat.intToByte4/byte4ToInt.
        assert_eq!(length_to_norm(24), 24);
        assert_eq!(length_to_norm(31), 31);
        assert_eq!(length_to_norm(32), 32);
        assert_eq!(norm_to_length(32), 32);
        assert_eq!(norm_to_length(40), 40);
        assert_eq!(length_to_norm(100), 57);
        assert_eq!(norm_to_length(57), 96);
        assert_eq!(length_to_norm(i32::MAX as u32), 255);
        assert_eq!(length_to_norm(u32::MAX), 255);
        assert_eq!(norm_to_length(255), 2_013_265_944);
    }

    #[test]
    fn monotone_and_never_over() {
        let mut prev = 0u8;
        for len in (0..100_000u32).chain([1 << 20, 1 << 30, i32::MAX as u32]) {
            let b = length_to_norm(len);
            assert!(b >= prev);
            prev = b;
            assert!(norm_to_length(b) <= len);
            // The decoded length re-encodes to the same byte.
            assert_eq!(length_to_norm(norm_to_length(b)), b);
        }
        let t = length_table();
        assert!(t.windows(2).all(|w| w[0] < w[1]));
    }
}
