//! The one tokio runtime that drives Lance. Created lazily on first use, two worker threads (the machine's
//! size; ONNX work runs on the caller's thread, not here).
//!
//! Fork: a forked child inherits the runtime's memory but not its threads, so using it would hang. The
//! runtime remembers the pid that created it; a child gets a fresh runtime and the parent's is leaked on
//! purpose (dropping it would try to join threads that do not exist in the child). The same approach as
//! lancedb's Python binding.

use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::runtime::Runtime;

static RUNTIME: Mutex<Option<(u32, Arc<Runtime>)>> = Mutex::new(None);

pub const WORKER_THREADS: usize = 2;

/// Threads for blocking work (Lance's local file I/O runs there, one call each). tokio allows 512 and lets an
/// idle one exit after 10 s, so a service's bursts of index runs kept starting new ones: 20 to 30 of them
/// during a soak, each new one a fresh stack and thread cache in RSS. File calls do not wait on each other,
/// so a few threads serve two cores; they stay a while between bursts.
pub const BLOCKING_THREADS: usize = 8;
pub const BLOCKING_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(120);

pub fn runtime() -> Arc<Runtime> {
    let pid = std::process::id();
    let mut guard = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    match guard.as_ref() {
        Some((p, rt)) if *p == pid => rt.clone(),
        stale => {
            if let Some((_, old)) = stale {
                std::mem::forget(old.clone());
            }
            let rt = Arc::new(
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(WORKER_THREADS)
                    .max_blocking_threads(BLOCKING_THREADS)
                    .thread_keep_alive(BLOCKING_KEEP_ALIVE)
                    .thread_name("funes-py-io")
                    .enable_all()
                    .build()
                    .expect("building the tokio runtime"),
            );
            *guard = Some((pid, rt.clone()));
            rt
        }
    }
}

/// Runs a future to completion on the shared runtime, from synchronous code (never from inside the runtime).
pub fn block_on<F: Future>(f: F) -> F::Output {
    runtime().block_on(f)
}
