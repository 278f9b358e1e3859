//! Test support exported with the C API.

use super::guard;
use super::status::quarry_status;

/// Test support: panics inside the panic boundary, so a host's test suite
/// can check that a panic comes back as `QUARRY_INTERNAL` with a message and
/// prints nothing.
///
/// Not for production use; it has no other effect. Always returns
/// `QUARRY_INTERNAL`, and `quarry_last_error_message()` then contains
/// "quarry_debug_panic".
/// Thread safety: any thread.
#[unsafe(no_mangle)]
pub extern "C" fn quarry_debug_panic() -> quarry_status {
    guard(|| panic!("deliberate panic from quarry_debug_panic"))
}
