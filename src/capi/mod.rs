//! The C API.
