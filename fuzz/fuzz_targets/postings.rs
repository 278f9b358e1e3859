#![no_main]
//! See `quarry_fuzz::postings`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    quarry_fuzz::postings(data);
});
