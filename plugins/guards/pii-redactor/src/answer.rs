//! Where an answer keeps its text, by kind of request, and the redaction applied there. Only
//! text a person or a model reads is rewritten: a call's text content and the string values
//! of its `structuredContent`, a read's text contents, a prompt's text messages. Everything
//! else (keys, URIs, MIME types, images' base64) is left exactly as the server sent it, so the
//! result keeps the shape the host checks a mutation against.

use serde_json::Value;

use crate::scan::{Counts, redact};

/// Which MCP request the answer is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Call,
    Read,
    Prompt,
}

/// Redacts `answer` in place; what was replaced.
pub fn redact_answer(kind: Kind, answer: &mut Value) -> Counts {
    let mut counts = Counts::default();
    match kind {
        Kind::Call => {
            for block in items(answer, "content") {
                content_block(block, &mut counts);
            }
            if let Some(structured) = answer.get_mut("structuredContent") {
                every_string(structured, &mut counts);
            }
        }
        Kind::Read => {
            for contents in items(answer, "contents") {
                text_field(contents, &mut counts);
            }
        }
        Kind::Prompt => {
            for message in items(answer, "messages") {
                match message.get_mut("content") {
                    Some(Value::Array(blocks)) => {
                        blocks.iter_mut().for_each(|b| content_block(b, &mut counts))
                    }
                    Some(block) => content_block(block, &mut counts),
                    None => {}
                }
            }
        }
    }
    counts
}

/// The elements of the array `answer[key]`; none when it is missing or not an array.
fn items<'a>(answer: &'a mut Value, key: &str) -> impl Iterator<Item = &'a mut Value> {
    answer.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten()
}

/// One content block: a text block's `text`, an embedded resource's text contents.
fn content_block(block: &mut Value, counts: &mut Counts) {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => text_field(block, counts),
        Some("resource") => {
            if let Some(resource) = block.get_mut("resource") {
                text_field(resource, counts);
            }
        }
        _ => {}
    }
}

fn text_field(holder: &mut Value, counts: &mut Counts) {
    if let Some(Value::String(text)) = holder.get_mut("text") {
        redact_string(text, counts);
    }
}

/// Every string value at any depth (object keys are names, not data, and stay).
fn every_string(value: &mut Value, counts: &mut Counts) {
    match value {
        Value::String(text) => redact_string(text, counts),
        Value::Array(values) => values.iter_mut().for_each(|v| every_string(v, counts)),
        Value::Object(map) => map.values_mut().for_each(|v| every_string(v, counts)),
        _ => {}
    }
}

fn redact_string(text: &mut String, counts: &mut Counts) {
    let (redacted, found) = redact(text);
    if found.total() > 0 {
        *text = redacted.into_owned();
        counts.add(found);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_call_result_is_redacted_in_its_text_and_structured_content() {
        let mut answer = json!({
            "content": [
                {"type": "text", "text": "write to ana@example.com"},
                {"type": "image", "data": "ana@example.com", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "mem://bo@example.com", "text": "bo@example.com"}},
            ],
            "structuredContent": {"ana@example.com": ["+44 20 7946 0958", 7, {"card": "4111 1111 1111 1111"}]},
            "isError": false,
        });
        let counts = redact_answer(Kind::Call, &mut answer);
        assert_eq!(counts, Counts { emails: 2, phones: 1, cards: 1 });
        assert_eq!(
            answer,
            json!({
                "content": [
                    {"type": "text", "text": "write to [email]"},
                    {"type": "image", "data": "ana@example.com", "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "mem://bo@example.com", "text": "[email]"}},
                ],
                "structuredContent": {"ana@example.com": ["[phone]", 7, {"card": "[card]"}]},
                "isError": false,
            })
        );
    }

    #[test]
    fn a_read_result_is_redacted_in_its_text_contents() {
        let mut answer = json!({"contents": [
            {"uri": "file:///a", "text": "call 555-123-4567"},
            {"uri": "file:///b", "blob": "NTU1LTEyMy00NTY3"},
        ]});
        assert_eq!(redact_answer(Kind::Read, &mut answer).phones, 1);
        assert_eq!(answer["contents"][0]["text"], "call [phone]");
        assert_eq!(answer["contents"][1]["blob"], "NTU1LTEyMy00NTY3");
    }

    #[test]
    fn a_prompt_is_redacted_in_its_messages() {
        let mut answer = json!({"description": "ana@example.com", "messages": [
            {"role": "user", "content": {"type": "text", "text": "I am ana@example.com"}},
            {"role": "user", "content": [{"type": "text", "text": "card 4111-1111-1111-1111"}]},
        ]});
        assert_eq!(redact_answer(Kind::Prompt, &mut answer).total(), 2);
        assert_eq!(answer["messages"][0]["content"]["text"], "I am [email]");
        assert_eq!(answer["messages"][1]["content"][0]["text"], "card [card]");
        assert_eq!(answer["description"], "ana@example.com");
    }

    #[test]
    fn answers_of_an_unexpected_shape_are_left_alone() {
        for mut answer in
            [json!(null), json!({"content": 5}), json!({"contents": "x@example.com"}), json!([1])]
        {
            let before = answer.clone();
            assert_eq!(redact_answer(Kind::Call, &mut answer).total(), 0);
            assert_eq!(redact_answer(Kind::Read, &mut answer).total(), 0);
            assert_eq!(answer, before);
        }
    }
}
