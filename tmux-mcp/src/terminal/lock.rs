//! Locking a part of a terminal's record (or the registry of records):
//! beneath the record and every concern, so each can lock its part.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `part`, whatever a holder that panicked left in it.
pub(crate) fn lock<T>(part: &Mutex<T>) -> MutexGuard<'_, T> {
    part.lock().unwrap_or_else(PoisonError::into_inner)
}
