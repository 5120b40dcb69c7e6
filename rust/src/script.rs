//! Which writing system a letter is written in, which systems a model reads, and how much of a text is
//! written in those.
//!
//! An English embedder cut loose on Korean text still returns vectors: all-MiniLM-L6-v2 splits Hangul into
//! jamo and Cyrillic into single letters, and their cosines spread like any other, so a dense leg that sees
//! only noise looks as confident as one that reads the text (a Korean history with that model: dense alone
//! found 5 of 93 answers in the top 3, BM25 alone 59, the two fused 22). What a model can read shows in its
//! vocabulary: MiniLM's holds 27,766 tokens written in Latin letters and fewer than 500 in any other script,
//! multilingual-e5-small's tens of thousands in each of its languages. A script is read when at least
//! `READ_MIN_TOKENS` tokens of the vocabulary are written in it.
//!
//! Pure: letters are classified by Unicode block ranges (the scripts with a vocabulary of their own in the
//! models this engine loads), anything else counts as `Other`.

/// Tokens of a vocabulary that must be written in a script for the model to read it (MiniLM: Latin 27,766,
/// Han 488, Cyrillic 86, Hangul 70).
pub const READ_MIN_TOKENS: usize = 1_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Script {
    Latin,
    Greek,
    Cyrillic,
    Armenian,
    Hebrew,
    Arabic,
    Devanagari,
    Bengali,
    Tamil,
    Thai,
    Georgian,
    Hangul,
    /// Chinese characters, as written in Chinese, Japanese and Korean.
    Han,
    /// Hiragana and katakana.
    Kana,
    Other,
}

const ALL: [Script; 15] = [
    Script::Latin,
    Script::Greek,
    Script::Cyrillic,
    Script::Armenian,
    Script::Hebrew,
    Script::Arabic,
    Script::Devanagari,
    Script::Bengali,
    Script::Tamil,
    Script::Thai,
    Script::Georgian,
    Script::Hangul,
    Script::Han,
    Script::Kana,
    Script::Other,
];

impl Script {
    /// The script of a letter; `None` for anything that is not a letter (digits, punctuation, symbols).
    pub fn of(c: char) -> Option<Script> {
        if !c.is_alphabetic() {
            return None;
        }
        let u = c as u32;
        Some(match u {
            0x0041..=0x024F | 0x1E00..=0x1EFF | 0x2C60..=0x2C7F | 0xA720..=0xA7FF | 0xFF21..=0xFF5A => Script::Latin,
            0x0370..=0x03FF | 0x1F00..=0x1FFF => Script::Greek,
            0x0400..=0x052F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => Script::Cyrillic,
            0x0530..=0x058F => Script::Armenian,
            0x0590..=0x05FF => Script::Hebrew,
            0x0600..=0x06FF | 0x0750..=0x077F | 0x08A0..=0x08FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => Script::Arabic,
            0x0900..=0x097F => Script::Devanagari,
            0x0980..=0x09FF => Script::Bengali,
            0x0B80..=0x0BFF => Script::Tamil,
            0x0E00..=0x0E7F => Script::Thai,
            0x10A0..=0x10FF => Script::Georgian,
            0x1100..=0x11FF | 0x3130..=0x318F | 0xA960..=0xA97F | 0xAC00..=0xD7AF | 0xD7B0..=0xD7FF => Script::Hangul,
            0x2E80..=0x2FDF | 0x3005 | 0x3007 | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3134F => Script::Han,
            0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => Script::Kana,
            _ => Script::Other,
        })
    }

    /// Its name, as messages and Python show it.
    pub fn name(self) -> &'static str {
        match self {
            Script::Latin => "Latin",
            Script::Greek => "Greek",
            Script::Cyrillic => "Cyrillic",
            Script::Armenian => "Armenian",
            Script::Hebrew => "Hebrew",
            Script::Arabic => "Arabic",
            Script::Devanagari => "Devanagari",
            Script::Bengali => "Bengali",
            Script::Tamil => "Tamil",
            Script::Thai => "Thai",
            Script::Georgian => "Georgian",
            Script::Hangul => "Hangul",
            Script::Han => "Han",
            Script::Kana => "Kana",
            Script::Other => "Other",
        }
    }

    fn index(self) -> usize {
        ALL.iter().position(|&s| s == self).unwrap_or(ALL.len() - 1)
    }
}

/// The scripts a model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scripts {
    read: [bool; ALL.len()],
}

impl Scripts {
    /// Every script: for a model whose vocabulary is not known.
    pub fn all() -> Self {
        Self { read: [true; ALL.len()] }
    }

    /// The scripts a vocabulary is written in: those of at least `READ_MIN_TOKENS` of its tokens. A token
    /// counts for a script when every letter of it is in that script (markers such as WordPiece's `##` and
    /// SentencePiece's `▁` are not letters).
    pub fn of_vocabulary<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Self {
        let mut counts = [0usize; ALL.len()];
        for token in tokens {
            let mut letters = token.chars().filter_map(Script::of);
            let Some(first) = letters.next() else { continue };
            if letters.all(|s| s == first) {
                counts[first.index()] += 1;
            }
        }
        let mut read = [false; ALL.len()];
        for (r, c) in read.iter_mut().zip(counts) {
            *r = c >= READ_MIN_TOKENS;
        }
        Self { read }
    }

    pub fn reads(&self, script: Script) -> bool {
        self.read[script.index()]
    }

    /// The share of `text`'s letters written in a script this model reads: 1 for a text without letters
    /// (digits and symbols mean the same in every script). Only the letters of words count (`word_letters`):
    /// a code such as `N-25` reads the same in every language.
    pub fn share_read(&self, text: &str) -> f32 {
        let counts = word_letters(text);
        let letters: usize = counts.iter().sum();
        if letters == 0 {
            return 1.0;
        }
        let read: usize = ALL.iter().zip(counts).filter(|(s, _)| self.reads(**s)).map(|(_, n)| n).sum();
        read as f32 / letters as f32
    }

    /// The scripts read, by name.
    pub fn names(&self) -> Vec<&'static str> {
        ALL.iter().filter(|s| self.reads(**s)).map(|s| s.name()).collect()
    }
}

/// Whether a character can be part of a code: ASCII letters and digits and the marks that join them
/// (`MT-4471`, `v2.3`, `eu_west_1`, `S3`).
fn in_code(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | '#')
}

/// How many letters of `text`'s words each script holds (by `Script::index`). The letters of a code, a run
/// of `in_code` characters holding a digit (`N-25`, `MT-4471`, `GPT-4o`), do not count: a code means the same
/// in every language, so it says nothing of which one the text is written in, and an English model reading
/// the `N` of `N-25 교정 보고서 담당자` reads none of the question (the identifier bonus and BM25 weigh codes).
fn word_letters(text: &str) -> [usize; ALL.len()] {
    let mut counts = [0usize; ALL.len()];
    let (mut run_letters, mut run_digit) = (0usize, false);
    let flush = |counts: &mut [usize; ALL.len()], letters: &mut usize, digit: &mut bool| {
        if !*digit {
            counts[Script::Latin.index()] += *letters;
        }
        (*letters, *digit) = (0, false);
    };
    for c in text.chars() {
        if in_code(c) {
            run_letters += usize::from(c.is_ascii_alphabetic());
            run_digit |= c.is_ascii_digit();
            continue;
        }
        flush(&mut counts, &mut run_letters, &mut run_digit);
        if let Some(s) = Script::of(c) {
            counts[s.index()] += 1;
        }
    }
    flush(&mut counts, &mut run_letters, &mut run_digit);
    counts
}

/// How many of a text's word letters (`word_letters`: not a code's) each script holds, by script name, most
/// first (ties by name).
pub fn letters_by_script(text: &str) -> Vec<(&'static str, usize)> {
    let counts = word_letters(text);
    let mut out: Vec<(&'static str, usize)> = ALL.iter().zip(counts).filter(|(_, n)| *n > 0).map(|(s, n)| (s.name(), n)).collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_are_classified_by_script() {
        assert_eq!(Script::of('a'), Some(Script::Latin));
        assert_eq!(Script::of('é'), Some(Script::Latin));
        assert_eq!(Script::of('펌'), Some(Script::Hangul));
        assert_eq!(Script::of('ᄑ'), Some(Script::Hangul), "a jamo is Hangul");
        assert_eq!(Script::of('東'), Some(Script::Han));
        assert_eq!(Script::of('の'), Some(Script::Kana));
        assert_eq!(Script::of('в'), Some(Script::Cyrillic));
        assert_eq!(Script::of('7'), None);
        assert_eq!(Script::of('-'), None);
    }

    #[test]
    fn a_script_is_read_when_the_vocabulary_has_enough_tokens_in_it() {
        let latin: Vec<String> = (0..READ_MIN_TOKENS).map(|i| format!("w{}", "abcdefghij".repeat(1 + i % 3))).collect();
        let mut vocab: Vec<&str> = latin.iter().map(String::as_str).collect();
        vocab.extend(["##펌", "▁서버", "東", "[UNK]", "##7"]);
        let s = Scripts::of_vocabulary(vocab);
        assert!(s.reads(Script::Latin));
        assert!(!s.reads(Script::Hangul) && !s.reads(Script::Han));
        assert_eq!(s.names(), ["Latin"]);
        assert_eq!(s.share_read("MT-4471 seal leak"), 1.0);
        assert_eq!(s.share_read("pump 펌프"), 4.0 / 6.0, "pump read; 펌, 프 not");
        assert_eq!(s.share_read("P-003 펌프"), 0.0, "a code's letters are no word's: 펌프 alone counts");
        assert_eq!(s.share_read("N-25의 교정 보고서"), 0.0, "the code ends where the Hangul starts");
        assert_eq!(s.share_read("S3 버킷 bucket"), 6.0 / 8.0);
        assert_eq!(s.share_read("MT-4471"), 1.0, "a code alone: nothing to misread");
        assert_eq!(s.share_read("12:30 -- 7"), 1.0, "no letters: nothing to misread");
        assert_eq!(Scripts::all().share_read("펌프"), 1.0);
    }

    #[test]
    fn letters_are_counted_by_script() {
        assert_eq!(letters_by_script("P-003 펌프가 새요"), [("Hangul", 5)], "P-003 is a code, not a word");
        assert_eq!(letters_by_script("pump P-003 펌프가"), [("Latin", 4), ("Hangul", 3)]);
        assert_eq!(letters_by_script("型番ABC123の件"), [("Han", 3), ("Kana", 1)], "a code inside unspaced text");
        assert!(letters_by_script("12:30").is_empty());
    }
}
