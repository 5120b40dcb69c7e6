//! The C allocator under the engine: giving freed memory back to the system between the phases of a long
//! run, so one phase's freed-but-kept heap does not stack under the next phase's peak.
//!
//! glibc keeps freed memory in its arenas (the tops of the heaps and whole free pages inside them) until
//! `malloc_trim` returns it. An index run embeds for an hour (tokenizer and ONNX Runtime buffers, Lance
//! writes, on several threads) and then builds its indexes on top of what is left: on a 64 MB export a trim
//! between the two took the build's peak from 412 to 345 MB above the model. Other C libraries: nothing to
//! do.
//!
//! A trim is not free for a process that indexes every few seconds (a service): the pages it returns are
//! holes inside the heap, and the next small runs' buffers land in them again and fault them back in, until
//! the process is back at its heap's size. The heap itself does not grow in steady state (glibc's arenas held
//! 205 MB from the first to the last sample of a 5-minute service soak), so a trim after every run only
//! bought a dip that climbed back at 1.5-2.5 MiB/min, and a page fault for every page. Not trimming held the
//! same soak flat. So a trim happens only when the process has grown by [`TRIM_AFTER_GROWTH`] above the
//! lowest level seen at a run's start ([`note_run_start`]) or after the last trim: between a large run's
//! phases and after it, not after a run that added a conversation.

use std::sync::atomic::{AtomicU64, Ordering};

/// How much the process's resident memory must have grown before a call trims. A large run's phases grow it
/// by hundreds of MB; a service's run for one new conversation by well under 1 MB.
pub const TRIM_AFTER_GROWTH: u64 = 32 << 20;

/// The level growth is measured from (resident bytes): the lowest seen at a run's start, reset after a trim.
/// `u64::MAX` until the first run starts.
static BASELINE: AtomicU64 = AtomicU64::new(u64::MAX);

/// Records the process's size as a run starts: what that run (and later ones) grows above it is what a trim
/// would give back.
pub fn note_run_start() {
    if let Some(now) = resident_bytes() {
        BASELINE.fetch_min(now, Ordering::Relaxed);
    }
}

/// Returns the allocator's free memory to the system where the C library can (glibc) and the process has
/// grown by [`TRIM_AFTER_GROWTH`] since [`note_run_start`] or the last trim; otherwise nothing. Returns
/// whether it trimmed.
pub fn release_free_memory() -> bool {
    let Some(now) = resident_bytes() else {
        return false; // not Linux: no glibc to trim either
    };
    if !worth_trimming(BASELINE.load(Ordering::Relaxed), now) {
        return false;
    }
    trim();
    BASELINE.store(resident_bytes().unwrap_or(now), Ordering::Relaxed);
    true
}

/// Whether growth from `baseline` to `now` (resident bytes) is worth a trim; no baseline yet: no.
fn worth_trimming(baseline: u64, now: u64) -> bool {
    now.saturating_sub(baseline) >= TRIM_AFTER_GROWTH
}

/// The process's resident set size (`VmRSS` of `/proc/self/status`), in bytes.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.trim_start_matches("VmRSS:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib << 10)
}

fn trim() {
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
    use super::*;

    #[test]
    fn releasing_free_memory_leaves_live_memory_intact() {
        let kept: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8; 1 << 16]).collect();
        drop((0..256).map(|_| vec![0u8; 1 << 16]).collect::<Vec<_>>());
        release_free_memory();
        assert!(kept.iter().enumerate().all(|(i, v)| v.iter().all(|b| *b == i as u8)));
    }

    #[test]
    fn only_growth_past_the_threshold_is_worth_a_trim() {
        let base = 300 << 20;
        assert!(!worth_trimming(u64::MAX, base), "no run has started: nothing to measure growth from");
        assert!(!worth_trimming(base, base + (1 << 20)), "a small run's growth is left in place");
        assert!(!worth_trimming(base, base - (50 << 20)), "shrinking is not growth");
        assert!(worth_trimming(base, base + TRIM_AFTER_GROWTH));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_resident_size_is_read() {
        let rss = resident_bytes().expect("VmRSS on Linux");
        assert!(rss > 1 << 20, "a test process holds more than 1 MiB: {rss}");
    }
}
