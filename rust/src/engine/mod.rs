//! The facade: one open memory with the shared models. Decides what each call does (take the writer lock,
//! refuse a model mismatch, skip unchanged files) and delegates the mechanics to `store`, `search`,
//! `inference`. Every method is synchronous and runs its Lance I/O on the shared runtime, so the binding
//! can call it with the GIL released.

mod index;
mod lock;
mod reads;
mod state;

pub use index::{IndexProgress, IndexReport};
pub use lock::{WriterLock, LOCK_WAIT};
pub use reads::{ForgetReport, ScanMatch, SessionInfo, Sketch, Status};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::inference::Models;
use crate::options::{EngineOptions, RecallOptions};
use crate::runtime::block_on;
use crate::search::{self, Hit};
use crate::store::Store;

pub struct Engine {
    home: PathBuf,
    store: Store,
    models: Arc<Models>,
}

impl Engine {
    /// Opens (or creates) the memory at `home`. A memory built with another embedder is refused with
    /// `Error::ModelMismatch`, which says how to rebuild.
    pub fn open(home: &Path, models: Arc<Models>, opts: &EngineOptions) -> Result<Self> {
        let engine = Self::open_unchecked(home, models, opts)?;
        engine.check_model()?;
        Ok(engine)
    }

    fn open_unchecked(home: &Path, models: Arc<Models>, opts: &EngineOptions) -> Result<Self> {
        let store = block_on(Store::open(home, opts.resident))?;
        Ok(Self { home: home.to_path_buf(), store, models })
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn models(&self) -> &Arc<Models> {
        &self.models
    }

    fn check_model(&self) -> Result<()> {
        let loaded = self.models.embedder.spec();
        if let Some((stored, dim)) = block_on(self.store.model_stamp())? {
            if stored != loaded.stamp() || dim != loaded.dim {
                return Err(Error::ModelMismatch {
                    stored: if stored.is_empty() { format!("an unknown model ({dim} dimensions)") } else { stored },
                    loaded: loaded.stamp(),
                    home: self.home.display().to_string(),
                });
            }
        }
        Ok(())
    }

    pub fn recall(&self, query: &str, opts: &RecallOptions) -> Result<Vec<Hit>> {
        block_on(search::recall(&self.store, &self.models, query, opts))
    }
}
