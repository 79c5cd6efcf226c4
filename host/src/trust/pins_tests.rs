use std::path::Path;

use rmcp::model::Tool;
use serde_json::json;

use super::*;

fn tool(value: Value) -> Tool {
    serde_json::from_value(value).unwrap_or_else(|e| panic!("not a tool: {e}"))
}

fn notes(description: &str) -> Tool {
    tool(json!({"name": "read_notes", "description": description, "inputSchema": {"type": "object"}}))
}

#[test]
fn the_digest_ignores_key_order_and_the_name_but_not_the_text() {
    let a = tool(
        json!({"name": "a", "description": "d", "inputSchema": {"type": "object", "properties": {"x": {"type": "string", "description": "x"}}}}),
    );
    let b = tool(
        json!({"name": "b", "inputSchema": {"properties": {"x": {"description": "x", "type": "string"}}, "type": "object"}, "description": "d"}),
    );
    assert_eq!(Pin::of_tool(&a, &[]).digest, Pin::of_tool(&b, &[]).digest);
    assert_ne!(Pin::of_tool(&notes("d"), &[]).digest, Pin::of_tool(&notes("d "), &[]).digest);
    assert!(Pin::of_tool(&a, &[]).digest.starts_with("sha256:"));
    assert_eq!(definition(&notes("d")), json!({"description": "d", "inputSchema": {"type": "object"}}));
    // Every field but the name: `_meta` and `icons` too.
    let app = tool(
        json!({"name": "a", "inputSchema": {}, "_meta": {"ui": {"resourceUri": "ui://a"}}, "icons": [{"src": "https://a/i.png"}]}),
    );
    assert_eq!(
        definition(&app),
        json!({"_meta": {"ui": {"resourceUri": "ui://a"}}, "icons": [{"src": "https://a/i.png"}], "inputSchema": {}})
    );
}

#[test]
fn verdicts_per_mode() {
    let now = Pin::of_tool(&notes("Reads notes."), &[]);
    let old = Pin::of_tool(&notes("Reads the notes."), &[]);
    assert_eq!(verdict(TrustMode::Pin, None, &now, None), Verdict::Pass { record: Some(now.clone()) });
    assert_eq!(verdict(TrustMode::Pin, Some(&now), &now, None), Verdict::Pass { record: None });
    assert_eq!(verdict(TrustMode::Pin, Some(&old), &now, None), Verdict::Held(HoldReason::Changed));
    assert_eq!(verdict(TrustMode::Strict, None, &now, None), Verdict::Held(HoldReason::NotPinned));
    assert_eq!(verdict(TrustMode::Strict, Some(&old), &now, None), Verdict::Held(HoldReason::Changed));
    assert_eq!(verdict(TrustMode::Off, Some(&old), &now, None), Verdict::Pass { record: None });
}

#[test]
fn a_high_finding_holds_until_accepted_for_that_definition() {
    let flagged = Pin::of_tool(&notes("Reads notes."), &["TP003".to_string()]);
    // First sight: held, and not recorded (the poisoned text must not become the trusted one).
    assert_eq!(
        verdict(TrustMode::Pin, None, &flagged, None),
        Verdict::Held(HoldReason::Finding(vec!["TP003".into()]))
    );
    // Pinned before the rule existed: still held.
    let plain = Pin { accepted: Vec::new(), ..flagged.clone() };
    assert_eq!(
        verdict(TrustMode::Pin, Some(&plain), &flagged, None),
        Verdict::Held(HoldReason::Finding(vec!["TP003".into()]))
    );
    // Approved with it: passes; a second rule is held again.
    assert_eq!(verdict(TrustMode::Pin, Some(&flagged), &flagged, None), Verdict::Pass { record: None });
    let two = Pin::of_tool(&notes("Reads notes."), &["TP001".to_string(), "TP003".to_string()]);
    assert_eq!(
        verdict(TrustMode::Pin, Some(&flagged), &two, None),
        Verdict::Held(HoldReason::Finding(vec!["TP001".into()]))
    );
    assert_eq!(verdict(TrustMode::Off, None, &flagged, None), Verdict::Pass { record: None });
}

#[test]
fn instructions_are_recorded_then_compared() {
    let pin = Pin::of_instructions("Use me.");
    assert_eq!(
        instructions_verdict(TrustMode::Pin, None, Some("Use me.")),
        InstructionsVerdict::New(pin.clone())
    );
    assert_eq!(instructions_verdict(TrustMode::Pin, Some(&pin), Some("Use me.")), InstructionsVerdict::Same);
    assert_eq!(
        instructions_verdict(TrustMode::Pin, Some(&pin), Some("Use only me.")),
        InstructionsVerdict::Changed
    );
    assert_eq!(instructions_verdict(TrustMode::Strict, None, Some("Use me.")), InstructionsVerdict::Changed);
    assert_eq!(instructions_verdict(TrustMode::Off, Some(&pin), Some("x")), InstructionsVerdict::Same);
    assert_eq!(instructions_verdict(TrustMode::Pin, Some(&pin), None), InstructionsVerdict::Same);
}

#[test]
fn the_lock_round_trips_in_a_stable_order() -> Result<(), ConfigError> {
    let mut lock = Lock::default();
    let pins = lock.servers.entry("notes".into()).or_default();
    pins.tools.insert("sync".into(), Pin::of_tool(&notes("b"), &[]));
    pins.tools.insert("read_notes".into(), Pin::of_tool(&notes("a"), &["TP003".into()]));
    let text = lock.render();
    assert!(text.starts_with("{\n  \"version\": 2,\n  \"servers\": {\n    \"notes\": {\n      \"tools\": {\n        \"read_notes\": {\n          \"form\": 2,\n          \"digest\": \"sha256:"), "{text}");
    assert!(text.find("\"read_notes\"") < text.find("\"sync\""));
    assert!(text.contains("\"accepted\": [\n            \"TP003\"\n          ]"), "{text}");
    assert_eq!(Lock::parse(Path::new("/w/tools.lock"), &text)?, lock);
    assert_eq!(Lock::parse(Path::new("/w/tools.lock"), " \n")?, Lock::default());
    Ok(())
}

#[test]
fn a_malformed_lock_names_the_file_line_and_column() {
    let err = |text: &str| Lock::parse(Path::new("/w/.toolport/tools.lock"), text).err().map(|e| e.0);
    assert_eq!(
        err("{\n  \"version\": 1,\n  \"servers\": {\n"),
        Some("/w/.toolport/tools.lock:4:0: EOF while parsing an object".into())
    );
    assert_eq!(
        err("{\n  \"version\": 1,\n  \"servers\": {\"s\": {\"tools\": {\"t\": {\"digest\": 5}}}}\n}"),
        Some("/w/.toolport/tools.lock:3:47: invalid type: integer `5`, expected a string".into())
    );
    assert_eq!(
        err("{\"servers\": {}}"),
        Some("/w/.toolport/tools.lock:1:15: missing field `version`".into())
    );
    assert_eq!(
        err("{\"version\": 3}"),
        Some(
            "/w/.toolport/tools.lock: \"version\" is 3, but this toolport reads versions 1 and 2 only".into()
        )
    );
}

#[test]
fn hold_reasons_read_as_the_status_view_says_them() {
    assert_eq!(HoldReason::Changed.phrase(), "changed since pinned");
    assert_eq!(HoldReason::NotPinned.phrase(), "not pinned");
    assert_eq!(HoldReason::Finding(vec!["TP003".into()]).phrase(), "finding TP003");
    assert_eq!(HoldReason::Finding(vec!["TP003".into()]).rule(), "TP003");
    assert_eq!(HoldReason::Changed.rule(), "pin-changed");
    assert_eq!(HoldReason::OldPin.phrase(), "pinned by an older toolport, without _meta and icons");
    let lookalike = HoldReason::LookAlike { pinned: "notes_purge".into(), differs: vec!["U+0435".into()] };
    assert_eq!(lookalike.phrase(), "looks like pinned notes_purge, differs in U+0435");
    assert_eq!(lookalike.rule(), "pin-lookalike");
}

/// A pin as toolport before issue 44 wrote it: the old fields of `tool` only, no `form`.
fn form_1_pin(tool: &Tool) -> Pin {
    let mut definition = definition(tool);
    if let Value::Object(fields) = &mut definition {
        fields.retain(|k, _| FORM_1_FIELDS.contains(&k.as_str()));
    }
    Pin { form: FORM_1, digest: digest(&definition), definition, accepted: Vec::new() }
}

#[test]
fn a_form_1_pin_is_upgraded_under_pin_held_under_strict_and_a_change_is_a_change() {
    let app = |uri: &str, text: &str| {
        tool(
            json!({"name": "read_notes", "description": text, "inputSchema": {}, "_meta": {"ui": {"resourceUri": uri}}}),
        )
    };
    let old = form_1_pin(&app("ui://a", "Reads."));
    let now = Pin::of_tool(&app("ui://b", "Reads."), &[]);
    assert!(now.upgrades(&old));
    assert_eq!(verdict(TrustMode::Pin, Some(&old), &now, None), Verdict::Pass { record: Some(now.clone()) });
    assert_eq!(verdict(TrustMode::Strict, Some(&old), &now, None), Verdict::Held(HoldReason::OldPin));
    let changed = Pin::of_tool(&app("ui://a", "Reads and mails."), &[]);
    assert_eq!(verdict(TrustMode::Pin, Some(&old), &changed, None), Verdict::Held(HoldReason::Changed));
    // A FORM pin is never upgraded: a tool that gains `_meta` is a change.
    let plain = Pin::of_tool(&notes("Reads."), &[]);
    let gained = Pin::of_tool(
        &tool(
            json!({"name": "read_notes", "description": "Reads.", "inputSchema": {"type": "object"}, "_meta": {"x": 1}}),
        ),
        &[],
    );
    assert!(!gained.upgrades(&plain));
    assert_eq!(verdict(TrustMode::Pin, Some(&plain), &gained, None), Verdict::Held(HoldReason::Changed));
    // The old pin's accepted findings carry over; a new one still holds.
    let accepted = Pin { accepted: vec!["TP003".into()], ..old.clone() };
    let flagged = Pin::of_tool(&app("ui://a", "Reads."), &["TP003".into()]);
    assert_eq!(
        verdict(TrustMode::Pin, Some(&accepted), &flagged, None),
        Verdict::Pass { record: Some(flagged.clone()) }
    );
    let two = Pin::of_tool(&app("ui://a", "Reads."), &["TP001".into(), "TP003".into()]);
    assert_eq!(
        verdict(TrustMode::Pin, Some(&accepted), &two, None),
        Verdict::Held(HoldReason::Finding(vec!["TP001".into()]))
    );
    // A version 1 lock reads, its pins as FORM_1.
    let text = serde_json::json!({"version": 1, "servers": {"notes": {"tools": {"read_notes": {"digest": old.digest, "definition": old.definition}}}}}).to_string();
    let lock = Lock::parse(Path::new("/w/tools.lock"), &text).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!((lock.version, lock.tool("notes", "read_notes")), (LOCK_VERSION, Some(&old)));
}

#[test]
fn a_look_alike_without_a_pin_of_its_own_is_held_in_either_mode() {
    let now = Pin::of_tool(&notes("Reads notes."), &[]);
    let lookalike = HoldReason::LookAlike { pinned: "notes_purge".into(), differs: vec!["U+0435".into()] };
    for mode in [TrustMode::Pin, TrustMode::Strict] {
        assert_eq!(verdict(mode, None, &now, Some(lookalike.clone())), Verdict::Held(lookalike.clone()));
    }
    assert_eq!(verdict(TrustMode::Off, None, &now, Some(lookalike)), Verdict::Pass { record: None });
}
