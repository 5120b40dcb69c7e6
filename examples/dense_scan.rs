//! Times the resident dense scan on random vectors (not shipped): `cargo run --release --example dense_scan
//! [ROWS] [CALLS]`.
use std::time::Instant;

use _funes::resident::dense::{encode, Int8Vectors};

fn vector(seed: u64, dim: usize) -> Vec<f32> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..dim)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        })
        .collect()
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let (rows, calls) = (args.first().copied().unwrap_or(60_000), args.get(1).copied().unwrap_or(200));
    let dim = 384;
    let mut m = Int8Vectors::new(dim);
    for i in 0..rows {
        let (c, s) = encode(&vector(i as u64, dim));
        m.push(&c, s);
    }
    let queries: Vec<_> = (0..calls).map(|i| encode(&vector(1_000_000 + i as u64, dim))).collect();
    for n in [1, 100] {
        let t = Instant::now();
        let mut sum = 0usize;
        for q in &queries {
            sum += m.top(q, n, None).len();
        }
        println!("{rows} rows: {:.3} ms per top-{n} ({sum})", t.elapsed().as_secs_f64() * 1000.0 / calls as f64);
    }
}
