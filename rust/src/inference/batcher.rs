//! Query embeddings asked for at the same time run as one batch. A forward pass over one short query costs
//! about as much as over a few (it streams the model's weights through memory once either way), so callers
//! that arrive while a pass runs wait for it and go together in the next: the first caller runs its query at
//! once, and under load the passes grow by themselves. No window, no timer: a lone query never waits.
//! Shared by every memory the models serve, so one service's tenants batch with each other.
//!
//! Only for a model whose vectors do not depend on their batch-mates (`ModelSpec::batch_independent`). An
//! int8 model quantises its activations with one scale per pass: batched with others, a query's vector
//! moved (cosine 0.990 median to its vector alone), and under load the same question's top 3 differed from
//! its answer on a quiet machine for 18% of the benchmark's questions. Such a model runs each query alone.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, PoisonError};

use super::onnx::Tokens;
use crate::error::{Error, Result};

/// Queries in one pass at most (a burst beyond waits for the next).
pub const MAX_QUERY_BATCH: usize = 16;

#[derive(Default)]
struct Queue {
    waiting: Vec<(u64, Tokens)>,
    /// Finished vectors by ticket (an error's message for every query of a failed pass).
    done: HashMap<u64, std::result::Result<Vec<f32>, String>>,
    running: bool,
    next_ticket: u64,
}

#[derive(Default)]
pub struct Batcher {
    queue: Mutex<Queue>,
    finished: Condvar,
}

impl Batcher {
    /// The vector of `tokens`, from a pass `run` makes over it and whatever else is waiting (at most
    /// `MAX_QUERY_BATCH`, and only queries of similar length: `fits` says whether a batch may take one more).
    /// The caller that finds no pass running runs passes until the queue is empty; the others wait.
    pub fn embed(
        &self,
        tokens: Tokens,
        fits: impl Fn(&[&Tokens], &Tokens) -> bool,
        run: impl Fn(&[&Tokens]) -> Result<Vec<Vec<f32>>>,
    ) -> Result<Vec<f32>> {
        let mut q = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let ticket = q.next_ticket;
        q.next_ticket += 1;
        q.waiting.push((ticket, tokens));
        loop {
            if let Some(done) = q.done.remove(&ticket) {
                return done.map_err(Error::model);
            }
            if q.running {
                q = self.finished.wait(q).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            q.running = true;
            while !q.waiting.is_empty() {
                let mut take = 1;
                while take < q.waiting.len().min(MAX_QUERY_BATCH) {
                    let taken: Vec<&Tokens> = q.waiting[..take].iter().map(|(_, t)| t).collect();
                    if !fits(&taken, &q.waiting[take].1) {
                        break;
                    }
                    take += 1;
                }
                let batch: Vec<(u64, Tokens)> = q.waiting.drain(..take).collect();
                drop(q);
                let out = run(&batch.iter().map(|(_, t)| t).collect::<Vec<_>>());
                q = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
                match out {
                    Ok(vectors) => q.done.extend(batch.iter().map(|(t, _)| *t).zip(vectors.into_iter().map(Ok))),
                    Err(e) => q.done.extend(batch.iter().map(|(t, _)| (*t, Err(e.to_string())))),
                }
                self.finished.notify_all();
            }
            q.running = false;
            self.finished.notify_all(); // a waiter may lead the next pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn tokens(id: u32) -> Tokens {
        Tokens { ids: vec![id], type_ids: vec![0] }
    }

    #[test]
    fn a_lone_query_runs_at_once_and_gets_its_own_vector() {
        let b = Batcher::default();
        let v = b.embed(tokens(7), |_, _| true, |ts| Ok(ts.iter().map(|t| vec![t.ids[0] as f32]).collect())).unwrap();
        assert_eq!(v, [7.0]);
    }

    #[test]
    fn queries_that_arrive_during_a_pass_go_together_and_each_gets_its_own() {
        let b = Arc::new(Batcher::default());
        let passes = Arc::new(AtomicUsize::new(0));
        let largest = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8u32)
            .map(|i| {
                let (b, passes, largest) = (b.clone(), passes.clone(), largest.clone());
                std::thread::spawn(move || {
                    let run = |ts: &[&Tokens]| {
                        passes.fetch_add(1, Ordering::SeqCst);
                        largest.fetch_max(ts.len(), Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20)); // a pass takes a while
                        Ok(ts.iter().map(|t| vec![t.ids[0] as f32 * 10.0]).collect())
                    };
                    b.embed(tokens(i), |_, _| true, run).unwrap()
                })
            })
            .collect();
        let got: Vec<Vec<f32>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(got, (0..8).map(|i| vec![i as f32 * 10.0]).collect::<Vec<_>>());
        assert!(passes.load(Ordering::SeqCst) < 8, "some queries shared a pass");
        assert!(largest.load(Ordering::SeqCst) > 1);
    }

    #[test]
    fn a_failed_pass_fails_each_of_its_queries_and_the_next_one_runs() {
        let b = Batcher::default();
        let err = b.embed(tokens(1), |_, _| true, |_| Err(Error::model("boom"))).unwrap_err();
        assert!(err.to_string().contains("boom"));
        assert_eq!(b.embed(tokens(2), |_, _| true, |ts| Ok(vec![vec![ts[0].ids[0] as f32]])).unwrap(), [2.0]);
    }

    #[test]
    fn a_batch_takes_only_what_fits() {
        let b = Arc::new(Batcher::default());
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let threads: Vec<_> = (0..6u32)
            .map(|i| {
                let (b, sizes) = (b.clone(), sizes.clone());
                std::thread::spawn(move || {
                    let run = |ts: &[&Tokens]| {
                        sizes.lock().unwrap().push(ts.len());
                        std::thread::sleep(std::time::Duration::from_millis(10));
                        Ok(ts.iter().map(|_| vec![0.0]).collect())
                    };
                    b.embed(tokens(i), |taken, _| taken.len() < 2, run).unwrap()
                })
            })
            .collect();
        threads.into_iter().for_each(|t| {
            t.join().unwrap();
        });
        assert!(sizes.lock().unwrap().iter().all(|&n| n <= 2));
    }
}
