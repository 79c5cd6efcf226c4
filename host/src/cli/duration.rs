//! Durations as flags take them: `90s`, `30m`, `2h` (`acp --idle-timeout`, `serve
//! --session-lifetime`).

use std::time::Duration;

/// `<number><unit>` with unit `s`, `m` or `h`, or a bare `0`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?} is not a duration: use a number and s, m or h, e.g. 30m");
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?);
    let n: u64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit {
        "s" => Some(n),
        "m" => n.checked_mul(60),
        "h" => n.checked_mul(3600),
        _ => None,
    };
    seconds.map(Duration::from_secs).ok_or_else(bad)
}

/// [`parse_duration`], above zero.
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        Duration::ZERO => Err(format!("{text:?} is no time at all: give a duration above 0, e.g. 8h")),
        positive => Ok(positive),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(
            parse_duration("5"),
            Err("\"5\" is not a duration: use a number and s, m or h, e.g. 30m".into())
        );
        assert!(parse_duration("m").is_err() && parse_duration("3d").is_err());
        assert_eq!(
            parse_positive_duration("0"),
            Err("\"0\" is no time at all: give a duration above 0, e.g. 8h".into())
        );
        assert_eq!(parse_positive_duration("8h"), Ok(Duration::from_secs(8 * 3600)));
    }
}
