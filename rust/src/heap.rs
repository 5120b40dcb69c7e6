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
//! bought a dip that climbed back at 1.5-2.5 MiB/min, and a page fault for every page; one trim seconds into
//! the soak was enough to start the climb. Not trimming held the same soak flat. So a run trims only what it
//! grew: [`RunMark`] remembers the process's size at a run's start, and a trim happens once the run has grown
//! [`TRIM_AFTER_GROWTH`] above it (between a large run's phases and after it), never after a run that added
//! a conversation. A trim made since the mark, by any mark (an index run's refresh has its own), moves the
//! mark to the size that trim left: what it gave back is not growth a second trim could return.

use std::sync::Mutex;

/// How much a run must have grown the process's resident memory before it trims. A large run's phases grow
/// it by hundreds of MB; a service's run for one new conversation by well under 1 MB.
pub const TRIM_AFTER_GROWTH: u64 = 32 << 20;

/// The process's size when a run started or after the latest trim since (`trims`: how many trims the
/// process had made by then): what the run grows above it is what a trim would give back.
#[derive(Debug)]
pub struct RunMark(Mutex<Mark>);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Mark {
    size: u64,
    trims: u64,
}

/// The process's size after its latest trim, and its count of trims.
static LAST_TRIM: Mutex<Mark> = Mutex::new(Mark { size: 0, trims: 0 });

fn last_trim() -> Mark {
    *LAST_TRIM.lock().unwrap_or_else(|e| e.into_inner())
}

impl RunMark {
    /// Marks the start of a run. Where the size cannot be read (not Linux), the mark never trims.
    pub fn now() -> Self {
        Self(Mutex::new(Mark { size: resident_bytes().unwrap_or(u64::MAX), trims: last_trim().trims }))
    }

    /// Returns the allocator's free memory to the system where the C library can (glibc) and the run has
    /// grown the process by [`TRIM_AFTER_GROWTH`] since its start or the latest trim since; otherwise nothing.
    pub fn release_if_grown(&self) {
        let Some(now) = resident_bytes() else {
            return; // not Linux: no glibc to trim either
        };
        let mut mark = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *mark = latest(*mark, last_trim());
        if worth_trimming(mark.size, now) {
            trim();
            let mut last = LAST_TRIM.lock().unwrap_or_else(|e| e.into_inner());
            *last = Mark { size: resident_bytes().unwrap_or(now), trims: last.trims + 1 };
            *mark = *last;
        }
    }
}

/// What a mark measures growth from: itself, or the latest trim if the process has trimmed since.
fn latest(mark: Mark, last: Mark) -> Mark {
    if last.trims > mark.trims {
        last
    } else {
        mark
    }
}

/// Whether growth from `mark` to `now` (resident bytes) is worth a trim.
fn worth_trimming(mark: u64, now: u64) -> bool {
    now.saturating_sub(mark) >= TRIM_AFTER_GROWTH
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
        // The trim itself: a mark taken just now would not have grown enough to call it.
        trim();
        assert!(kept.iter().enumerate().all(|(i, v)| v.iter().all(|b| *b == i as u8)));
    }

    #[test]
    fn only_growth_past_the_threshold_is_worth_a_trim() {
        let base = 300 << 20;
        assert!(!worth_trimming(u64::MAX, base), "an unreadable size at the start never trims");
        assert!(!worth_trimming(base, base + (1 << 20)), "a small run's growth is left in place");
        assert!(!worth_trimming(base, base - (50 << 20)), "shrinking is not growth");
        assert!(worth_trimming(base, base + TRIM_AFTER_GROWTH));
    }

    #[test]
    fn a_trim_since_the_mark_is_where_growth_counts_from() {
        let start = Mark { size: 300 << 20, trims: 4 };
        let same = Mark { size: 900 << 20, trims: 4 };
        assert_eq!(latest(start, same), start, "no trim since the mark: the mark's own size");
        let trimmed = Mark { size: 420 << 20, trims: 5 };
        assert_eq!(latest(start, trimmed), trimmed, "another phase trimmed: from what it left");
        // The closing check of a run whose refresh trimmed at 420 MB: 440 MB is 20 MB of growth, not 140.
        assert!(worth_trimming(start.size, 440 << 20) && !worth_trimming(latest(start, trimmed).size, 440 << 20));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_resident_size_is_read() {
        let rss = resident_bytes().expect("VmRSS on Linux");
        assert!(rss > 1 << 20, "a test process holds more than 1 MiB: {rss}");
    }
}
