//! Destructive SQL in a query string: the keywords `DROP` and `TRUNCATE`, as whole words in any
//! case. A word is a run of letters, digits, `_` and `$` (what an SQL identifier may hold), so
//! `dropdown`, `drop_table_log` and `$drop` are not the keyword; `DROP` inside a quoted literal
//! is, since dynamic SQL (`EXECUTE 'drop table t'`) runs literals too, and refusing one harmless
//! query is cheaper than running one drop.

/// The refused keywords, as the reason names them.
const KEYWORDS: [&str; 2] = ["DROP", "TRUNCATE"];

/// The first refused keyword `sql` holds as a word, if any.
pub fn destructive_keyword(sql: &str) -> Option<&'static str> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    sql.split(|c: char| !is_word(c))
        .find_map(|word| KEYWORDS.into_iter().find(|k| word.eq_ignore_ascii_case(k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_and_truncate_are_found_in_any_case() {
        assert_eq!(destructive_keyword("DROP TABLE users"), Some("DROP"));
        assert_eq!(destructive_keyword("select 1; drop table users;"), Some("DROP"));
        assert_eq!(destructive_keyword("Truncate\tlogs"), Some("TRUNCATE"));
        assert_eq!(destructive_keyword("x;DROP/**/TABLE t"), Some("DROP"));
        assert_eq!(destructive_keyword("EXECUTE 'drop table t'"), Some("DROP"));
    }

    #[test]
    fn the_words_inside_other_words_are_not_keywords() {
        for sql in [
            "SELECT dropdown FROM ui",
            "select * from drop_log",
            "UPDATE t SET truncated = 1",
            "SELECT $drop, drops, airdrop",
            "",
        ] {
            assert_eq!(destructive_keyword(sql), None, "{sql}");
        }
    }
}
