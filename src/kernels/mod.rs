//! SIMD posting kernels (placeholder scalar version).

/// The smallest index `i >= from` with `docs[i] >= target`, or `docs.len()`.
pub fn find_next_geq(docs: &[u32], from: usize, target: u32) -> usize {
    from + docs[from..].partition_point(|&d| d < target)
}
