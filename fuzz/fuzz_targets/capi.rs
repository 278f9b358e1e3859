#![no_main]
//! See `quarry_fuzz::capi`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    quarry_fuzz::capi(data);
});
