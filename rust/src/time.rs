//! Timestamps as the engine reads them: a turn's `ts` (for recency and date filters) and the `since` /
//! `until` bounds of a query. Pure.

use crate::error::{Error, Result};

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;

/// Parses an RFC 3339 time (or a bare `YYYY-MM-DD`, read as midnight UTC) into milliseconds since the epoch.
/// A time without a zone is read as UTC.
pub fn parse_ts_ms(ts: &str) -> Option<i64> {
    parse_written(ts).map(|(t, offset_s)| t.and_utc().timestamp_millis() - 1000 * i64::from(offset_s))
}

/// The month and year of a turn's `ts` in words ("May 2023"), on the clock the time was written in (a
/// turn at `2023-05-31T23:30:00-05:00` is May's, not June's); empty when `ts` is not a time. What BM25
/// indexes with a passage so that "what did we decide in March 2026" finds March's turns (`analyzer`).
/// English month names: the analyzer stems and matches them like any other word.
pub fn month_words(ts: &str) -> String {
    parse_written(ts).map(|(t, _)| t.format("%B %Y").to_string()).unwrap_or_default()
}

/// The day of a turn's `ts` on the clock it was written in; `None` when `ts` is not a time.
pub fn written_day(ts: &str) -> Option<chrono::NaiveDate> {
    parse_written(ts).map(|(t, _)| t.date())
}

/// The days a text names in full: "October 24, 2023", "24th Oct 2023" (English month names or their
/// three-letter forms, any case), "2023-10-24", "2023.10.24", "2023/10/24", and the unit form of Korean,
/// Japanese and Chinese ("2023년 10월 24일", "2023年10月24日"; `unit_dates`). A month and day without a year,
/// or a month and year alone, name no day: they are too loose to place a question in time ("the 3rd" of
/// which month?).
pub fn days_named(text: &str) -> Vec<chrono::NaiveDate> {
    // '.' and '/' stay inside a word for "2023.10.24"; at a word's ends they are punctuation ("Oct.", "2023.").
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric() && !"-./".contains(c))
        .map(|w| w.trim_matches(['.', '/']))
        .filter(|w| !w.is_empty())
        .collect();
    let mut days = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if let Some(d) = ["%Y-%m-%d", "%Y.%m.%d", "%Y/%m/%d"].iter().find_map(|f| chrono::NaiveDate::parse_from_str(w, f).ok()) {
            days.push(d);
            continue;
        }
        let at = |j: usize| words.get(i + j).copied().unwrap_or("");
        let found = if let Some(m) = month_number(w) {
            ymd(at(2), m, at(1)) // October 24, 2023
        } else if day_of_month(w).is_some() {
            // 24 October 2023, 24th of October 2023
            let (month, y) = if at(1).eq_ignore_ascii_case("of") { (at(2), at(3)) } else { (at(1), at(2)) };
            month_number(month).and_then(|m| ymd(y, m, w))
        } else {
            None
        };
        days.extend(found);
    }
    days.extend(unit_dates(text).into_iter().filter_map(|u| chrono::NaiveDate::from_ymd_opt(u.year?, u.month, u.day?)));
    days.dedup();
    days
}

/// The English names of the months a text names in the unit form ("5월", "2023년 5월", "5月"), in order:
/// what a BM25 query adds so that a question asked in Korean, Japanese or Chinese matches the month words
/// every passage is indexed with (`month_words`). An English question names its months in words already.
pub fn unit_month_names(text: &str) -> Vec<&'static str> {
    unit_dates(text).into_iter().filter_map(|u| chrono::Month::try_from(u8::try_from(u.month).ok()?).ok()).map(|m| m.name()).collect()
}

/// A date written with unit words after its numbers: year, month and day in that order, each optional but
/// the month ("2023년 10월 24일", "10월 24일", "2023年10月", "10月"), spaces allowed between the parts.
#[derive(Debug, PartialEq)]
struct UnitDate {
    year: Option<i32>,
    month: u32,
    day: Option<u32>,
}

/// Which part of a date a unit word marks: 0 year (년, 年), 1 month (월, 月), 2 day (일, 日).
fn unit_of(c: char) -> Option<usize> {
    match c {
        '년' | '年' => Some(0),
        '월' | '月' => Some(1),
        '일' | '日' => Some(2),
        _ => None,
    }
}

fn unit_dates(text: &str) -> Vec<UnitDate> {
    let chars: Vec<char> = text.chars().collect();
    // Each number followed by a unit word: (value, unit, where it starts, where it ends).
    let mut parts: Vec<(u32, usize, usize, usize)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() || (i > 0 && chars[i - 1].is_ascii_digit()) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && chars[j].is_ascii_digit() {
            j += 1;
        }
        let mut k = j;
        while k < chars.len() && chars[k] == ' ' {
            k += 1;
        }
        match (chars.get(k).copied().and_then(unit_of), chars[i..j].iter().collect::<String>().parse::<u32>()) {
            (Some(unit), Ok(value)) if j - i <= 4 => {
                parts.push((value, unit, i, k + 1));
                i = k + 1;
            }
            _ => i = j,
        }
    }
    let mut out = Vec::new();
    let mut p = 0;
    while p < parts.len() {
        // A run of parts with only spaces between them, read as year? month day?.
        let mut run = vec![parts[p]];
        while p + 1 < parts.len() && chars[parts[p].3..parts[p + 1].2].iter().all(|c| c.is_whitespace()) {
            p += 1;
            run.push(parts[p]);
        }
        p += 1;
        let mut r = run.iter().peekable();
        let year = r.next_if(|x| x.1 == 0).and_then(|x| i32::try_from(x.0).ok()).filter(|y| (1000..=9999).contains(y));
        let Some(month) = r.next_if(|x| x.1 == 1).map(|x| x.0).filter(|m| (1..=12).contains(m)) else {
            continue;
        };
        let day = r.next_if(|x| x.1 == 2).map(|x| x.0).filter(|d| (1..=31).contains(d));
        out.push(UnitDate { year, month, day });
    }
    out
}

/// A month's name or its three-letter form, any case (chrono's own parser), or "Sept".
fn month_number(word: &str) -> Option<u32> {
    if word.eq_ignore_ascii_case("sept") {
        return Some(9);
    }
    word.parse::<chrono::Month>().ok().map(|m| m.number_from_month())
}

fn ymd(year_word: &str, month: u32, day_word: &str) -> Option<chrono::NaiveDate> {
    chrono::NaiveDate::from_ymd_opt(year(year_word)?, month, day_of_month(day_word)?)
}

/// "24", "24th", "1st": a day of a month.
fn day_of_month(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    let ok_suffix = matches!(suffix.to_lowercase().as_str(), "" | "st" | "nd" | "rd" | "th");
    (ok_suffix && (1..=2).contains(&digits.len())).then(|| digits.parse().ok()).flatten().filter(|d| (1..=31).contains(d))
}

fn year(word: &str) -> Option<i32> {
    (word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit())).then(|| word.parse().ok()).flatten()
}

/// A time as written: the reading of its clock and that clock's offset from UTC in seconds (0 when it names
/// no zone). An RFC 3339 time, one without a zone, or a bare `YYYY-MM-DD` (midnight).
fn parse_written(ts: &str) -> Option<(chrono::NaiveDateTime, i32)> {
    let ts = ts.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(ts) {
        return Some((t.naive_local(), t.offset().local_minus_utc()));
    }
    if let Ok(t) = chrono::NaiveDateTime::parse_from_str(ts, "%Y-%m-%dT%H:%M:%S%.f") {
        return Some((t, 0));
    }
    chrono::NaiveDate::parse_from_str(ts, "%Y-%m-%d").ok().and_then(|d| d.and_hms_opt(0, 0, 0)).map(|t| (t, 0))
}

/// Parses a `since`/`until` bound: an RFC 3339 time, or a date. A bare date as an upper bound means the end
/// of that day, so `until=2026-10-08` includes the 8th.
pub fn parse_bound(s: &str, upper: bool) -> Result<i64> {
    let ms = parse_ts_ms(s).ok_or_else(|| Error::InvalidInput(format!("not a date or an RFC 3339 time: {s:?}")))?;
    let bare_date = s.trim().len() == 10;
    Ok(if upper && bare_date { ms + DAY_MS - 1 } else { ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_times() {
        assert_eq!(parse_ts_ms("1970-01-02T00:00:00Z"), Some(DAY_MS));
        assert_eq!(parse_ts_ms("1970-01-02"), Some(DAY_MS));
        assert_eq!(parse_ts_ms("1970-01-01T00:00:01+00:00"), Some(1000));
        assert_eq!(parse_ts_ms("1970-01-01T00:00:01.5"), Some(1500));
        assert_eq!(parse_ts_ms("yesterday"), None);
        assert_eq!(parse_ts_ms("1970-01-01T01:00:00+01:00"), Some(0), "an offset is taken off");
    }

    #[test]
    fn a_question_names_a_day_in_full() {
        let d = |y, m, d| chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap();
        assert_eq!(days_named("What did Audrey eat for dinner on October 24, 2023?"), vec![d(2023, 10, 24)]);
        assert_eq!(days_named("how was John on 10th april 2022"), vec![d(2022, 4, 10)]);
        assert_eq!(days_named("the 3rd of March 2024"), vec![d(2024, 3, 3)]);
        assert_eq!(days_named("the deploy of 2026-03-03 and Sept 4 2025"), vec![d(2026, 3, 3), d(2025, 9, 4)]);
        assert_eq!(days_named("what did we decide in March 2026?"), vec![], "a month is not a day");
        assert_eq!(days_named("on May 3rd"), vec![], "no year");
        assert_eq!(days_named("21 Cedar Way, 2023"), vec![], "a house number is not a day");
        assert_eq!(days_named("February 30, 2023 and may 2023"), vec![], "no such day");
        assert_eq!(written_day("2023-05-31T23:30:00-05:00"), Some(d(2023, 5, 31)), "on the clock it was written in");
        assert_eq!(days_named("the release of 2023.10.24, then Oct. 30, 2023."), vec![d(2023, 10, 24), d(2023, 10, 30)]);
        assert_eq!(days_named("2023/10/24 or 10/24/2023"), vec![d(2023, 10, 24)], "a year first is unambiguous");
    }

    #[test]
    fn a_question_names_a_day_with_unit_words() {
        let d = |y, m, d| chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap();
        assert_eq!(days_named("2023년 10월 24일에 뭘 먹었지?"), vec![d(2023, 10, 24)]);
        assert_eq!(days_named("2023년10월24일 회의"), vec![d(2023, 10, 24)], "no spaces");
        assert_eq!(days_named("2023年10月24日の会議"), vec![d(2023, 10, 24)]);
        assert_eq!(days_named("10월 24일에"), vec![], "no year");
        assert_eq!(days_named("2023년 2월 30일"), vec![], "no such day");
        assert_eq!(days_named("2023년에 10월 24일"), vec![], "a year apart from its month and day");
        assert_eq!(unit_month_names("2023년 5월에 입양한 것은? 그리고 12월"), vec!["May", "December"]);
        assert_eq!(unit_month_names("13월, 3일, 5년, 방 5개"), Vec::<&str>::new(), "no month");
    }

    #[test]
    fn a_turn_is_dated_by_its_own_clock() {
        assert_eq!(month_words("2023-05-21T10:57:00Z"), "May 2023");
        assert_eq!(month_words("2023-05-31T23:30:00-05:00"), "May 2023", "June in UTC, May where it was said");
        assert_eq!(month_words("2023-12-01T00:00:00.5"), "December 2023");
        assert_eq!(month_words("2024-02-29"), "February 2024");
        assert_eq!(month_words("last Tuesday"), "");
        assert_eq!(month_words(""), "");
    }

    #[test]
    fn a_bare_date_as_upper_bound_covers_the_day() {
        assert_eq!(parse_bound("1970-01-02", false).unwrap(), DAY_MS);
        assert_eq!(parse_bound("1970-01-02", true).unwrap(), 2 * DAY_MS - 1);
        assert_eq!(parse_bound("1970-01-02T00:00:00Z", true).unwrap(), DAY_MS);
        assert!(parse_bound("soon", false).is_err());
    }
}
