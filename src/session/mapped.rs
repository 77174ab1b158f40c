//! A large session file mapped into memory instead of copied: reading tens of megabytes
//! into a fresh buffer costs the copy and a page fault for every page of the buffer, about
//! as much as parsing a tenth of the file. Unix only; anything unusual (an empty file, a
//! failed mapping) makes `map` return None and the caller reads the file instead.
//!
//! The mapping is private and read-only. Session files are only ever appended to (a live
//! session), which leaves the mapped bytes as they were; the caller checks that the file did
//! not grow while it was mapped, so appended bytes are read as before.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

/// The first `len` bytes of a file, mapped; unmapped when dropped.
pub(crate) struct Mapped {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapped {
    /// Maps the first `len` bytes of `file`, or None when that fails.
    pub(crate) fn map(file: &File, len: usize) -> Option<Mapped> {
        if len == 0 {
            return None;
        }
        // Mapping in all pages at once is cheaper than a fault per 64 KB when parsing reads
        // every byte anyway.
        #[cfg(target_os = "linux")]
        let flags = libc::MAP_PRIVATE | libc::MAP_POPULATE;
        #[cfg(not(target_os = "linux"))]
        let flags = libc::MAP_PRIVATE;
        // SAFETY: a new read-only mapping of an open file descriptor; the result is checked
        // before use and only ever read through `bytes`, within its length.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                flags,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        NonNull::new(ptr.cast::<u8>()).map(|ptr| Mapped { ptr, len })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is a live mapping of `len` readable bytes until `drop`; the file is
        // only appended to (see the module comment), so the bytes do not change under us.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `map` made; nothing borrows it any more.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}
