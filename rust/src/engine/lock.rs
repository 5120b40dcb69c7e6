//! The writer lock of a memory: an exclusive `flock` on `<home>/writer.lock`. Only writers take it (index,
//! forget, rebuild); readers never wait. Released when dropped or when the process dies, so a crash never
//! leaves a memory locked.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How long a writer waits for another writer before giving up with `Error::Locked`.
pub const LOCK_WAIT: Duration = Duration::from_secs(120);

pub struct WriterLock {
    file: File,
}

impl WriterLock {
    pub fn acquire(home: &Path, wait: Duration) -> Result<Self> {
        let path = home.join("writer.lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self { file }),
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < wait => std::thread::sleep(Duration::from_millis(50)),
                Err(std::fs::TryLockError::WouldBlock) => return Err(Error::Locked(home.to_path_buf())),
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(format!("locking {}", path.display()), e)),
            }
        }
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_until_the_first_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let first = WriterLock::acquire(dir.path(), Duration::ZERO).unwrap();
        let err = WriterLock::acquire(dir.path(), Duration::from_millis(100)).err().unwrap();
        assert!(matches!(err, Error::Locked(_)));
        drop(first);
        WriterLock::acquire(dir.path(), Duration::ZERO).unwrap();
    }
}
