//! Passages said more than once: a ranking keeps the best-placed copy of each text and drops the rest, so
//! k hits are k different things said. Small talk and boilerplate recur word for word ("Bumped into Sam at
//! the shops"); three copies of one line would otherwise fill a top 3 that the answer ranked fourth in.
//! Pure: no disk, no model.

use std::collections::{HashMap, HashSet};

/// A text as repeats are compared: lower case, runs of whitespace as one space, trimmed. Two passages that
/// differ only there say the same thing; any other difference (a word, a digit, punctuation) keeps both.
pub fn repeat_key(text: &str) -> String {
    // Built in one string (a recall keys dozens of passages: a string per word was most of the cut's time);
    // a word that is not ASCII goes through `str::to_lowercase`, which knows a word-final sigma.
    let mut key = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !key.is_empty() {
            key.push(' ');
        }
        if word.is_ascii() {
            key.extend(word.bytes().map(|b| b.to_ascii_lowercase() as char));
        } else {
            key.push_str(&word.to_lowercase());
        }
    }
    key
}

/// The items of `ranked` whose text is among its first `n` distinct texts, every copy of those kept: the
/// candidate cut counts things said, not copies, while a later step (recency) still picks among the copies.
pub fn first_n_texts<T>(ranked: Vec<T>, n: usize, text_of: impl Fn(&T) -> &str) -> Vec<T> {
    let mut seen: HashSet<String> = HashSet::with_capacity(n);
    ranked
        .into_iter()
        .filter(|item| {
            let key = repeat_key(text_of(item));
            seen.contains(&key) || (seen.len() < n && seen.insert(key))
        })
        .collect()
}

/// The distinct texts of `items` in order of first appearance, and for each item the index of its text
/// there: a step that scores texts (the reranker) scores each once, however many copies the pool holds.
pub fn distinct_texts<'a, T>(items: &'a [T], text_of: impl Fn(&'a T) -> &'a str) -> (Vec<&'a str>, Vec<usize>) {
    let mut index: HashMap<String, usize> = HashMap::with_capacity(items.len());
    let mut texts = Vec::new();
    let of = items
        .iter()
        .map(|item| {
            let text = text_of(item);
            *index.entry(repeat_key(text)).or_insert_with(|| {
                texts.push(text);
                texts.len() - 1
            })
        })
        .collect();
    (texts, of)
}

/// `ranked` without the items whose text (`text_of`) repeats an earlier item's, in order.
pub fn first_of_each_text<T>(ranked: Vec<T>, text_of: impl Fn(&T) -> &str) -> Vec<T> {
    let mut seen: HashSet<String> = HashSet::with_capacity(ranked.len());
    ranked.into_iter().filter(|item| seen.insert(repeat_key(text_of(item)))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_copy_of_each_text_is_kept_in_order() {
        let ranked = vec!["Bumped into Sam.", "bumped  into sam.", "The boiler is fixed.", " Bumped into Sam.\n", "Bumped into Sam!"];
        assert_eq!(first_of_each_text(ranked, |t| t), vec!["Bumped into Sam.", "The boiler is fixed.", "Bumped into Sam!"]);
    }

    #[test]
    fn distinct_texts_are_all_kept() {
        let ranked = vec![("a", 3.0), ("b", 2.0), ("c", 1.0)];
        assert_eq!(first_of_each_text(ranked.clone(), |(t, _)| t), ranked);
        assert!(first_of_each_text(Vec::<&str>::new(), |t| t).is_empty());
    }

    #[test]
    fn the_candidate_cut_counts_distinct_texts_and_keeps_their_copies() {
        let ranked = vec!["chat", "chat", "chat", "fact", "other", "Chat", "fact", "third"];
        assert_eq!(first_n_texts(ranked.clone(), 2, |t| t), vec!["chat", "chat", "chat", "fact", "Chat", "fact"]);
        assert_eq!(first_n_texts(ranked.clone(), 0, |t| t), Vec::<&str>::new());
        assert_eq!(first_n_texts(ranked.clone(), 10, |t| t), ranked);
    }

    #[test]
    fn each_distinct_text_is_listed_once_and_every_item_points_at_its_own() {
        let items = vec!["chat", "fact", "Chat ", "chat", "other"];
        let (texts, of) = distinct_texts(&items, |t| t);
        assert_eq!(texts, vec!["chat", "fact", "other"]);
        assert_eq!(of, vec![0, 1, 0, 0, 2]);
    }

    #[test]
    fn the_key_folds_case_and_whitespace_only() {
        assert_eq!(repeat_key("  Paid\tthe  Water bill\n"), "paid the water bill");
        assert_ne!(repeat_key("paid £40"), repeat_key("paid £41"));
        assert_eq!(repeat_key("ΟΔΟΣ  Ülkü"), "οδος ülkü", "not ASCII: the word's own lower case, final sigma too");
    }
}
