#![no_main]
//! See `quarry_fuzz::manifest`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    quarry_fuzz::manifest(data);
});
