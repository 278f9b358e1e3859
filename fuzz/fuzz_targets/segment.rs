#![no_main]
//! See `quarry_fuzz::segment`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    quarry_fuzz::segment(data);
});
