//! The C allocator under the engine: giving freed memory back to the system between the phases of a long
//! run, so one phase's freed-but-kept heap does not stack under the next phase's peak.
//!
//! glibc keeps freed memory in its arenas (the tops of the heaps and whole free pages inside them) until
//! `malloc_trim` returns it. An index run embeds for an hour (tokenizer and ONNX Runtime buffers, Lance
//! writes, on several threads) and then builds its indexes on top of what is left: on a 64 MB export a trim
//! between the two took the build's peak from 412 to 345 MB above the model. Other C libraries: nothing to
//! do.

/// Returns the allocator's free memory to the system where the C library can (glibc); otherwise nothing.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only walks glibc's own arenas under their locks; it takes no pointer of ours.
        unsafe {
            malloc_trim(0);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn releasing_free_memory_leaves_live_memory_intact() {
        let kept: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8; 1 << 16]).collect();
        drop((0..256).map(|_| vec![0u8; 1 << 16]).collect::<Vec<_>>());
        super::release_free_memory();
        assert!(kept.iter().enumerate().all(|(i, v)| v.iter().all(|b| *b == i as u8)));
    }
}
