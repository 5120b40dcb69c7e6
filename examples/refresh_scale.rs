//! Scale probe for an index run's final refresh (not shipped; figures in benches/RESULTS.md, "Sources").
//! `build SRC DST COPIES` appends COPIES copies of SRC's rows (new ids and sessions, jittered vectors) to
//! DST in batches of 4,096 with no refresh, as an index run does; `refresh DST` runs the refresh through the
//! store and prints its time and the process's peak RSS (VmHWM); `phases DST [compact,fts,btree,ivf]` runs
//! the steps one by one through lancedb, each with its own peak. Build with
//! `cargo build --release --example refresh_scale`.
use std::path::Path;
use std::time::Instant;

use _funes::home::Home;
use _funes::runtime::block_on;
use _funes::store::{Filter, LanceReads, Store, ROW_COLUMNS};

fn rss_mb(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)).unwrap().parse::<u64>().unwrap() / 1024
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let open = |p: &str| block_on(Store::open(&Home::parse(p, Path::new("/tmp")).unwrap(), LanceReads::Recall)).unwrap();
    match args[1].as_str() {
        "build" => {
            let src = open(&args[2]);
            let dst = open(&args[3]);
            let copies: usize = args[4].parse().unwrap();
            let (stamp, dim) = block_on(src.model_stamp()).unwrap().unwrap();
            let cols: Vec<&str> = ROW_COLUMNS.iter().copied().chain(["vector", "fts"]).collect();
            let mut rows = Vec::new();
            let mut fts = Vec::new();
            block_on(src.scan_batches(&Filter::default(), &cols, |r, f| {
                rows.extend(r);
                fts.extend(f);
            }))
            .unwrap();
            println!("source rows {}", rows.len());
            let t = Instant::now();
            let mut seed = 1u64;
            for c in 0..copies {
                let mut out: Vec<_> = rows.clone();
                for r in &mut out {
                    r.chunk.id = format!("{:016x}", _funes::record::id_key(&r.chunk.id).wrapping_add(c as u64 * 0x9e3779b97f4a7c15));
                    r.chunk.session_id = format!("{}-{c}", r.chunk.session_id);
                    let mut n = 0f32;
                    for x in &mut r.vector {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        *x += ((seed % 1000) as f32 / 1000.0 - 0.5) * 0.02;
                        n += *x * *x;
                    }
                    r.vector.iter_mut().for_each(|x| *x /= n.sqrt());
                }
                for (b, f) in out.chunks(4096).zip(fts.chunks(4096)) {
                    block_on(dst.append(b, f, dim, &stamp)).unwrap();
                }
                println!("copy {c} done {:.0}s rss {} MB", t.elapsed().as_secs_f64(), rss_mb("VmRSS:"));
            }
        }
        "refresh" => {
            let dst = open(&args[2]);
            println!("before refresh rss {} MB hwm {} MB", rss_mb("VmRSS:"), rss_mb("VmHWM:"));
            let t = Instant::now();
            block_on(dst.refresh_indexes(false)).unwrap();
            println!("refresh {:.1}s rss {} MB hwm {} MB", t.elapsed().as_secs_f64(), rss_mb("VmRSS:"), rss_mb("VmHWM:"));
        }
        "phases" => {
            // The refresh's steps one by one, each with its own peak (VmHWM reset through clear_refs).
            use lancedb::index::scalar::{BTreeIndexBuilder, FtsIndexBuilder};
            use lancedb::index::vector::IvfPqIndexBuilder;
            use lancedb::index::Index;
            use lancedb::table::{CompactionOptions, OptimizeAction};
            let only: Vec<String> = args.get(3).map(|s| s.split(',').map(String::from).collect()).unwrap_or_default();
            let want = |s: &str| only.is_empty() || only.iter().any(|o| o == s);
            let t = block_on(async { lancedb::connect(&args[2]).execute().await.unwrap().open_table("chunks").execute().await.unwrap() });
            let rows = block_on(t.count_rows(None)).unwrap();
            let step = |name: &str, f: &dyn Fn()| {
                std::fs::write("/proc/self/clear_refs", "5").unwrap();
                let (r0, s) = (rss_mb("VmRSS:"), Instant::now());
                f();
                println!("{name}: {:.1}s rss {} -> {} MB, peak {} MB", s.elapsed().as_secs_f64(), r0, rss_mb("VmRSS:"), rss_mb("VmHWM:"));
            };
            if want("compact") {
                let opts =
                    CompactionOptions { num_threads: std::env::var("THREADS").ok().map(|v| v.parse().unwrap()), ..Default::default() };
                step("compact", &|| {
                    block_on(t.optimize(OptimizeAction::Compact { options: opts.clone(), remap_options: None })).unwrap();
                });
            }
            if want("fts") {
                step("fts", &|| {
                    block_on(t.create_index(&["fts"], Index::FTS(FtsIndexBuilder::default().memory_limit_mb(128))).replace(true).execute())
                        .unwrap();
                });
            }
            if want("btree") {
                step("btree", &|| {
                    block_on(t.create_index(&["session_id"], Index::BTree(BTreeIndexBuilder::default())).replace(true).execute()).unwrap();
                });
            }
            if want("ivf") {
                let sr: u32 = std::env::var("SAMPLE_RATE").map(|v| v.parse().unwrap()).unwrap_or(64);
                step("ivf_pq", &|| {
                    let b = IvfPqIndexBuilder::default()
                        .distance_type(lancedb::DistanceType::Cosine)
                        .num_partitions((rows / 4096).max(1) as u32)
                        .sample_rate(sr);
                    block_on(t.create_index(&["vector"], Index::IvfPq(b)).replace(true).execute()).unwrap();
                });
            }
        }
        _ => panic!("build SRC DST COPIES | refresh DST | phases DST [compact,fts,btree,ivf]"),
    }
}
