//! The panic boundary silences only panics inside quarry's C API: the hook
//! it installs chains to the one that was there before, so the host keeps
//! seeing every other panic in the process. (One test in this binary, so it
//! owns the process-wide hook.)

use std::sync::atomic::{AtomicUsize, Ordering};

use quarry::capi::debug::quarry_debug_panic;
use quarry::capi::status::QUARRY_INTERNAL;

static HOST_HOOK_CALLS: AtomicUsize = AtomicUsize::new(0);

#[test]
fn the_boundary_silences_only_its_own_panics() {
    std::panic::set_hook(Box::new(|_| {
        HOST_HOOK_CALLS.fetch_add(1, Ordering::SeqCst);
    }));
    // The first C API call installs the chaining hook on top of the host's.
    assert_eq!(quarry_debug_panic(), QUARRY_INTERNAL);
    assert_eq!(
        HOST_HOOK_CALLS.load(Ordering::SeqCst),
        0,
        "the host's hook saw quarry's panic"
    );

    // A panic elsewhere in the process still reaches the host's hook.
    let joined = std::thread::spawn(|| panic!("a panic of the host's own")).join();
    assert!(joined.is_err());
    assert_eq!(HOST_HOOK_CALLS.load(Ordering::SeqCst), 1);

    // And quarry's panics stay silent, on any thread.
    let status = std::thread::spawn(|| quarry_debug_panic()).join().unwrap();
    assert_eq!(status, QUARRY_INTERNAL);
    assert_eq!(HOST_HOOK_CALLS.load(Ordering::SeqCst), 1);
}
