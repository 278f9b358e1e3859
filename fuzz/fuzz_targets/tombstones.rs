#![no_main]
//! See `quarry_fuzz::tombstones`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    quarry_fuzz::tombstones(data);
});
