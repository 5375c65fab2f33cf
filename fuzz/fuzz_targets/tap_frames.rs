#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| skblab_fuzz::tap_frames(data));
