//! Which rows a read sees: a typed filter that becomes Lance SQL (`to_sql`, for Lance's prefiltered
//! queries and scans) and a predicate (`admits`, for the resident copy). The two are written side by side
//! so they cannot drift: every field is a conjunction, an empty list means "any".

use crate::options::RecallOptions;
use crate::record::RowView;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Inclusive bounds on the turn time (ms since the epoch). A row without a time fails any bound, as
    /// NULL does in SQL.
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub sessions: Vec<String>,
    pub roles: Vec<String>,
    pub block_types: Vec<String>,
    pub harnesses: Vec<String>,
    /// Working directories (projects): a turn held in one of them, exactly.
    pub projects: Vec<String>,
}

impl Filter {
    /// Every row of one session.
    pub fn session(id: &str) -> Self {
        Self { sessions: vec![id.to_string()], ..Default::default() }
    }

    /// Every row of these sessions.
    pub fn sessions(ids: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self { sessions: ids.into_iter().map(Into::into).collect(), ..Default::default() }
    }

    /// Rows with a time within the bounds.
    pub fn dates(since_ms: Option<i64>, until_ms: Option<i64>) -> Self {
        Self { since_ms, until_ms, ..Default::default() }
    }

    /// What a recall's options let through, applied before ranking.
    pub fn recall(o: &RecallOptions) -> Self {
        Self {
            since_ms: o.since_ms,
            until_ms: o.until_ms,
            sessions: o.sessions.clone(),
            roles: o.roles.clone(),
            block_types: o.block_types.clone(),
            harnesses: o.harnesses.clone(),
            projects: o.projects.clone(),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The filter as a Lance SQL predicate; `None` when it lets everything through.
    pub fn to_sql(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(s) = self.since_ms {
            parts.push(format!("ts_ms >= {s}"));
        }
        if let Some(u) = self.until_ms {
            parts.push(format!("ts_ms <= {u}"));
        }
        for (col, vals) in self.lists() {
            if !vals.is_empty() {
                parts.push(format!("{col} IN ({})", vals.iter().map(|v| sql_str(v)).collect::<Vec<_>>().join(", ")));
            }
        }
        if parts.is_empty() {
            None
        } else {
            Some(parts.join(" AND "))
        }
    }

    /// Whether a row passes: `to_sql` as a predicate.
    pub fn admits(&self, row: &RowView) -> bool {
        let within = |bound: Option<i64>, ok: fn(i64, i64) -> bool| bound.is_none_or(|b| row.ts_ms.is_some_and(|t| ok(t, b)));
        within(self.since_ms, |t, b| t >= b)
            && within(self.until_ms, |t, b| t <= b)
            && self.lists().into_iter().all(|(col, vals)| vals.is_empty() || vals.iter().any(|v| v == column(row, col)))
    }

    /// The list filters with the column each one tests.
    fn lists(&self) -> [(&'static str, &[String]); 5] {
        [
            ("session_id", &self.sessions),
            ("role", &self.roles),
            ("block_type", &self.block_types),
            ("harness", &self.harnesses),
            ("workdir", &self.projects),
        ]
    }
}

/// A row's value of a column that `Filter::lists` names.
fn column<'a>(row: &RowView<'a>, col: &str) -> &'a str {
    match col {
        "session_id" => row.session_id,
        "role" => row.role,
        "block_type" => row.block_type,
        "harness" => row.harness,
        "workdir" => row.workdir,
        other => unreachable!("Filter::lists names no column {other}"),
    }
}

/// Quotes a string for a SQL filter.
pub fn sql_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row<'a>(session_id: &'a str, role: &'a str, harness: &'a str, ts_ms: Option<i64>) -> RowView<'a> {
        RowView { session_id, role, harness, workdir: "/src/app", block_type: "text", ts_ms }
    }

    #[test]
    fn sql_combines_dates_and_lists() {
        let f = Filter {
            since_ms: Some(1),
            until_ms: Some(2),
            roles: vec!["user".into()],
            block_types: vec!["text".into(), "tool_use".into()],
            ..Default::default()
        };
        assert_eq!(f.to_sql().unwrap(), "ts_ms >= 1 AND ts_ms <= 2 AND role IN ('user') AND block_type IN ('text', 'tool_use')");
        assert_eq!(Filter::default().to_sql(), None);
        assert_eq!(Filter::session("it's").to_sql().unwrap(), "session_id IN ('it''s')");
    }

    #[test]
    fn the_predicate_agrees_with_the_sql() {
        let f = Filter { since_ms: Some(10), harnesses: vec!["codex".into()], ..Default::default() };
        assert!(f.admits(&row("s", "user", "codex", Some(10))));
        assert!(!f.admits(&row("s", "user", "codex", Some(9))));
        assert!(!f.admits(&row("s", "user", "codex", None)), "no time fails a bound, as NULL does");
        assert!(!f.admits(&row("s", "user", "claude-code", Some(11))));
        assert!(Filter::sessions(["a", "b"]).admits(&row("b", "user", "x", None)));
        assert!(!Filter::sessions(["a", "b"]).admits(&row("c", "user", "x", None)));
        assert!(Filter::default().admits(&row("c", "tool", "x", None)));
        let project = Filter { projects: vec!["/src/app".into()], ..Default::default() };
        assert!(project.admits(&row("s", "user", "x", None)));
        assert!(!Filter { projects: vec!["/src".into()], ..Default::default() }.admits(&row("s", "user", "x", None)), "exactly");
        assert_eq!(project.to_sql().unwrap(), "workdir IN ('/src/app')");
    }

    #[test]
    fn a_recall_filter_takes_every_filter_option() {
        let o = RecallOptions {
            since_ms: Some(1),
            until_ms: Some(2),
            sessions: vec!["s".into()],
            roles: vec!["r".into()],
            block_types: vec!["b".into()],
            harnesses: vec!["h".into()],
            projects: vec!["/p".into()],
            ..Default::default()
        };
        let f = Filter::recall(&o);
        assert_eq!(
            f.to_sql().unwrap(),
            "ts_ms >= 1 AND ts_ms <= 2 AND session_id IN ('s') AND role IN ('r') AND block_type IN ('b') AND harness IN ('h') \
             AND workdir IN ('/p')"
        );
        assert!(Filter::recall(&RecallOptions::default()).is_empty());
    }

    #[test]
    fn quotes_are_escaped() {
        assert_eq!(sql_str("it's"), "'it''s'");
    }
}
