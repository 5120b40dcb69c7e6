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
