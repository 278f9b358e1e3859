//! The C API: `libquarry.so` / `libquarry.a` and `include/quarry.h`.
//!
//! One module per handle type (`schema`, `indexer` with the document
//! builder, `searcher`, `query`, `sort`, `hits`, `stats`), plus `status` (codes and
//! the last-error message) and `version`. This module holds the shared
//! machinery every export goes through:
//!
//! - `guard` / `guard_value`: the panic boundary and the last-error
//!   bookkeeping. Every export's body runs inside one of them: `guard` for
//!   the functions that return a `quarry_status` (they replace the message,
//!   with the empty string on success), `guard_value` for the others (they
//!   replace it only when they fail).
//! - `Failure`: an error on its way to C (status code + message).
//! - argument helpers that NULL-check pointers, validate UTF-8 and borrow
//!   handles, each an `unsafe fn` whose contract the caller states in a
//!   `// SAFETY:` comment.
//!
//! The C API uses only the crate's public Rust API.
//!
//! # Conventions (also in `docs/C-API.md`)
//!
//! - Constructors write a new handle through `quarry_x **out`; every handle
//!   type has one NULL-safe `quarry_x_free`.
//! - Fallible functions return `quarry_status`; outputs are written only when
//!   it is `QUARRY_OK`. Functions that cannot fail except through a NULL
//!   handle return their value directly and document what NULL gives.
//! - Strings in are `const uint8_t *ptr, size_t len`, UTF-8, need not be
//!   NUL-terminated, and are copied when kept. NULL is an error even with
//!   `len == 0` (pass any valid pointer, e.g. `""`, for the empty string).
//! - Integers that stand for enums or flags are validated; an unknown value
//!   is `QUARRY_INVALID_ARGUMENT`.

#![allow(non_camel_case_types)]

// The declaration order is the order of sections in the generated header
// (cbindgen follows it), hence one group per line, which rustfmt leaves alone.
pub mod status;

pub mod version;

pub mod schema;

pub mod indexer;

pub mod query;

pub mod sort;

pub mod searcher;

pub mod open_options;

pub mod hits;

pub mod stats;

pub mod check;

pub mod debug;

#[cfg(test)]
mod tests;

use std::cell::{Cell, RefCell};
use std::ffi::c_char;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use status::{
    QUARRY_INTERNAL, QUARRY_INVALID_ARGUMENT, QUARRY_INVALID_UTF8, QUARRY_NULL_ARGUMENT, QUARRY_OK,
    clear_last_error, quarry_status, set_last_error, status_of,
};

/// An error on its way out to C: the status code and the message that
/// `quarry_last_error_message` will return.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: quarry_status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: quarry_status, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn null(what: &str) -> Failure {
        Failure::new(QUARRY_NULL_ARGUMENT, format!("{what} is NULL"))
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure::new(QUARRY_INVALID_ARGUMENT, message)
    }
}

impl From<crate::Error> for Failure {
    fn from(e: crate::Error) -> Failure {
        Failure {
            status: status_of(&e),
            message: e.to_string(),
        }
    }
}

/// The result type of export bodies.
pub(crate) type CResult<T> = Result<T, Failure>;

// ---------------------------------------------------------------------------
// Panic boundary.
//
// A panic must not unwind into C (since Rust 1.81 it would abort the host),
// so every export runs under `catch_unwind` and a panic becomes
// QUARRY_INTERNAL. Catching alone is not enough: the *panic hook* runs before
// unwinding starts, and the default hook prints "thread ... panicked at ..."
// (and a backtrace when RUST_BACKTRACE is set) to the host's stderr, which a
// library has no business doing.
//
// The hook is process-global, so there are three options:
//  1. Replace it with a silent hook. That changes behaviour for every other
//     piece of Rust in the process (a Rust host, another Rust library), which
//     would lose its panic messages: installing a global policy behind the
//     host's back.
//  2. Leave it alone (rustls-ffi does): the host's stderr gets our panics.
//  3. Install, once and lazily (on the first call into the C API), a hook
//     that *chains*: it consults a thread-local depth counter that only our
//     boundary raises; inside the boundary it records the message for
//     `quarry_last_error_message` and prints nothing, and everywhere else it
//     calls the hook that was installed before it, so every other panic in
//     the process is reported exactly as before.
//
// We do 3. A host that later installs its own hook replaces ours; our panics
// are then reported by the host's hook, which is the host's choice to make.
// ---------------------------------------------------------------------------

thread_local! {
    /// How many boundaries this thread is inside (exports never nest today,
    /// but a counter stays right if one ever calls another).
    static BOUNDARY_DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The message of the panic caught by the innermost boundary.
    static PANIC_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let inside = BOUNDARY_DEPTH.try_with(|d| d.get() > 0).unwrap_or(false);
            if !inside {
                return previous(info);
            }
            let mut message = payload_text(info.payload());
            if let Some(loc) = info.location() {
                message = format!("{message} (at {}:{})", loc.file(), loc.line());
            }
            let _ = PANIC_MESSAGE.try_with(|m| {
                if let Ok(mut m) = m.try_borrow_mut() {
                    *m = Some(message);
                }
            });
        }));
    });
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

/// Runs `f` with panics caught and silenced; `Err(message)` on a panic.
fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_panic_hook();
    BOUNDARY_DEPTH.with(|d| d.set(d.get() + 1));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    BOUNDARY_DEPTH.with(|d| d.set(d.get() - 1));
    r.map_err(|payload| {
        PANIC_MESSAGE
            .with(|m| m.borrow_mut().take())
            .unwrap_or_else(|| payload_text(&*payload))
    })
}

/// The boundary of a fallible export: runs `f`, records the outcome as this
/// thread's last error, and returns the status. A panic in `f` becomes
/// `QUARRY_INTERNAL` with its message recorded, and nothing is printed.
pub(crate) fn guard(f: impl FnOnce() -> CResult<()>) -> quarry_status {
    match catch(f) {
        Ok(Ok(())) => {
            clear_last_error();
            QUARRY_OK
        }
        Ok(Err(fail)) => {
            set_last_error(&fail.message);
            fail.status
        }
        Err(panic_message) => {
            set_last_error(&format!("internal error (panic): {panic_message}"));
            QUARRY_INTERNAL
        }
    }
}

/// The boundary of an export that returns no status: a getter that returns
/// its value directly, or a `_free` function (`T = ()`). On an error or a
/// panic the message is recorded and `default` returned; a success leaves
/// the last-error message as it was, so a host may free handles (or read a
/// length) between a failed call and its report of the failure.
pub(crate) fn guard_value<T>(default: T, f: impl FnOnce() -> CResult<T>) -> T {
    match catch(f) {
        Ok(Ok(v)) => v,
        Ok(Err(fail)) => {
            set_last_error(&fail.message);
            default
        }
        Err(panic_message) => {
            set_last_error(&format!("internal error (panic): {panic_message}"));
            default
        }
    }
}

// ---------------------------------------------------------------------------
// Handles.
// ---------------------------------------------------------------------------

/// Ties an opaque C handle type (a zero-sized struct that cbindgen declares
/// as `typedef struct quarry_x quarry_x;`) to the Rust value a `Box` behind
/// the pointer holds. Pointers of the C type are only ever produced by
/// [`into_handle`], so a non-NULL one points to a live `Box<Inner>` until its
/// `_free` function runs.
pub(crate) trait Handle {
    /// The Rust value behind the handle.
    type Inner;
}

/// Boxes `value` and returns it as an owned handle for C.
pub(crate) fn into_handle<H: Handle>(value: H::Inner) -> *mut H {
    Box::into_raw(Box::new(value)).cast::<H>()
}

/// Borrows the value behind a handle; `QUARRY_NULL_ARGUMENT` when NULL.
///
/// # Safety
/// `p` is NULL or a handle from [`into_handle`] that has not been freed, and
/// no `&mut` to its value exists for `'a`.
pub(crate) unsafe fn handle_ref<'a, H: Handle>(p: *const H, what: &str) -> CResult<&'a H::Inner> {
    // SAFETY: per this function's contract, a non-NULL `p` came from
    // `into_handle::<H>`, i.e. from `Box<H::Inner>::into_raw`, and is live.
    unsafe { p.cast::<H::Inner>().as_ref() }.ok_or_else(|| Failure::null(what))
}

/// Mutably borrows the value behind a handle; `QUARRY_NULL_ARGUMENT` when NULL.
///
/// # Safety
/// `p` is NULL or a live handle from [`into_handle`], and no other reference
/// to its value exists for `'a` (the caller documents the handle as used by
/// one thread at a time).
pub(crate) unsafe fn handle_mut<'a, H: Handle>(p: *mut H, what: &str) -> CResult<&'a mut H::Inner> {
    // SAFETY: per this function's contract, a non-NULL `p` is a live,
    // unaliased `Box<H::Inner>` allocation.
    unsafe { p.cast::<H::Inner>().as_mut() }.ok_or_else(|| Failure::null(what))
}

/// Frees a handle; NULL is a no-op.
///
/// # Safety
/// `p` is NULL or a live handle from [`into_handle`] that no other thread
/// is using and that is never used again.
pub(crate) unsafe fn free_handle<H: Handle>(p: *mut H) {
    if !p.is_null() {
        // SAFETY: per this function's contract `p` is the pointer
        // `Box::into_raw` returned for a `Box<H::Inner>`, freed only now.
        drop(unsafe { Box::from_raw(p.cast::<H::Inner>()) });
    }
}

// ---------------------------------------------------------------------------
// Arguments.
// ---------------------------------------------------------------------------

/// Checks an out-pointer up front, so nothing is done when it is NULL.
pub(crate) fn check_out<T>(p: *mut T, what: &str) -> CResult<()> {
    if p.is_null() {
        Err(Failure::null(what))
    } else {
        Ok(())
    }
}

/// Writes a result through an out-pointer already checked by [`check_out`].
///
/// # Safety
/// `p` is non-NULL, aligned and valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(p: *mut T, value: T) {
    // SAFETY: per this function's contract. `write` does not drop the
    // (possibly uninitialised) old contents.
    unsafe { p.write(value) }
}

/// Writes the address and length of `bytes` through out-pointers already
/// checked by [`check_out`], as `T` (`c_char` for text, `u8` for bytes).
///
/// # Safety
/// Both pointers are non-NULL, aligned and valid for writes; `bytes` stay
/// where they are for as long as the export's documentation promises C.
pub(crate) unsafe fn write_bytes_out<T>(out_ptr: *mut *const T, out_len: *mut usize, bytes: &[u8]) {
    // SAFETY: per this function's contract.
    unsafe {
        write_out(out_ptr, bytes.as_ptr().cast::<T>());
        write_out(out_len, bytes.len());
    }
}

/// Borrows `len` bytes at `ptr`.
///
/// # Safety
/// A non-NULL `ptr` is valid for reads of `len` bytes that stay unchanged
/// for `'a`.
pub(crate) unsafe fn bytes_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> CResult<&'a [u8]> {
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    if len > isize::MAX as usize {
        return Err(Failure::invalid(format!(
            "{what}: length {len} is too large"
        )));
    }
    // SAFETY: `ptr` is non-NULL and, per the contract, valid for `len`
    // bytes for `'a`; `len <= isize::MAX` was checked above.
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
}

/// Borrows `len` bytes at `ptr` as UTF-8 text; `QUARRY_INVALID_UTF8` when
/// they are not.
///
/// # Safety
/// As for [`bytes_arg`].
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, len: usize, what: &str) -> CResult<&'a str> {
    // SAFETY: forwarded from this function's contract.
    let bytes = unsafe { bytes_arg(ptr, len, what) }?;
    std::str::from_utf8(bytes).map_err(|e| {
        Failure::new(
            QUARRY_INVALID_UTF8,
            format!("{what} is not valid UTF-8 (at byte {})", e.valid_up_to()),
        )
    })
}

/// Borrows the `count` handles of the array at `ptr`, each non-NULL
/// (`QUARRY_NULL_ARGUMENT` naming `what[i]` otherwise); a NULL array is
/// `QUARRY_NULL_ARGUMENT` too, whatever `count` is.
///
/// # Safety
/// A non-NULL `ptr` is valid for reading `count` pointers, each NULL or a
/// live handle of type `H` not modified for `'a`.
pub(crate) unsafe fn handles_arg<'a, H: Handle>(
    ptr: *const *const H,
    count: usize,
    what: &str,
) -> CResult<Vec<&'a H::Inner>> {
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    if count > isize::MAX as usize / std::mem::size_of::<*const H>() {
        return Err(Failure::invalid(format!(
            "{what}: count {count} is too large"
        )));
    }
    // SAFETY: `ptr` is non-NULL and, per the contract, valid for `count`
    // pointers; the size was checked above.
    let ptrs = unsafe { std::slice::from_raw_parts(ptr, count) };
    ptrs.iter()
        .enumerate()
        // SAFETY: per the contract each element is NULL or a live handle.
        .map(|(i, &p)| unsafe { handle_ref::<H>(p, &format!("{what}[{i}]")) })
        .collect()
}
