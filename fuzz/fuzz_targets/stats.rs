#![no_main]
//! See `quarry_fuzz::stats`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    quarry_fuzz::stats(data);
});
