//! Pins of the servers' tool definitions (`.toolport/tools.lock`): what a tool looked like when
//! it was first seen or last approved, and the verdict on the tool as listed now. A server that
//! quietly rewrites a description after it was trusted (a "rug pull") then loses that tool
//! until a person looks at the change (`toolport mcp diff`) and accepts it
//! (`toolport mcp approve`).
//!
//! The lock keeps each pinned definition whole, not only its digest, so the change can be
//! shown word by word offline and on another machine (the file is meant to be committed).
//! Pure: the caller reads and writes the file and hands the definitions in.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::config::{ConfigError, TrustMode, parse_json};

/// The lock format this toolport writes. It reads version 1 too (toolport before issue 44):
/// such a lock's pins are all of [`FORM_1`].
pub const LOCK_VERSION: u64 = 2;

/// The canonical form of a pin written by toolport before issue 44: [`FORM_1_FIELDS`] only.
pub const FORM_1: u64 = 1;

/// The canonical form this toolport pins: every field of the tool as listed (what `serve`
/// forwards) but its name, the key it is pinned under. `_meta` (an app's `ui.resourceUri`) and
/// `icons` are covered; so is whatever field rmcp's `Tool` gains later.
pub const FORM: u64 = 2;

/// The fields a [`FORM_1`] pin covers.
pub const FORM_1_FIELDS: [&str; 5] = ["annotations", "description", "inputSchema", "outputSchema", "title"];

/// `tools.lock` as a whole. Maps are ordered by key, so the same pins always write the same
/// bytes (a committed lock changes only where a pin did).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// [`LOCK_VERSION`].
    pub version: u64,
    /// Per server (its name in the config), its pins.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerPins>,
}

impl Default for Lock {
    fn default() -> Self {
        Self { version: LOCK_VERSION, servers: BTreeMap::new() }
    }
}

/// One server's pins.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerPins {
    /// Its `instructions` (the definition is the text itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Pin>,
    /// Each tool under the server's own name for it.
    #[serde(default)]
    pub tools: BTreeMap<String, Pin>,
}

/// One pinned definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// The canonical form `definition` is in: [`FORM`], or [`FORM_1`] (absent: a pin written
    /// by toolport before issue 44).
    #[serde(default = "form_1")]
    pub form: u64,
    /// `sha256:<hex>` of the canonical JSON of `definition`.
    pub digest: String,
    /// The definition as pinned: the tool as listed but its name (its [`FORM_1_FIELDS`] only in
    /// a [`FORM_1`] pin), keys sorted at every depth; or a string (instructions).
    pub definition: Value,
    /// Rule ids of `high` findings a person accepted for this very definition
    /// (`toolport mcp approve`): they no longer hold it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted: Vec<String>,
}

impl Pin {
    /// The pin of `tool` as listed now, accepting the rule ids in `high` (what an approval
    /// writes).
    pub fn of_tool(tool: &Tool, high: &[String]) -> Pin {
        let definition = definition(tool);
        Pin { form: FORM, digest: digest(&definition), definition, accepted: sorted(high) }
    }

    /// The pin of a server's `instructions`.
    pub fn of_instructions(text: &str) -> Pin {
        let definition = Value::String(text.to_string());
        Pin { form: FORM, digest: digest(&definition), definition, accepted: Vec::new() }
    }

    /// Whether `self` (a tool as listed now) is what `old`, a [`FORM_1`] pin, pinned, as far as
    /// that form covers: only the fields it left out can differ, so `self` may replace it
    /// silently (what `old`'s toolport would have let through on this definition).
    pub fn upgrades(&self, old: &Pin) -> bool {
        old.form == FORM_1 && self.form == FORM && old.digest == digest(&form_1_part(&self.definition))
    }
}

fn form_1() -> u64 {
    FORM_1
}

impl Lock {
    /// Reads the lock's text; `path` is for messages. Empty text is an empty lock. A syntax
    /// or shape error names `path:line:column`, and a version this toolport does not know is
    /// refused: the caller must never write over a lock it could not read.
    pub fn parse(path: &Path, text: &str) -> Result<Lock, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Lock::default());
        }
        parse_json(path, text)?;
        let lock: Lock = serde_json::from_str(text).map_err(|e| {
            let full = e.to_string();
            let what = full.rsplit_once(" at line ").map_or(full.as_str(), |(w, _)| w);
            ConfigError(format!("{}:{}:{}: {what}", path.display(), e.line(), e.column()))
        })?;
        if lock.version != LOCK_VERSION && lock.version != 1 {
            return Err(ConfigError(format!(
                "{}: \"version\" is {}, but this toolport reads versions 1 and {LOCK_VERSION} only",
                path.display(),
                lock.version
            )));
        }
        // Written as this version from now on; a version 1 lock's pins say they are FORM_1
        // each (their `form` is absent), so nothing is lost.
        Ok(Lock { version: LOCK_VERSION, ..lock })
    }

    /// The lock as written: two-space pretty JSON, keys in a fixed order, a final newline.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// `server`'s pins, if it has any.
    pub fn server(&self, server: &str) -> Option<&ServerPins> {
        self.servers.get(server)
    }

    /// `tool`'s pin of `server`.
    pub fn tool(&self, server: &str, tool: &str) -> Option<&Pin> {
        self.server(server)?.tools.get(tool)
    }
}

/// Why a tool is held: it is not on the surface until a person approves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldReason {
    /// Its definition differs from the pinned one.
    Changed,
    /// `trust: "strict"` and the lock does not name it.
    NotPinned,
    /// Findings at `high` not accepted for this definition (rule ids, sorted).
    Finding(Vec<String>),
    /// Not pinned itself, on a server with pins, and its name's confusable skeleton (Unicode
    /// TR39) is that of a pinned tool's name: a look-alike (`notes_purgе`, a Cyrillic `е`,
    /// beside a pinned `notes_purge`) that would pass for the tool a person trusted.
    LookAlike {
        /// The pinned tool it looks like.
        pinned: String,
        /// The characters the two names do not share, as `U+0435`.
        differs: Vec<String>,
    },
    /// `trust: "strict"`, and its pin is of [`FORM_1`]: it matches on what that pin covers,
    /// but its `_meta` and `icons` were never pinned (under `pin` it is re-pinned silently).
    OldPin,
}

impl HoldReason {
    /// How the status view says it: `changed since pinned`, `not pinned`, `finding TP003`.
    pub fn phrase(&self) -> String {
        match self {
            Self::Changed => "changed since pinned".to_string(),
            Self::NotPinned => "not pinned".to_string(),
            Self::Finding(rules) => format!("finding {}", rules.join(", ")),
            Self::LookAlike { pinned, differs } => {
                format!("looks like pinned {pinned}, differs in {}", differs.join(" "))
            }
            Self::OldPin => "pinned by an older toolport, without _meta and icons".to_string(),
        }
    }

    /// The rule the audit trail records: `pin-changed`, `pin-unknown`, or the first finding's.
    pub fn rule(&self) -> &str {
        match self {
            Self::Changed => "pin-changed",
            Self::NotPinned => "pin-unknown",
            Self::Finding(rules) => rules.first().map_or("finding", String::as_str),
            Self::LookAlike { .. } => "pin-lookalike",
            Self::OldPin => "pin-old-form",
        }
    }
}

/// The verdict on one tool as listed now.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// On the surface; `record` is a first sight to write into the lock.
    Pass {
        /// The pin to record (trust `pin`, a tool the lock does not name yet).
        record: Option<Pin>,
    },
    /// Off the surface.
    Held(HoldReason),
}

/// The verdict on a tool whose pin as listed now is `current` (its `accepted` being the rule
/// ids of its `high` findings, see [`Pin::of_tool`]) against `pinned`, the lock's.
/// `lookalike`: for a tool without a pin, the held reason if its name looks like a pinned
/// one's (see `lookalike.rs`).
///
/// A tool seen for the first time with a `high` finding is held and not recorded: recording it
/// would make the poisoned text the trusted one. A [`FORM_1`] pin that `current` upgrades is
/// replaced by `current` under `pin` (recorded like a first sight) and held under `strict`.
pub fn verdict(
    mode: TrustMode,
    pinned: Option<&Pin>,
    current: &Pin,
    lookalike: Option<HoldReason>,
) -> Verdict {
    match (mode, pinned) {
        (TrustMode::Off, _) => Verdict::Pass { record: None },
        (_, Some(pin)) if pin.digest == current.digest && pin.form == current.form => {
            match open_findings(pin, current) {
                None => Verdict::Pass { record: None },
                Some(reason) => Verdict::Held(reason),
            }
        }
        (TrustMode::Strict, Some(pin)) if current.upgrades(pin) => Verdict::Held(HoldReason::OldPin),
        (_, Some(pin)) if current.upgrades(pin) => match open_findings(pin, current) {
            None => Verdict::Pass { record: Some(Pin { accepted: pin.accepted.clone(), ..current.clone() }) },
            Some(reason) => Verdict::Held(reason),
        },
        (_, Some(_)) => Verdict::Held(HoldReason::Changed),
        (_, None) => match (mode, lookalike) {
            (_, Some(reason)) => Verdict::Held(reason),
            (TrustMode::Strict, None) => Verdict::Held(HoldReason::NotPinned),
            _ if !current.accepted.is_empty() => Verdict::Held(HoldReason::Finding(current.accepted.clone())),
            _ => Verdict::Pass { record: Some(Pin { accepted: Vec::new(), ..current.clone() }) },
        },
    }
}

/// The `high` findings of `current` that `pin` did not accept, as a held reason.
fn open_findings(pin: &Pin, current: &Pin) -> Option<HoldReason> {
    let accepted: BTreeSet<&String> = pin.accepted.iter().collect();
    let open: Vec<String> = current.accepted.iter().filter(|r| !accepted.contains(r)).cloned().collect();
    (!open.is_empty()).then_some(HoldReason::Finding(open))
}

/// What became of a server's `instructions` against the lock.
#[derive(Debug, Clone, PartialEq)]
pub enum InstructionsVerdict {
    /// As pinned, none given, or trust `off`.
    Same,
    /// Seen for the first time under trust `pin`: record it.
    New(Pin),
    /// Different from the pinned text (or unpinned under `strict`). Toolport passes a server's
    /// instructions to no client, so nothing is held: `mcp list` warns and `mcp diff` shows it.
    Changed,
}

/// The verdict on a server's `instructions` as given now.
pub fn instructions_verdict(
    mode: TrustMode,
    pinned: Option<&Pin>,
    text: Option<&str>,
) -> InstructionsVerdict {
    let Some(text) = text.filter(|_| mode != TrustMode::Off) else { return InstructionsVerdict::Same };
    let current = Pin::of_instructions(text);
    match (mode, pinned) {
        (_, Some(pin)) if pin.digest == current.digest => InstructionsVerdict::Same,
        (_, Some(_)) | (TrustMode::Strict, None) => InstructionsVerdict::Changed,
        (_, None) => InstructionsVerdict::New(current),
    }
}

/// The pinned part of `tool` ([`FORM`]): every field but `name` that is present, keys sorted
/// at every depth.
pub fn definition(tool: &Tool) -> Value {
    let whole = serde_json::to_value(tool).unwrap_or_default();
    let mut out = Map::new();
    if let Value::Object(fields) = whole {
        for (field, value) in fields.iter().filter(|(k, v)| *k != "name" && !v.is_null()) {
            out.insert(field.clone(), canonical(value));
        }
    }
    canonical(&Value::Object(out))
}

/// What a [`FORM_1`] pin would have held of `definition` (a [`FORM`] one).
fn form_1_part(definition: &Value) -> Value {
    let mut out = Map::new();
    for field in FORM_1_FIELDS {
        if let Some(value) = definition.get(field) {
            out.insert(field.to_string(), value.clone());
        }
    }
    Value::Object(out)
}

/// `sha256:<hex>` over the compact canonical JSON of `definition`.
pub fn digest(definition: &Value) -> String {
    let bytes = serde_json::to_vec(&canonical(definition)).unwrap_or_default();
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// `value` with every object's keys in sorted order, so equal definitions serialize to equal
/// bytes whatever order the server sent them in.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), canonical(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

fn sorted(rules: &[String]) -> Vec<String> {
    rules.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect()
}

#[cfg(test)]
#[path = "pins_tests.rs"]
mod tests;
