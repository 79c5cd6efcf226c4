//! Personal data in free text: email addresses, phone numbers and card numbers, each replaced by
//! a placeholder. Pure text in, text out, so it is tested on the host (`cargo test`).
//!
//! Hand-written scanners rather than `regex`: the component stays small (it is instantiated for
//! every answer), and the rules a regular expression cannot say (the Luhn check, which digit
//! groupings make a phone number) sit next to the ones it could.
//!
//! The passes run in this order, each over the previous one's output: emails first (an address
//! may hold digits), then cards (a card number would otherwise read as a long phone number),
//! then phones. A placeholder holds no digit and no `@`, so a later pass never matches inside an
//! earlier one's work.

use std::borrow::Cow;
use std::ops::Range;

/// What replaces an email address.
pub const EMAIL: &str = "[email]";
/// What replaces a phone number.
pub const PHONE: &str = "[phone]";
/// What replaces a card number.
pub const CARD: &str = "[card]";

/// How many of each were replaced.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub emails: usize,
    pub phones: usize,
    pub cards: usize,
}

impl Counts {
    pub fn total(self) -> usize {
        self.emails + self.phones + self.cards
    }

    pub fn add(&mut self, other: Counts) {
        self.emails += other.emails;
        self.phones += other.phones;
        self.cards += other.cards;
    }
}

/// One pass: the spans of what it finds, in order and not overlapping.
type Finder = fn(&[u8]) -> Vec<Range<usize>>;

/// `text` with every email address, card number and phone number replaced; borrowed when
/// nothing was found.
pub fn redact(text: &str) -> (Cow<'_, str>, Counts) {
    let mut counts = Counts::default();
    let mut out = Cow::Borrowed(text);
    let passes: [(Finder, &str, &mut usize); 3] = [
        (email_spans, EMAIL, &mut counts.emails),
        (card_spans, CARD, &mut counts.cards),
        (phone_spans, PHONE, &mut counts.phones),
    ];
    for (find, placeholder, count) in passes {
        let spans = find(out.as_bytes());
        if spans.is_empty() {
            continue;
        }
        *count = spans.len();
        out = Cow::Owned(replace(&out, &spans, placeholder));
    }
    (out, counts)
}

/// `text` with each span (in order, not overlapping, on ASCII boundaries) replaced.
fn replace(text: &str, spans: &[Range<usize>], placeholder: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        out.push_str(&text[at..span.start]);
        out.push_str(placeholder);
        at = span.end;
    }
    out.push_str(&text[at..]);
    out
}

// Every scanner below works on bytes and only ever stops on an ASCII byte, so its spans are
// valid `str` boundaries whatever the text around them is.

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A number may start at `at`: the byte before it neither continues a word nor joins it to a
/// longer token of digits (`v1.2`, `id-7`, `12/34`, `+`).
fn starts_clean(b: &[u8], at: usize) -> bool {
    let Some(&before) = at.checked_sub(1).and_then(|i| b.get(i)) else { return true };
    if is_word(before) || before == b'+' {
        return false;
    }
    let joined = matches!(before, b'.' | b'-' | b'/' | b':' | b',');
    !(joined && at >= 2 && b[at - 2].is_ascii_digit())
}

/// A number may end at `end`: the next byte neither continues a word nor joins it to more
/// digits (`.5` of a decimal, `:30` of a time). A full stop ending a sentence is fine.
fn ends_clean(b: &[u8], end: usize) -> bool {
    let Some(&after) = b.get(end) else { return true };
    if is_word(after) {
        return false;
    }
    let joined = matches!(after, b'.' | b'-' | b'/' | b':' | b',');
    !(joined && b.get(end + 1).is_some_and(u8::is_ascii_digit))
}

/// Email addresses: `local@domain.tld`, the local part of letters, digits and `._%+-`, the
/// domain of dot-separated labels ending in a top-level domain of two letters or more.
fn email_spans(b: &[u8]) -> Vec<Range<usize>> {
    let is_local = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'%' | b'+' | b'-');
    let is_domain = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-');
    let mut spans = Vec::new();
    let mut floor = 0;
    for at in (0..b.len()).filter(|&i| b[i] == b'@') {
        if at < floor {
            continue;
        }
        let mut start = at;
        while start > floor && is_local(b[start - 1]) {
            start -= 1;
        }
        while start < at && b[start] == b'.' {
            start += 1;
        }
        if start == at || b[at - 1] == b'.' {
            continue;
        }
        let mut end = at + 1;
        while end < b.len() && is_domain(b[end]) {
            end += 1;
        }
        while end > at + 1 && matches!(b[end - 1], b'.' | b'-') {
            end -= 1;
        }
        if valid_domain(&b[at + 1..end]) {
            spans.push(start..end);
            floor = end;
        }
    }
    spans
}

fn valid_domain(domain: &[u8]) -> bool {
    let labels: Vec<&[u8]> = domain.split(|&c| c == b'.').collect();
    let tld = labels.last().copied().unwrap_or_default();
    labels.len() >= 2
        && labels.iter().all(|l| !l.is_empty() && l[0] != b'-' && l[l.len() - 1] != b'-')
        && tld.len() >= 2
        && tld.iter().all(u8::is_ascii_alphabetic)
}

/// Card numbers: 13 to 19 digits, single spaces or dashes allowed between them, that pass the
/// Luhn check. A run that fails it (an order number, a timestamp) is left alone, and so is one
/// after a `+` (an international phone number).
fn card_spans(b: &[u8]) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() || !starts_clean(b, i) {
            i += 1;
            continue;
        }
        let start = i;
        let mut digits = Vec::new();
        let mut end = i;
        while end < b.len() {
            if b[end].is_ascii_digit() {
                digits.push(b[end] - b'0');
                end += 1;
            } else if matches!(b[end], b' ' | b'-') && b.get(end + 1).is_some_and(u8::is_ascii_digit) {
                end += 1;
            } else {
                break;
            }
        }
        if (13..=19).contains(&digits.len()) && luhn(&digits) && ends_clean(b, end) {
            spans.push(start..end);
        }
        i = end;
    }
    spans
}

/// The Luhn checksum every payment card number carries: from the right, every second digit
/// doubled (less 9 when over 9), and the sum a multiple of ten.
fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            match (i % 2, d * 2) {
                (0, _) => d,
                (_, doubled) if doubled > 9 => doubled - 9,
                (_, doubled) => doubled,
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// A run of digit groups that might be a phone number.
struct Number {
    span: Range<usize>,
    /// Each group's digit count, in order.
    groups: Vec<usize>,
    /// The separator after each group but the last (`)` for a closing parenthesis with nothing
    /// after it).
    separators: Vec<u8>,
    /// Whether it started with `+`.
    international: bool,
    /// Whether its first digit is 0 (a national trunk prefix: `020 7946 0958`).
    leading_zero: bool,
}

/// Phone numbers, in the forms common enough to recognise without a country's numbering plan:
/// - international: `+` then 8 to 15 digits (E.164), grouped by spaces, dashes, dots or
///   parentheses any way (`+1 (555) 123-4567`, `+44 20 7946 0958`, `+4930123456`);
/// - North American, separated: 3-3-4 digits, maybe after a `1`, the area code maybe in
///   parentheses (`555-123-4567`, `(555) 123-4567`, `1-800-555-1234`, `555.123.4567`);
/// - national with a trunk `0`, separated: 10 or 11 digits in groups of two or more
///   (`020 7946 0958`, `01 23 45 67 89`, `0171 1234567`).
///
/// A run of digits with no separator and no `+` is not taken for a phone number: timestamps and
/// identifiers look just like one. Nor are IP addresses, dates or decimals, whose groupings
/// match none of the forms above.
fn phone_spans(b: &[u8]) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let Some(number) = number_at(b, i) else {
            i += 1;
            continue;
        };
        if is_phone(&number) && ends_clean(b, number.span.end) {
            spans.push(number.span.clone());
        }
        i = number.span.end.max(i + 1);
    }
    spans
}

/// The run of digit groups starting at `at`, if one does: an optional `+`, then groups of
/// digits (a group maybe in parentheses) joined by one space, dash or dot.
fn number_at(b: &[u8], at: usize) -> Option<Number> {
    if !starts_clean(b, at) {
        return None;
    }
    let international = b[at] == b'+';
    let mut j = if international { at + 1 } else { at };
    let first = b.get(j).copied()?;
    if !(first.is_ascii_digit() || (first == b'(' && !international)) {
        return None;
    }
    let digit_count = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut number = Number {
        span: at..at,
        groups: Vec::new(),
        separators: Vec::new(),
        international,
        leading_zero: false,
    };
    loop {
        let open = b.get(j) == Some(&b'(');
        let digits_at = if open { j + 1 } else { j };
        let n = digit_count(digits_at.min(b.len()));
        let mut after = digits_at + n;
        if n == 0 || (open && b.get(after) != Some(&b')')) {
            break;
        }
        if open {
            after += 1;
        }
        if number.groups.is_empty() {
            number.leading_zero = b[digits_at] == b'0';
        }
        number.groups.push(n);
        number.span.end = after;
        j = after;
        let next_starts_group = |k: usize| b.get(k).is_some_and(|&c| c.is_ascii_digit() || c == b'(');
        match b.get(j) {
            Some(&sep @ (b' ' | b'-' | b'.')) if next_starts_group(j + 1) => {
                number.separators.push(sep);
                j += 1;
            }
            // `(555)123-4567`: the parenthesis alone separates.
            Some(c) if open && c.is_ascii_digit() => number.separators.push(b')'),
            _ => break,
        }
    }
    (!number.groups.is_empty()).then_some(number)
}

fn is_phone(number: &Number) -> bool {
    let digits: usize = number.groups.iter().sum();
    if number.international {
        return (8..=15).contains(&digits);
    }
    if number.separators.is_empty() {
        return false;
    }
    let groups = number.groups.as_slice();
    let north_american = matches!(groups, [3, 3, 4] | [1, 3, 3, 4]);
    let trunk = number.leading_zero
        && (10..=11).contains(&digits)
        && groups.len() <= 5
        && groups.iter().all(|&g| g >= 2);
    north_american || trunk
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(text: &str) -> String {
        redact(text).0.into_owned()
    }

    #[test]
    fn emails_are_replaced_with_their_whole_address() {
        assert_eq!(redacted("mail ana.b+tag@mail.example.org now"), "mail [email] now");
        assert_eq!(redacted("<bob@example.com>, eve@x.io."), "<[email]>, [email].");
        assert_eq!(
            redacted("a@b.c1 and a@b and @example.com and x@.com"),
            "a@b.c1 and a@b and @example.com and x@.com"
        );
    }

    #[test]
    fn card_numbers_that_pass_luhn_are_replaced() {
        assert_eq!(redacted("card 4111 1111 1111 1111 ok"), "card [card] ok");
        assert_eq!(redacted("4111-1111-1111-1111"), "[card]");
        assert_eq!(redacted("amex 378282246310005."), "amex [card].");
        assert_eq!(redacted("visa13 4222222222222"), "visa13 [card]");
    }

    #[test]
    fn digit_runs_that_fail_luhn_are_left_alone() {
        for text in
            ["4111 1111 1111 1112", "order 1234567890123456", "id 4111111111111111x", "4111111111111111.5"]
        {
            assert_eq!(redacted(text), text);
        }
    }

    #[test]
    fn phone_numbers_are_replaced() {
        assert_eq!(redacted("call +1 (555) 123-4567 today"), "call [phone] today");
        assert_eq!(redacted("+44 20 7946 0958"), "[phone]");
        assert_eq!(redacted("+4930123456."), "[phone].");
        assert_eq!(redacted("555-123-4567, (555) 123-4567, (555)123-4567"), "[phone], [phone], [phone]");
        assert_eq!(redacted("555.123.4567 or 1-800-555-1234"), "[phone] or [phone]");
        assert_eq!(redacted("020 7946 0958 / 01 23 45 67 89 / 0171 1234567"), "[phone] / [phone] / [phone]");
    }

    #[test]
    fn numbers_that_are_not_phones_are_left_alone() {
        for text in [
            "at 1733592000 since",
            "5551234567",
            "192.168.100.200",
            "2024-01-15 10:30",
            "3.14159265358979",
            "sizes 1024 2048 4096",
            "1 2 3 4 5 6 7 8 9 10",
            "v1.555-123-4567",
            "+1234",
            "uuid 123e4567-e89b-12d3-a456-426614174000",
        ] {
            assert_eq!(redacted(text), text);
        }
    }

    #[test]
    fn everything_in_one_text_is_counted() {
        let (text, counts) = redact("ana@example.com, 4111 1111 1111 1111, +44 20 7946 0958, bo@example.com");
        assert_eq!(text, "[email], [card], [phone], [email]");
        assert_eq!(counts, Counts { emails: 2, phones: 1, cards: 1 });
    }

    #[test]
    fn untouched_text_is_borrowed() {
        let (text, counts) = redact("nothing to see, 42 apples, ünïcödé");
        assert!(matches!(text, Cow::Borrowed(_)));
        assert_eq!(counts.total(), 0);
    }

    #[test]
    fn non_ascii_around_a_match_survives() {
        assert_eq!(redacted("é ana@example.com ü +33 1 23 45 67 89 ß"), "é [email] ü [phone] ß");
    }
}
