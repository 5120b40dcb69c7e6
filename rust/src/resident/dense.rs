//! Dense search over int8 codes held in RAM. Pure.
//!
//! Each vector is stored as int8 codes with one scale of its own (its largest component maps to ±127), so
//! rows can be added one at a time without statistics over the whole memory. A query is coded the same way
//! and the cosine estimate is `dot_i32(codes) × row scale × query scale`, where each scale also folds in
//! 1/‖v‖. For 384-dimension sentence embeddings the estimate is within about 1e-3 of the f32 cosine (see
//! the tests), far below the gaps that decide a ranking.
//!
//! A small memory is scanned in full. A large one (more than `FULL_SCAN_MAX_ROWS`) is searched in two
//! passes: sign bits of every vector (48 bytes a row at 384 dimensions, so 60,000 rows fit in 2.9 MB of
//! cache) pick the rows nearest in Hamming distance, and only those are scored on their int8 codes. A full
//! int8 scan of 60,000 rows reads 23 MB from memory (5–6 ms warm, after the query embedding has evicted it
//! from cache); the two passes take about 1 ms.
//!
//! The bits are the signs of each unit vector less the memory's mean unit vector (`center`, recomputed with
//! every bit when the memory has doubled since). Uncentred signs serve MiniLM well but not
//! multilingual-e5, whose vectors all lean one way (cosines of 0.7-0.9 between unrelated passages, against about 0 for MiniLM), so that
//! most sign bits are the same for every passage: on the Korean 10,000-conversation benchmark (e5, 60,000
//! rows, 200 queries) the uncentred shortlist of 6,400 gave the full scan's top 8 for 72 queries, the centred
//! one of 3,200 for 188 (and the same top 1 for all). MiniLM: 200 of 200 either way.

/// Int8 codes and per-row scales of a growing set of vectors of one dimension.
#[derive(Debug, Clone, Default)]
pub struct Int8Vectors {
    dim: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
    /// Sign bits of each vector less `center`, `words` u64 per row: the first, coarse pass of a large scan.
    bits: Vec<u64>,
    /// The mean of the unit vectors as of `centered_at` rows (empty before the first large search).
    center: Vec<f32>,
    centered_at: usize,
}

/// Rows scored on their int8 codes in the second pass of a large search: at least this many, and
/// `SHORTLIST_PER_ROW` per wanted row if more (score fusion asks for 100 rows: 3,200).
pub const SHORTLIST: usize = 2_048;
const SHORTLIST_PER_ROW: usize = 32;
/// How many rows ahead of the one being scored the shortlist asks for codes (`score_rows`).
const PREFETCH_ROWS: usize = 8;
/// Memories up to this many rows are scanned in full (about 0.5 ms at 8,192 rows).
pub const FULL_SCAN_MAX_ROWS: usize = 4 * SHORTLIST;

fn words(dim: usize) -> usize {
    dim.div_ceil(64)
}

/// The sign bits of a coded vector (as a unit vector: `codes × scale`) less `center` (none: empty).
fn centered_bits(codes: &[i8], scale: f32, center: &[f32], out: &mut Vec<u64>) {
    for (k, chunk) in codes.chunks(64).enumerate() {
        let mut w = 0u64;
        for (j, &c) in chunk.iter().enumerate() {
            let m = center.get(k * 64 + j).copied().unwrap_or(0.0);
            if c as f32 * scale > m {
                w |= 1 << j;
            }
        }
        out.push(w);
    }
}

/// A vector's codes and the scale that turns a code dot product back into a cosine.
pub fn encode(v: &[f32]) -> (Vec<i8>, f32) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if max == 0.0 || !max.is_finite() || norm == 0.0 {
        return (vec![0; v.len()], 0.0);
    }
    let codes = v.iter().map(|x| (x / max * 127.0).round() as i8).collect();
    (codes, max / 127.0 / norm)
}

impl Int8Vectors {
    pub fn new(dim: usize) -> Self {
        Self { dim, codes: Vec::new(), scales: Vec::new(), bits: Vec::new(), center: Vec::new(), centered_at: 0 }
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn len(&self) -> usize {
        self.scales.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Adds one coded vector (from `encode`); its length must be the dimension.
    pub fn push(&mut self, codes: &[i8], scale: f32) {
        assert_eq!(codes.len(), self.dim, "vector dimension");
        self.codes.extend_from_slice(codes);
        self.scales.push(scale);
        centered_bits(codes, scale, &self.center, &mut self.bits);
        if self.len() > FULL_SCAN_MAX_ROWS && self.len() >= 2 * self.centered_at {
            self.recenter();
        }
    }

    /// Sets the center to the mean unit vector and recomputes every row's bits.
    fn recenter(&mut self) {
        let mut mean = vec![0f64; self.dim];
        for (row, &s) in self.codes.chunks_exact(self.dim).zip(&self.scales) {
            for (m, &c) in mean.iter_mut().zip(row) {
                *m += c as f64 * s as f64;
            }
        }
        let n = self.len() as f64;
        self.center = mean.into_iter().map(|m| (m / n) as f32).collect();
        self.centered_at = self.len();
        self.bits.clear();
        for (row, &s) in self.codes.chunks_exact(self.dim).zip(&self.scales) {
            centered_bits(row, s, &self.center, &mut self.bits);
        }
    }

    /// The cosine estimate between row `i` and a query coded by `encode`.
    pub fn cosine(&self, i: usize, query: &(Vec<i8>, f32)) -> f32 {
        let row = &self.codes[i * self.dim..(i + 1) * self.dim];
        dot(row, &query.0) as f32 * self.scales[i] * query.1
    }

    /// The cosine estimates of `rows` (ascending, scattered over the codes): each row's codes are asked of
    /// memory `PREFETCH_ROWS` rows ahead. Scored one after the other, a shortlist of 3,200 rows of a 60,000-row
    /// memory waited on memory for each (the query's embedding has just pushed the codes out of the caches).
    fn score_rows(&self, rows: &[u32], query: &(Vec<i8>, f32)) -> Vec<(usize, f32)> {
        let row_bytes = self.dim;
        rows.iter()
            .enumerate()
            .map(|(k, &i)| {
                if let Some(&ahead) = rows.get(k + PREFETCH_ROWS) {
                    prefetch(&self.codes[ahead as usize * row_bytes..(ahead as usize + 1) * row_bytes]);
                }
                (i as usize, self.cosine(i as usize, query))
            })
            .collect()
    }

    /// The `n` rows most similar to the query among those `allow` accepts (all: `None`), best first, with their cosine
    /// estimates. Ties go to the earlier row.
    pub fn top(&self, query: &(Vec<i8>, f32), n: usize, allow: Option<&dyn Fn(usize) -> bool>) -> Vec<(usize, f32)> {
        let shortlist = SHORTLIST.max(SHORTLIST_PER_ROW * n);
        if self.len() > FULL_SCAN_MAX_ROWS.max(2 * shortlist) {
            let mut qbits = Vec::with_capacity(words(self.dim));
            centered_bits(&query.0, query.1, &self.center, &mut qbits);
            let near = nearest_by_bits(&hamming(&self.bits, &qbits), shortlist, allow);
            return top_n(self.score_rows(&near, query), n);
        }
        let mut all = Vec::with_capacity(self.len());
        scan(&self.codes, self.dim, &query.0, &mut all);
        let scored = all.into_iter().enumerate().map(|(i, d)| (i, d as f32 * self.scales[i] * query.1));
        let scored: Vec<(usize, f32)> = match allow {
            Some(allow) => scored.filter(|(i, _)| allow(*i)).collect(),
            None => scored.collect(),
        };
        top_n(scored, n)
    }
}

/// The `n` best (index, score) pairs, best first; ties to the lower index.
pub fn top_n(mut scored: Vec<(usize, f32)>, n: usize) -> Vec<(usize, f32)> {
    let better = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if scored.len() > n && n > 0 {
        scored.select_nth_unstable_by(n - 1, better);
        scored.truncate(n);
    } else if n == 0 {
        scored.clear();
    }
    scored.sort_unstable_by(better);
    scored
}

fn dot_portable(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| x as i16 as i32 * y as i16 as i32).sum()
}

fn scan_portable(codes: &[i8], dim: usize, q: &[i8], out: &mut Vec<i32>) {
    out.extend(codes.chunks_exact(dim).map(|row| dot_portable(row, q)));
}

// AVX2, picked at run time (the wheel targets baseline x86-64): 16 codes per step, widened to i16 and
// multiplied-and-paired into i32 lanes by `vpmaddwd`. LLVM does not find this form on its own.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let mut acc = _mm256_setzero_si256();
    let mut i = 0;
    while i + 16 <= n {
        let va = _mm256_cvtepi8_epi16(_mm_loadu_si128(a.as_ptr().add(i) as *const __m128i));
        let vb = _mm256_cvtepi8_epi16(_mm_loadu_si128(b.as_ptr().add(i) as *const __m128i));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(va, vb));
        i += 16;
    }
    let s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256::<1>(acc));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
    _mm_cvtsi128_si32(s) + dot_portable(&a[i..n], &b[i..n])
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_avx2(codes: &[i8], dim: usize, q: &[i8], out: &mut Vec<i32>) {
    out.extend(codes.chunks_exact(dim).map(|row| dot_avx2(row, q)));
}

/// The rows (ascending) of the `shortlist` smallest Hamming distances among those `allow` accepts (all: `None`),
/// ties to the earlier row: a counting pass over the distances, which lie in 0..=dim, instead of ordering
/// tens of thousands of (distance, row) pairs (`select_nth` over 60,000 of them was most of a scan).
fn nearest_by_bits(distances: &[u16], shortlist: usize, allow: Option<&dyn Fn(usize) -> bool>) -> Vec<u32> {
    let admitted = |i: usize| allow.is_none_or(|a| a(i));
    let mut counts = vec![0usize; distances.iter().copied().max().unwrap_or(0) as usize + 1];
    for (i, &d) in distances.iter().enumerate() {
        if admitted(i) {
            counts[d as usize] += 1;
        }
    }
    // The largest distance taken, and how many rows at it fit.
    let (mut taken, mut cutoff, mut at_cutoff) = (0usize, counts.len(), 0usize);
    for (d, &c) in counts.iter().enumerate() {
        if taken + c >= shortlist {
            (cutoff, at_cutoff) = (d, shortlist - taken);
            break;
        }
        taken += c;
    }
    let mut out = Vec::with_capacity(shortlist.min(distances.len()));
    for (i, &d) in distances.iter().enumerate() {
        let d = d as usize;
        if d > cutoff || !admitted(i) {
            continue;
        }
        if d == cutoff {
            if at_cutoff == 0 {
                continue;
            }
            at_cutoff -= 1;
        }
        out.push(i as u32);
    }
    out
}

/// Asks for a row's bytes to be brought into the cache (a hint; nothing on other architectures).
#[inline(always)]
fn prefetch(bytes: &[i8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        // SAFETY: a prefetch reads nothing architecturally; the pointer is in bounds. SSE is in the baseline.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.as_ptr()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// The Hamming distance of every row's sign bits to the query's, in row order.
fn hamming(bits: &[u64], q: &[u64]) -> Vec<u16> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT (checked just above).
        return unsafe { hamming_popcnt(bits, q) };
    }
    hamming_portable(bits, q)
}

fn hamming_portable(bits: &[u64], q: &[u64]) -> Vec<u16> {
    bits.chunks_exact(q.len()).map(|row| row.iter().zip(q).map(|(a, b)| (a ^ b).count_ones()).sum::<u32>() as u16).collect()
}

// The baseline x86-64 target counts bits in software; with POPCNT it is one instruction per word. The loop is
// written out here, in the function compiled with the feature: as an iterator chain collected into a vector,
// its body went into a generic `collect` compiled without it, and kept the software count (1.8 ms of a 60,000
// row scan instead of about 0.2).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn hamming_popcnt(bits: &[u64], q: &[u64]) -> Vec<u16> {
    // The common widths (384 and 768 dimensions) with the row length known to the compiler: unrolled, no
    // bounds checks, about half the instructions of the general loop.
    match q.len() {
        6 => hamming_fixed::<6>(bits, q),
        12 => hamming_fixed::<12>(bits, q),
        w => {
            let mut out = vec![0u16; bits.len() / w.max(1)];
            for (r, d) in out.iter_mut().enumerate() {
                let row = &bits[r * w..(r + 1) * w];
                let mut n = 0u32;
                for k in 0..w {
                    n += (row[k] ^ q[k]).count_ones();
                }
                *d = n as u16;
            }
            out
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn hamming_fixed<const W: usize>(bits: &[u64], q: &[u64]) -> Vec<u16> {
    let q: &[u64; W] = q.try_into().expect("the query's width");
    let rows = bits.chunks_exact(W);
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let row: &[u64; W] = row.try_into().expect("a row's width");
        let mut n = 0u32;
        for k in 0..W {
            n += (row[k] ^ q[k]).count_ones();
        }
        out.push(n as u16);
    }
    out
}

/// Dot products of every row with the query, in row order.
fn scan(codes: &[i8], dim: usize, q: &[i8], out: &mut Vec<i32>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { scan_avx2(codes, dim, q, out) };
    }
    scan_portable(codes, dim, q, out)
}

fn dot(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { dot_avx2(a, b) };
    }
    dot_portable(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random unit-ish vector (no rand dependency).
    fn vector(seed: u64, dim: usize) -> Vec<f32> {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (0..dim)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 33) as f32 / (1u64 << 31) as f32) - 0.5
            })
            .collect()
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        let d: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        d / (a.iter().map(|x| x * x).sum::<f32>().sqrt() * b.iter().map(|x| x * x).sum::<f32>().sqrt())
    }

    #[test]
    fn the_bit_shortlist_is_the_smallest_distances_ties_to_the_earlier_row() {
        let distances: Vec<u16> = (0..5_000u32).map(|i| ((i * 2_654_435_761) % 97) as u16).collect();
        for (shortlist, odd_only) in [(1, false), (100, false), (777, true), (4_999, false), (9_000, true)] {
            let allow = |i: usize| i % 2 == 1;
            let got = nearest_by_bits(&distances, shortlist, odd_only.then_some(&allow as _));
            let mut want: Vec<(u16, u32)> =
                distances.iter().enumerate().filter(|(i, _)| !odd_only || allow(*i)).map(|(i, &d)| (d, i as u32)).collect();
            want.sort();
            want.truncate(shortlist);
            let mut want: Vec<u32> = want.into_iter().map(|(_, i)| i).collect();
            want.sort();
            assert_eq!(got, want, "shortlist {shortlist}, odd only {odd_only}");
        }
    }

    #[test]
    fn estimates_match_the_f32_cosine() {
        let dim = 384;
        let mut m = Int8Vectors::new(dim);
        let rows: Vec<Vec<f32>> = (0..200).map(|i| vector(i, dim)).collect();
        for r in &rows {
            let (c, s) = encode(r);
            m.push(&c, s);
        }
        // A query close to row 17, so the cosines span a useful range.
        let q: Vec<f32> = rows[17].iter().zip(vector(999, dim)).map(|(a, b)| a + 0.3 * b).collect();
        let qc = encode(&q);
        for (i, r) in rows.iter().enumerate() {
            let err = (m.cosine(i, &qc) - cosine(r, &q)).abs();
            assert!(err < 5e-3, "row {i}: error {err}");
        }
        let top = m.top(&qc, 3, None);
        assert_eq!(top[0].0, 17);
        assert_eq!(top.len(), 3);
        assert!(top[0].1 >= top[1].1 && top[1].1 >= top[2].1);
        assert!((top[0].1 - cosine(&rows[17], &q)).abs() < 5e-3);
    }

    #[test]
    fn filter_and_limits() {
        let dim = 8;
        let mut m = Int8Vectors::new(dim);
        for i in 0..10 {
            let (c, s) = encode(&vector(i, dim));
            m.push(&c, s);
        }
        let qc = encode(&vector(3, dim));
        assert_eq!(m.top(&qc, 1, None)[0].0, 3);
        assert_ne!(m.top(&qc, 1, Some(&|i| i != 3))[0].0, 3);
        assert_eq!(m.top(&qc, 100, Some(&|i| i % 2 == 0)).len(), 5);
        assert!(m.top(&qc, 0, None).is_empty());
    }

    #[test]
    fn zero_vectors_score_zero() {
        let (c, s) = encode(&[0.0; 4]);
        assert_eq!(s, 0.0);
        let mut m = Int8Vectors::new(4);
        m.push(&c, s);
        assert_eq!(m.cosine(0, &encode(&[1.0, 0.0, 0.0, 0.0])), 0.0);
    }

    #[test]
    fn portable_and_dispatched_dot_agree() {
        // 100 = six 16-code steps and a tail; extremes included.
        let a: Vec<i8> = (0..100).map(|i| (i * 7 % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..100).map(|i| (i * 13 % 255 - 127) as i8).collect();
        assert_eq!(dot(&a, &b), dot_portable(&a, &b));
        let ext = vec![-127i8; 384];
        assert_eq!(dot(&ext, &ext), 384 * 127 * 127);
        let mut out = Vec::new();
        scan(&[a.clone(), b.clone()].concat(), 100, &b, &mut out);
        assert_eq!(out, vec![dot_portable(&a, &b), dot_portable(&b, &b)]);
    }

    #[test]
    fn vectors_that_all_lean_one_way_are_centred_first() {
        // Like multilingual-e5: every vector is a shared direction plus its own part, so raw sign bits are
        // nearly the same for all rows and say little about which is near the query. Each query has 8 planted
        // neighbours at growing distances among unrelated rows; the shortlist must hold them all.
        let dim = 384;
        let common = vector(123_456_789, dim);
        let lean = |v: &[f32]| -> Vec<f32> { v.iter().zip(&common).map(|(x, c)| 0.35 * x + c).collect() };
        let near = |base: &[f32], seed: u64, d: f32| -> Vec<f32> { base.iter().zip(vector(seed, dim)).map(|(a, b)| a + d * b).collect() };
        let mut m = Int8Vectors::new(dim);
        let queries: Vec<Vec<f32>> = (0..20u64).map(|q| vector(5_000_000 + q, dim)).collect();
        for i in 0..(FULL_SCAN_MAX_ROWS as u64 + 8_000) {
            let (c, s) = encode(&lean(&vector(i, dim)));
            m.push(&c, s);
        }
        for (q, base) in queries.iter().enumerate() {
            for k in 0..8u64 {
                let (c, s) = encode(&lean(&near(base, 9_000_000 + 100 * q as u64 + k, 0.5 + 0.1 * k as f32)));
                m.push(&c, s);
            }
        }
        let mut exact = 0;
        for base in &queries {
            let qc = encode(&lean(base));
            let two_pass: Vec<usize> = m.top(&qc, 100, None).into_iter().take(8).map(|x| x.0).collect();
            let mut all = Vec::new();
            scan(&m.codes, dim, &qc.0, &mut all);
            let full: Vec<usize> = top_n(all.iter().enumerate().map(|(i, &d)| (i, d as f32 * m.scales[i] * qc.1)).collect(), 8)
                .into_iter()
                .map(|x| x.0)
                .collect();
            exact += (two_pass == full) as usize;
        }
        assert_eq!(exact, 20, "the shortlist held the full scan's top 8 for {exact} of 20 queries");
    }

    #[test]
    fn the_two_pass_search_finds_what_the_full_scan_finds() {
        let dim = 384;
        let mut m = Int8Vectors::new(dim);
        let query = vector(424_242, dim);
        // Background rows, then 40 planted neighbours of the query at growing distances.
        for i in 0..(FULL_SCAN_MAX_ROWS as u64 + 3_000) {
            let (c, s) = encode(&vector(i, dim));
            m.push(&c, s);
        }
        let planted0 = m.len();
        for k in 0..40u64 {
            let noise = vector(10_000_000 + k, dim);
            let v: Vec<f32> = query.iter().zip(noise).map(|(q, z)| q + (0.2 + 0.05 * k as f32) * z).collect();
            let (c, s) = encode(&v);
            m.push(&c, s);
        }
        let qc = encode(&query);
        let two_pass = m.top(&qc, 30, None);
        let mut all = Vec::new();
        scan(&m.codes, dim, &qc.0, &mut all);
        let full = top_n(all.iter().enumerate().map(|(i, &d)| (i, d as f32 * m.scales[i] * qc.1)).collect(), 30);
        assert_eq!(two_pass, full);
        assert!(two_pass.iter().all(|&(i, _)| i >= planted0), "planted neighbours come first");
        // A filter applies before the shortlist.
        let odd = m.top(&qc, 5, Some(&|i| i % 2 == 1));
        assert!(odd.iter().all(|&(i, _)| i % 2 == 1 && i >= planted0));
    }
}
