//! Form mode on a terminal: the server's message, a choice to fill in, decline or cancel, then
//! one prompt per field in the server's order, each showing its default (Enter keeps it), its
//! limits and whether it is required. Every server string is escaped before it is drawn.

use dialoguer::console::Term;
use dialoguer::{Confirm, Input, MultiSelect, Select};
use serde_json::{Map, Value};

use toolport::display::escape_line;
use toolport::questions::{ElicitationAnswer, Field, FieldKind, Form};

/// Asks `form` on the terminal. A prompt that fails (the terminal went away) cancels.
pub fn ask(server: &str, message: &str, form: &Form) -> ElicitationAnswer {
    let term = Term::stderr();
    match fill(&term, server, message, form) {
        Ok(answer) => answer,
        Err(e) => {
            tracing::warn!("cannot ask on the terminal: {e}");
            ElicitationAnswer::Cancel
        }
    }
}

fn fill(term: &Term, server: &str, message: &str, form: &Form) -> dialoguer::Result<ElicitationAnswer> {
    term.write_line(&format!("MCP server {server} asks: {}", escape_line(message)))?;
    let decision = Select::new()
        .with_prompt("Answer")
        .items(["Fill in the form", "Decline", "Cancel"])
        .default(0)
        .interact_on_opt(term)?;
    match decision {
        Some(0) => {}
        Some(1) => return Ok(ElicitationAnswer::Decline),
        _ => return Ok(ElicitationAnswer::Cancel),
    }
    let mut answers = Map::new();
    for field in &form.fields {
        if let Some(description) = &field.description {
            term.write_line(&format!("  {}", escape_line(description)))?;
        }
        match ask_field(term, field)? {
            Asked::Value(value) => {
                answers.insert(field.name.clone(), value);
            }
            Asked::Skipped => {}
            Asked::Cancelled => return Ok(ElicitationAnswer::Cancel),
        }
    }
    Ok(ElicitationAnswer::Accept(answers))
}

enum Asked {
    Value(Value),
    /// An optional field left empty.
    Skipped,
    /// Esc on a list.
    Cancelled,
}

fn ask_field(term: &Term, field: &Field) -> dialoguer::Result<Asked> {
    let label = label(field);
    Ok(match &field.kind {
        FieldKind::Text { default, format, min_length, max_length } => {
            let label = match format {
                Some(format) => format!("{label} ({format})"),
                None => label,
            };
            let (min, max) = (min_length.unwrap_or(0) as usize, max_length.map(|m| m as usize));
            let required = field.required;
            let text = prompt_text(term, label, default.clone(), move |s: &String| {
                let n = s.chars().count();
                if s.is_empty() {
                    return if required { Err("required".to_string()) } else { Ok(()) };
                }
                if n < min || max.is_some_and(|m| n > m) {
                    return Err(match max {
                        Some(m) => format!("between {min} and {m} characters"),
                        None => format!("at least {min} characters"),
                    });
                }
                Ok(())
            })?;
            if text.is_empty() { Asked::Skipped } else { Asked::Value(Value::String(text)) }
        }
        FieldKind::Integer { default, minimum, maximum } => {
            let (min, max, required) = (*minimum, *maximum, field.required);
            let label = format!("{label}{}", range(min, max));
            let text = prompt_text(term, label, default.map(|d| d.to_string()), move |s: &String| {
                if s.is_empty() {
                    return if required { Err("required".to_string()) } else { Ok(()) };
                }
                let n: i64 = s.trim().parse().map_err(|_| "a whole number".to_string())?;
                in_range(n, min, max)
            })?;
            match text.trim().parse::<i64>() {
                Ok(n) => Asked::Value(Value::from(n)),
                Err(_) => Asked::Skipped,
            }
        }
        FieldKind::Number { default, minimum, maximum } => {
            let (min, max, required) = (*minimum, *maximum, field.required);
            let label = format!("{label}{}", range(min, max));
            let text = prompt_text(term, label, default.map(|d| d.to_string()), move |s: &String| {
                if s.is_empty() {
                    return if required { Err("required".to_string()) } else { Ok(()) };
                }
                let n: f64 = s.trim().parse().map_err(|_| "a number".to_string())?;
                in_range(n, min, max)
            })?;
            match text.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                Some(n) => Asked::Value(Value::Number(n)),
                None => Asked::Skipped,
            }
        }
        FieldKind::Boolean { default } => {
            let yes =
                Confirm::new().with_prompt(label).default(default.unwrap_or(false)).interact_on(term)?;
            Asked::Value(Value::Bool(yes))
        }
        FieldKind::Choice { options, default } => {
            let labels: Vec<String> = options.iter().map(|o| escape_line(&o.label).into_owned()).collect();
            let start =
                default.as_ref().and_then(|d| options.iter().position(|o| &o.value == d)).unwrap_or(0);
            match Select::new().with_prompt(label).items(&labels).default(start).interact_on_opt(term)? {
                Some(i) => {
                    options.get(i).map_or(Asked::Skipped, |o| Asked::Value(Value::String(o.value.clone())))
                }
                None => Asked::Cancelled,
            }
        }
        FieldKind::Choices { options, default, min_items, max_items } => {
            let labels: Vec<String> = options.iter().map(|o| escape_line(&o.label).into_owned()).collect();
            let chosen: Vec<bool> =
                options.iter().map(|o| default.as_ref().is_some_and(|d| d.contains(&o.value))).collect();
            let label = format!("{label}{} (space toggles, Enter confirms)", count(*min_items, *max_items));
            loop {
                let picked = MultiSelect::new()
                    .with_prompt(label.as_str())
                    .items(&labels)
                    .defaults(&chosen)
                    .interact_on_opt(term)?;
                let Some(picked) = picked else { return Ok(Asked::Cancelled) };
                let n = picked.len() as u64;
                if min_items.is_some_and(|m| n < m) || max_items.is_some_and(|m| n > m) {
                    term.write_line(&format!("  choose{}", count(*min_items, *max_items)))?;
                    continue;
                }
                let values =
                    picked.iter().filter_map(|&i| options.get(i)).map(|o| Value::String(o.value.clone()));
                break Asked::Value(Value::Array(values.collect()));
            }
        }
    })
}

/// A line prompt with `default` shown (Enter keeps it) and `check` run on each answer.
fn prompt_text(
    term: &Term,
    label: String,
    default: Option<String>,
    check: impl FnMut(&String) -> Result<(), String>,
) -> dialoguer::Result<String> {
    let mut input = Input::<String>::new().with_prompt(label).allow_empty(true).validate_with(check);
    if let Some(default) = default {
        input = input.default(default);
    }
    input.interact_text_on(term)
}

fn label(field: &Field) -> String {
    let star = if field.required { " *" } else { "" };
    format!("{}{star}", escape_line(field.label()))
}

fn range<T: std::fmt::Display>(min: Option<T>, max: Option<T>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!(" ({a}–{b})"),
        (Some(a), None) => format!(" (≥ {a})"),
        (None, Some(b)) => format!(" (≤ {b})"),
        (None, None) => String::new(),
    }
}

fn count(min: Option<u64>, max: Option<u64>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!(" ({a} to {b})"),
        (Some(a), None) => format!(" (at least {a})"),
        (None, Some(b)) => format!(" (at most {b})"),
        (None, None) => String::new(),
    }
}

fn in_range<T: PartialOrd + std::fmt::Display + Copy>(
    n: T,
    min: Option<T>,
    max: Option<T>,
) -> Result<(), String> {
    if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
        return Err(format!("must be in{}", range(min, max)));
    }
    Ok(())
}
